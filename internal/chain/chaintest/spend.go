package chaintest

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// A prepare's probe that follows no share (ActionProbe with shareToken
// zero) runs its approvals and then the transaction that spends them: a
// purchase's mintOption, a deposit's multicall of mintPosition. The fake
// runs them on a copy of the signer's balances and allowances and of the
// handlers' ranges, step after step, as the EVM would run them on the
// tokens' and contracts' storage:
//
//   - approve(spender, amount) on one of the node's tokens sets the
//     signer's allowance to spender;
//   - every transferFrom a step makes from the signer (the market's fee
//     and premium, the position manager's pull) spends the allowance and
//     then the balance, reverting as OpenZeppelin's ERC20 does, allowance
//     first: "ERC20: insufficient allowance", then "ERC20: transfer amount
//     exceeds balance"; an allowance of 2^256-1 is not spent;
//   - mintOption is the market's (DopexV2OptionMarketV2: the legs used
//     through the position manager, the premium and fee its pricing
//     charges for what they withdraw, the fee taken before the cost is
//     checked against maxCostAllowance, then the premium);
//   - mintPosition is the position manager's pull of tokensToPullForMint
//     and the single-tick handler's mint (the liquidity the pulled amounts
//     buy, its shares by convertToShares in a range with a supply).
//
// A step that reverts leaves the copy as it was; the measured deltas are
// the signer's balances of the probe's tokens around each step. Left out:
// the premium's donation to the ranges (no later step of a prepare reads
// it) and the swap fees a range owes (the fake's ranges owe none).

// spendState is what a probe's steps may change: the signer's balances
// by token, its allowances by token and spender, and the ranges they
// used or minted into, by handler and token id.
type spendState struct {
	bal    map[common.Address]*big.Int
	allow  map[common.Address]map[common.Address]*big.Int
	ranges map[*Handler]map[string]*HandlerRange
}

// spendRun is one probe's simulation.
type spendRun struct {
	n      *Node
	signer common.Address
	block  uint64 // the block number the steps run at (a donation lock's clock)
	st     spendState
}

var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// spendProbe answers ActionProbe's code run by signer at block: each
// step's outcome, as ActionProbe encodes them.
func (n *Node) spendProbe(signer common.Address, run contracts.ProbeRun, block uint64) ([]byte, bool) {
	s := &spendRun{n: n, signer: signer, block: block, st: spendState{bal: map[common.Address]*big.Int{},
		allow: map[common.Address]map[common.Address]*big.Int{}, ranges: map[*Handler]map[string]*HandlerRange{}}}
	outs := make([]contracts.ProbeOutcome, len(run.Steps))
	for i, step := range run.Steps {
		outs[i] = s.step(step, run.Tokens)
	}
	out, err := contracts.PackProbe(outs)
	return out, err == nil
}

// step runs one step and measures the signer's balances of tokens around
// it; a revert restores the state and reports its data.
func (s *spendRun) step(step contracts.ProbeStep, tokens []common.Address) contracts.ProbeOutcome {
	o := contracts.ProbeOutcome{TokenDeltas: make([]*big.Int, len(tokens)), ShareDelta: new(big.Int), Quoted: new(big.Int)}
	before := make([]*big.Int, len(tokens))
	for i, t := range tokens {
		before[i], o.TokenDeltas[i] = s.balance(t), new(big.Int)
	}
	saved := s.st.clone()
	ret, ok := s.call(step.Target, step.Data)
	if !ok {
		s.st = saved
		o.Return = ret
		return o
	}
	o.OK, o.Return = true, ret
	for i, t := range tokens {
		o.TokenDeltas[i].Sub(s.balance(t), before[i])
	}
	return o
}

// call runs one step's call from the signer: (return or revert data, ok).
func (s *spendRun) call(to common.Address, data []byte) ([]byte, bool) {
	is := func(a abi.ABI, method string) bool {
		return len(data) >= 4 && bytes.Equal(data[:4], a.Methods[method].ID)
	}
	switch {
	case s.n.Tokens[to] != nil && is(contracts.ERC20Approve, "approve"):
		v, err := contracts.ERC20Approve.Methods["approve"].Inputs.Unpack(data[4:])
		if err != nil {
			return nil, false
		}
		s.setAllowance(to, v[0].(common.Address), v[1].(*big.Int))
		return common.LeftPadBytes([]byte{1}, 32), true
	case s.n.Markets[to] != nil && is(contracts.MintOption, "mintOption"):
		return s.mintOption(to, s.n.Markets[to], data)
	case s.n.PositionManagers[to] != nil && is(contracts.PositionManagerLP, "multicall"):
		return s.multicall(to, s.n.PositionManagers[to], data)
	}
	return nil, false
}

// balance is the signer's balance of token in the run.
func (s *spendRun) balance(token common.Address) *big.Int {
	if b, ok := s.st.bal[token]; ok {
		return new(big.Int).Set(b)
	}
	return s.n.Tokens[token].balanceOf(s.signer)
}

func (s *spendRun) allowance(token, spender common.Address) *big.Int {
	if a, ok := s.st.allow[token][spender]; ok {
		return new(big.Int).Set(a)
	}
	return s.n.Tokens[token].allowance(s.signer, spender)
}

func (s *spendRun) setAllowance(token, spender common.Address, amount *big.Int) {
	if s.st.allow[token] == nil {
		s.st.allow[token] = map[common.Address]*big.Int{}
	}
	s.st.allow[token][spender] = new(big.Int).Set(amount)
}

// transferFrom is token.transferFrom(signer, _, amount) sent by spender,
// as OpenZeppelin's ERC20 runs it: the allowance is spent first, then the
// balance; nil when it went through, else the revert data.
func (s *spendRun) transferFrom(token, spender common.Address, amount *big.Int) []byte {
	if s.n.Tokens[token] == nil {
		return []byte{} // no token there: SafeERC20 reverts on an account without code
	}
	a, b := s.allowance(token, spender), s.balance(token)
	if a.Cmp(amount) < 0 {
		return ErrorString("ERC20: insufficient allowance")
	}
	if b.Cmp(amount) < 0 {
		return ErrorString("ERC20: transfer amount exceeds balance")
	}
	if a.Cmp(maxUint256) != 0 {
		s.setAllowance(token, spender, a.Sub(a, amount))
	}
	s.st.bal[token] = b.Sub(b, amount)
	return nil
}

// rng is the run's copy of a handler's range, taken the first time a step
// touches it (an empty range for a handler the node keeps no LP state of).
func (s *spendRun) rng(h *Handler, id *big.Int) *HandlerRange {
	if s.st.ranges[h] == nil {
		s.st.ranges[h] = map[string]*HandlerRange{}
	}
	if r, ok := s.st.ranges[h][id.String()]; ok {
		return r
	}
	lp := h.LP
	if lp == nil {
		lp = &HandlerLP{} // a throw-away: the node's handler stays without
	}
	r := lp.Range(id).clone()
	s.st.ranges[h][id.String()] = r
	return r
}

// clone copies every map and amount of the state.
func (st spendState) clone() spendState {
	out := spendState{bal: map[common.Address]*big.Int{}, allow: map[common.Address]map[common.Address]*big.Int{},
		ranges: map[*Handler]map[string]*HandlerRange{}}
	for t, b := range st.bal {
		out.bal[t] = new(big.Int).Set(b)
	}
	for t, m := range st.allow {
		out.allow[t] = map[common.Address]*big.Int{}
		for sp, a := range m {
			out.allow[t][sp] = new(big.Int).Set(a)
		}
	}
	for h, m := range st.ranges {
		out.ranges[h] = map[string]*HandlerRange{}
		for id, r := range m {
			out.ranges[h][id] = r.clone()
		}
	}
	return out
}

// clone copies a range's amounts and its holders' shares (reservations
// are not changed by a spend and are shared).
func (r *HandlerRange) clone() *HandlerRange {
	c := func(x *big.Int) *big.Int { return new(big.Int).Set(orZero(x)) }
	out := &HandlerRange{TotalLiquidity: c(r.TotalLiquidity), TotalSupply: c(r.TotalSupply), LiquidityUsed: c(r.LiquidityUsed),
		DonatedLiquidity: c(r.DonatedLiquidity), ReservedLiquidity: c(r.ReservedLiquidity), LastDonation: r.LastDonation,
		Shares: map[common.Address]*big.Int{}, Reserved: r.Reserved}
	for a, sh := range r.Shares {
		out.Shares[a] = c(sh)
	}
	return out
}

// errorOf is the revert data of a custom error without arguments, by its
// signature (customError names the market's known ones).
func errorOf(signature string) []byte {
	return crypto.Keccak256([]byte(signature))[:4]
}

// lockedDuration is the handler's lockedBlockDuration (0 without LP state).
func lockedDuration(h *Handler) uint64 {
	if h.LP == nil {
		return 0
	}
	return h.LP.LockedBlockDuration
}

// shareRange is what the handler's share conversions read of r.
func shareRange(h *Handler, r *HandlerRange) clamm.ShareRange {
	return clamm.ShareRange{TotalLiquidity: r.TotalLiquidity, TotalSupply: r.TotalSupply, DonatedLiquidity: r.DonatedLiquidity,
		LastDonation: r.LastDonation, LockedBlockDuration: lockedDuration(h)}
}
