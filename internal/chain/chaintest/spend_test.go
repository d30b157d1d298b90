package chaintest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// spendNode is a node with one pool of two tokens at tick 0, a V2 handler
// its position manager whitelists, and a depositor holding balance of
// token0; deposit is the position manager's multicall minting liquidity
// into the range [60, 120], above the price (it pulls token0 only).
func spendNode(t *testing.T, balance *big.Int) (n *Node, signer, pm, token0 common.Address, deposit []byte, pull *big.Int) {
	t.Helper()
	n = NewNode(t)
	signer, pm, token0 = common.HexToAddress("0xA11CE"), common.HexToAddress("0x9A"), common.HexToAddress("0x70")
	token1, pool, handler := common.HexToAddress("0x71"), common.HexToAddress("0x900"), common.HexToAddress("0x4A")
	sqrt, err := clamm.SqrtRatioAtTick(0)
	if err != nil {
		t.Fatal(err)
	}
	n.Tokens[token0] = &Token{Decimals: 18, Symbol: "A"}
	n.Tokens[token1] = &Token{Decimals: 6, Symbol: "B"}
	n.Tokens[token0].SetBalance(signer, balance)
	n.Pools[pool] = &Pool{Token0: token0, Token1: token1, Fee: 3000, TickSpacing: 60, SqrtPriceX96: sqrt.Add(sqrt, big.NewInt(1))}
	n.Handlers[handler] = &Handler{Version: 2, LP: &HandlerLP{LockedBlockDuration: 100}}
	n.PositionManagers[pm] = &PositionManager{}
	n.PositionManagers[pm].Allow(handler, common.HexToAddress("0x3A"))
	pos := contracts.Position{Handler: handler, Pool: pool, TickLower: 60, TickUpper: 120}
	mint, err := pos.MintCall(big.NewInt(1e15))
	if err != nil {
		t.Fatal(err)
	}
	if deposit, err = contracts.MulticallCall([][]byte{mint}); err != nil {
		t.Fatal(err)
	}
	payload, _ := pos.Payload(big.NewInt(1e15))
	asked, _ := contracts.TokensToPullCall(payload)
	ret, ok := n.Call(handler, asked)
	amounts, err := contracts.UnpackTokensToPull(ret)
	if !ok || err != nil || amounts[0].Sign() == 0 || amounts[1].Sign() != 0 {
		t.Fatalf("tokensToPullForMint: %v %v %v", ok, amounts, err)
	}
	return n, signer, pm, token0, deposit, amounts[0]
}

func approve(_ *testing.T, spender common.Address, amount *big.Int) []byte {
	return contracts.ApproveCall(spender, amount)
}

// run sends steps through the spend probe and decodes their outcomes.
func run(t *testing.T, n *Node, signer, token common.Address, steps ...contracts.ProbeStep) []contracts.ProbeOutcome {
	t.Helper()
	out, ok := n.spendProbe(signer, contracts.ProbeRun{Steps: steps, Tokens: []common.Address{token}}, n.BlockNumber+1)
	if !ok {
		t.Fatal("the probe did not answer")
	}
	outs, err := contracts.UnpackProbe(out)
	if err != nil || len(outs) != len(steps) {
		t.Fatalf("%d outcomes for %d steps: %v", len(outs), len(steps), err)
	}
	return outs
}

// The spend probe runs a deposit's approval and multicall as the token
// would: the approval simulated before it is the allowance the pull
// spends, the balance is what is pulled from, each pull lowers both for
// the steps after it, a short allowance or balance reverts with
// OpenZeppelin's reason (the allowance checked first), a reverted step
// leaves nothing, and the node's own balances are never changed.
func TestSpendProbeFollowsTheTokens(t *testing.T) {
	reason := func(o contracts.ProbeOutcome) string {
		if o.OK {
			return "ok"
		}
		s, err := abi.UnpackRevert(o.Return)
		if err != nil {
			return "undecodable"
		}
		return s
	}
	n, signer, pm, token0, deposit, pull := spendNode(t, big.NewInt(0))
	twice := new(big.Int).Mul(pull, big.NewInt(2))
	step := func(to common.Address, data []byte) contracts.ProbeStep {
		return contracts.ProbeStep{Target: to, Data: data}
	}
	cases := []struct {
		name    string
		balance *big.Int
		steps   []contracts.ProbeStep
		want    []string
	}{
		{"no approval", twice, []contracts.ProbeStep{step(pm, deposit)}, []string{"ERC20: insufficient allowance"}},
		{"approval one short", twice, []contracts.ProbeStep{step(token0, approve(t, pm, new(big.Int).Sub(pull, big.NewInt(1)))), step(pm, deposit)},
			[]string{"ok", "ERC20: insufficient allowance"}},
		{"balance one short", new(big.Int).Sub(pull, big.NewInt(1)), []contracts.ProbeStep{step(token0, approve(t, pm, pull)), step(pm, deposit)},
			[]string{"ok", "ERC20: transfer amount exceeds balance"}},
		{"no balance", new(big.Int), []contracts.ProbeStep{step(token0, approve(t, pm, pull)), step(pm, deposit)},
			[]string{"ok", "ERC20: transfer amount exceeds balance"}},
		{"exactly enough", pull, []contracts.ProbeStep{step(token0, approve(t, pm, pull)), step(pm, deposit)}, []string{"ok", "ok"}},
		{"the allowance is spent", twice, []contracts.ProbeStep{step(token0, approve(t, pm, pull)), step(pm, deposit), step(pm, deposit)},
			[]string{"ok", "ok", "ERC20: insufficient allowance"}},
		{"the balance is spent", new(big.Int).Add(pull, big.NewInt(1)), []contracts.ProbeStep{step(token0, approve(t, pm, twice)), step(pm, deposit), step(pm, deposit)},
			[]string{"ok", "ok", "ERC20: transfer amount exceeds balance"}},
		{"a revert leaves nothing", twice, []contracts.ProbeStep{step(pm, deposit), step(token0, approve(t, pm, twice)), step(pm, deposit), step(pm, deposit)},
			[]string{"ERC20: insufficient allowance", "ok", "ok", "ok"}},
		{"an unlimited allowance stays", twice, []contracts.ProbeStep{step(token0, approve(t, pm, maxUint256)), step(pm, deposit), step(pm, deposit)},
			[]string{"ok", "ok", "ok"}},
	}
	for _, c := range cases {
		n.Tokens[token0].SetBalance(signer, c.balance)
		outs := run(t, n, signer, token0, c.steps...)
		for i, o := range outs {
			if got := reason(o); got != c.want[i] {
				t.Errorf("%s: step %d: %s, want %s", c.name, i, got, c.want[i])
			}
			wantDelta := new(big.Int)
			if o.OK && c.steps[i].Target == pm {
				wantDelta.Neg(pull)
			}
			if o.TokenDeltas[0].Cmp(wantDelta) != 0 {
				t.Errorf("%s: step %d moved %s, want %s", c.name, i, o.TokenDeltas[0], wantDelta)
			}
		}
		if got := n.Tokens[token0].balanceOf(signer); got.Cmp(c.balance) != 0 {
			t.Errorf("%s: the node's balance became %s", c.name, got)
		}
		if got := n.Tokens[token0].allowance(signer, pm); got.Sign() != 0 {
			t.Errorf("%s: the node's allowance became %s", c.name, got)
		}
	}
}

// A mint into an empty range mints its liquidity as shares; a second in
// the same run, into the supply the first made, mints by convertToShares
// (rounded down: one share fewer, the + 1 of the handler's division).
func TestSpendProbeMintsShares(t *testing.T) {
	n, signer, pm, token0, deposit, pull := spendNode(t, big.NewInt(1e18))
	twice := new(big.Int).Mul(pull, big.NewInt(2))
	outs := run(t, n, signer, token0, contracts.ProbeStep{Target: token0, Data: approve(t, pm, twice)},
		contracts.ProbeStep{Target: pm, Data: deposit}, contracts.ProbeStep{Target: pm, Data: deposit})
	var shares []*big.Int
	for _, o := range outs[1:] {
		s, err := contracts.MintedShares(o.Return)
		if !o.OK || err != nil || len(s) != 1 {
			t.Fatalf("%+v %v", o, err)
		}
		shares = append(shares, s[0])
	}
	liquidity, err := clamm.LiquidityForAmount(60, 120, pull, true)
	if err != nil {
		t.Fatal(err)
	}
	// what the pull buys back: at most the 1e15 asked, short of it by less
	// than one base unit of the pull is worth in liquidity (its rounding)
	perUnit := new(big.Int).Quo(big.NewInt(1e15), pull)
	if short := new(big.Int).Sub(big.NewInt(1e15), liquidity); short.Sign() < 0 || short.Cmp(perUnit.Add(perUnit, big.NewInt(1))) > 0 {
		t.Fatalf("the pull buys %s liquidity of the 1e15 asked", liquidity)
	}
	if shares[0].Cmp(liquidity) != 0 || new(big.Int).Sub(shares[0], shares[1]).Cmp(big.NewInt(1)) != 0 {
		t.Errorf("shares %v, want %s then one fewer", shares, liquidity)
	}
}
