package protocoltest

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
)

// The 2025 generation, as stryke-xyz/clamm 80766cc has it: the V3 handler
// takes deposits only in pools of its whitelistedPools; a liquidity
// provider reserves and withdraws reserved liquidity only through the
// position manager V2 (the handler refuses the provider itself, and the
// position manager V2 refuses a handler it has not whitelisted), which
// passes the provider as the account: the handler's events, reservation
// record and payments name the provider, and the position manager V2 logs
// nothing of its own; a V2 market on the position manager V2 buys and
// exercises the V3 handler's liquidity.
func TestV3Stack(t *testing.T) {
	p := Deploy(t, Config{})
	p.DeployV3()
	v := p.V3
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	r := Range{Handler: v.Handler, TickLower: tick + 100, TickUpper: tick + 110}

	other := p.AddPool(3000, tick)
	elsewhere := Range{Handler: v.Handler, Pool: other, TickLower: (tick/60 + 2) * 60, TickUpper: (tick/60 + 3) * 60}
	if _, _, err := p.Deposit(lp, elsewhere, e18(1)); !IsRevert(err, "UniswapV3SingleTickLiquidityHandlerV3__NotWhitelistedPool") {
		t.Fatalf("a deposit in a pool the handler has not listed: %v", err)
	}
	p.WhitelistPool(v.Handler, other, true)
	if _, _, err := p.Deposit(lp, elsewhere, e18(1)); err != nil {
		t.Fatalf("once listed: %v", err)
	}

	id, l, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "token id", id, p.TokenID(r))
	eq(t, "first shares = liquidity", l, p.RangeInfo(r).TotalLiquidity)
	if _, _, err := p.Deposit(p.Users[3], r, e18(1)); err != nil {
		t.Fatal(err)
	}

	// An option on the V3 liquidity, bought from the market of the
	// position manager V2 (LogUsePosition of the position manager V2).
	used := new(big.Int).Div(l, big.NewInt(2))
	opt, rc, err := p.BuyV3(buyer, Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600, Legs: []Leg{{r, used}}})
	if err != nil {
		t.Fatal(err)
	}
	if uses := p.FindAll(rc, "LogUsePosition"); len(uses) != 2 || uses[0].Address != v.Handler || uses[1].Address != v.PositionManager {
		t.Fatalf("use logged by %v", uses)
	}
	eq(t, "liquidityUsed", p.RangeInfo(r).LiquidityUsed, used)

	data := positionData(p.norm(r), l)
	if _, err := p.Chain.Send(lp, v.Handler, HandlerV3.ABI, "reserveLiquidity", lp.Addr, data); !IsRevert(err, "UniswapV3SingleTickLiquidityHandlerV3__NotWhitelisted") {
		t.Fatalf("a provider reserving at the handler itself: %v", err)
	}
	if _, err := p.Chain.Send(lp, v.PositionManager, PositionManagerV2.ABI, "reserveLiquidity", p.Handler, data); !IsRevert(err, "DopexV2PositionManagerV2__NotWhitelistedHandler") {
		t.Fatalf("a handler the position manager V2 has not whitelisted: %v", err)
	}

	before := p.RangeInfo(r)
	shares := new(big.Int).Div(l, big.NewInt(2))
	rc, err = p.Reserve(lp, r, shares)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range p.Events(rc) {
		if e.Address == v.PositionManager {
			t.Errorf("the position manager V2 logged %s", e.Name)
		}
		if e.Address == v.Handler {
			names = append(names, e.Name)
		}
	}
	if len(names) != 3 || names[1] != "LogBurnedPosition" || names[2] != "LogReservedLiquidity" {
		t.Fatalf("handler events %v", names)
	}
	burned := p.Find(rc, "LogBurnedPosition").Args["liquidityBurned"].(*big.Int)
	if u := p.Find(rc, "LogBurnedPosition").Args["user"]; u != lp.Addr {
		t.Fatalf("LogBurnedPosition user %v, want the provider", u)
	}
	if u := p.Find(rc, "LogReservedLiquidity").Args["user"]; u != lp.Addr {
		t.Fatalf("LogReservedLiquidity user %v, want the provider", u)
	}
	reserved := func(who *Account) *big.Int {
		return p.Chain.Call(v.Handler, HandlerV3.ABI, "reservedLiquidityPerUser", id, who.Addr)[0].(*big.Int)
	}
	eq(t, "the provider's reservation", reserved(lp), burned)
	if pmRecord := p.Chain.Call(v.Handler, HandlerV3.ABI, "reservedLiquidityPerUser", id, v.PositionManager)[0].(*big.Int); pmRecord.Sign() != 0 {
		t.Fatalf("the position manager V2 holds a reservation of %s", pmRecord)
	}
	eq(t, "totalLiquidity", p.RangeInfo(r).TotalLiquidity, sub(before.TotalLiquidity, burned))
	eq(t, "reservedLiquidity", p.RangeInfo(r).ReservedLiquidity, burned)
	checkPoolInvariant(t, p, r)

	if _, err := p.WithdrawReserved(lp, r, burned); !IsRevert(err, "UniswapV3SingleTickLiquidityHandlerV3__BeforeReserveCooldown") {
		t.Fatalf("before the cooldown: %v", err)
	}
	p.Chain.AdjustTime(6*time.Hour + time.Second)
	if _, err := p.SwapToTick(trader, 500, tick+300); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ExerciseV3(buyer, opt, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), used}}); err != nil {
		t.Fatal(err)
	}
	callBefore, putBefore := p.Balance(p.CallAsset, lp.Addr), p.Balance(p.PutAsset, lp.Addr)
	rc, err = p.WithdrawReserved(lp, r, burned)
	if err != nil {
		t.Fatal(err)
	}
	if u := p.Find(rc, "LogWithdrawReservedLiquidity").Args["user"]; u != lp.Addr {
		t.Fatalf("LogWithdrawReservedLiquidity user %v", u)
	}
	b := p.Find(rc, "Burn")
	eq(t, "call asset paid to the provider", sub(p.Balance(p.CallAsset, lp.Addr), callBefore), b.Args["amount0"].(*big.Int))
	eq(t, "put asset paid to the provider", sub(p.Balance(p.PutAsset, lp.Addr), putBefore), b.Args["amount1"].(*big.Int))
	eq(t, "reservation spent", reserved(lp), new(big.Int))
	checkPoolInvariant(t, p, r)
}

// The V3 handler re-adds compounded fees by an internal addLiquidity, so
// the pool's mint callback charges the position manager of the deposit,
// which has approved the handler only for the deposit's own amount: a
// deposit that compounds (owed fees above 1,000 units of the range's other
// token) reverts, where the V2 handler pays the re-mint from the fees it
// collected (TestFeeCompoundOnDeposit). This is the real V3's order of
// operations as its source reads (not observed on a live chain); the
// gateway's simulation of such a deposit reports the revert.
func TestV3FeeCompoundChargesThePositionManager(t *testing.T) {
	p := Deploy(t, Config{})
	p.DeployV3()
	_, tick := p.Slot0(p.Pool)
	r := Range{Handler: p.V3.Handler, TickLower: tick + 100, TickUpper: tick + 110}
	if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(p.Users[2], 500, tick+300); err != nil { // through the range: fees in token1
		t.Fatal(err)
	}
	if _, _, err := p.Deposit(p.Users[3], r, e18(1)); !IsRevert(err, "Error(ERC20: insufficient allowance)") {
		t.Fatalf("a deposit compounding fees on the V3 handler: %v", err)
	}
}

// The V3 stand-ins' events and reservation entry points have the real
// signatures (the V3 handler's events are the V2's; the position manager
// V2's reserveLiquidity(address,bytes) is 0x3bccc5ac, which the audit
// names to tell it on chain).
func TestV3Signatures(t *testing.T) {
	for _, ev := range []string{"LogMintedPosition", "LogBurnedPosition", "LogFeeCompound", "LogUsePosition", "LogUnusePosition",
		"LogDonation", "LogReservedLiquidity", "LogWithdrawReservedLiquidity", "Transfer"} {
		if HandlerV3.ABI.Events[ev].ID != HandlerV2.ABI.Events[ev].ID {
			t.Errorf("%s differs between the V3 and V2 handlers", ev)
		}
	}
	for _, ev := range []string{"LogMintPosition", "LogBurnPosition", "LogUsePosition", "LogUnusePosition", "LogDonation",
		"LogUpdateWhitelistHandler", "LogUpdateWhitelistHandlerWithApp"} {
		if PositionManagerV2.ABI.Events[ev].ID != PositionManager.ABI.Events[ev].ID {
			t.Errorf("%s differs between the position managers", ev)
		}
	}
	if got, want := HandlerV3.ABI.Events["LogUpdateWhitelistedPools"].ID, crypto.Keccak256Hash([]byte("LogUpdateWhitelistedPools(address,bool)")); got != want {
		t.Errorf("LogUpdateWhitelistedPools topic %s", got)
	}
	for _, m := range []struct {
		a    Artifact
		name string
		sig  string
	}{
		{PositionManagerV2, "reserveLiquidity", "3bccc5ac"},
		{PositionManagerV2, "withdrawReserveLiquidity", ""},
		{HandlerV3, "reserveLiquidity", "3bccc5ac"},
		{HandlerV3, "whitelistedPools", ""},
	} {
		method, ok := m.a.ABI.Methods[m.name]
		if !ok {
			t.Errorf("%s has no %s", m.a.Name, m.name)
			continue
		}
		if m.sig != "" && fmt.Sprintf("%x", method.ID) != m.sig {
			t.Errorf("%s.%s selector %x, want %s", m.a.Name, m.name, method.ID, m.sig)
		}
	}
}
