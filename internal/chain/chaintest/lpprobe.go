package chaintest

import (
	"bytes"
	"encoding/json"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// The gateway simulates a liquidity provider's transactions with its
// ActionProbe placed at the provider's address by eth_call's state
// override (package chain). The fake has no EVM: it recognises the probe's
// code and runs the steps it knows on a copy of its handlers' LP state,
// with the real handlers' rules and sums (clamm's): burnPosition through a
// position manager, and a V2 handler's reserveLiquidity and
// withdrawReserveLiquidity. A burn pays the liquidity's amounts at the
// pool's price, rounded down as the pool's burn pays them; the fake's
// ranges owe no swap fees. Any other step reverts. A probe that follows
// no share runs a prepare's approvals and the purchase or deposit that
// spends them instead (spend.go).

// probeOverride is the probe's code when the eth_call's state override
// places one at the called address.
func probeOverride(req rpcRequest, to common.Address) (contracts.ProbeRun, bool) {
	if len(req.Params) < 3 {
		return contracts.ProbeRun{}, false
	}
	var over map[common.Address]struct {
		Code hexutil.Bytes `json:"code"`
	}
	if json.Unmarshal(req.Params[2], &over) != nil {
		return contracts.ProbeRun{}, false
	}
	return contracts.UnpackProbeCode(over[to].Code)
}

// blockOverride is the eth_call's block override of the number (0: none).
func blockOverride(req rpcRequest) uint64 {
	if len(req.Params) < 4 {
		return 0
	}
	var b struct {
		Number hexutil.Uint64 `json:"number"`
	}
	_ = json.Unmarshal(req.Params[3], &b)
	return uint64(b.Number)
}

// lpRun is one probe's view of a handler's range, changed step by step.
type lpRun struct {
	n       *Node
	signer  common.Address
	h       *Handler
	r       HandlerRange // a copy: the node's state is left as it was
	shares  *big.Int
	res     Reservation
	block   uint64
	tokens  []common.Address
	outcome []contracts.ProbeOutcome
}

// probe answers the probe's code run by signer at block as ActionProbe
// would.
func (n *Node) probe(signer common.Address, run contracts.ProbeRun, block uint64) ([]byte, bool) {
	if run.ShareToken == (common.Address{}) {
		return n.spendProbe(signer, run, block)
	}
	h := n.Handlers[run.ShareToken]
	if h == nil || h.LP == nil {
		return nil, false
	}
	src := h.LP.Range(run.ShareID)
	cp := func(x *big.Int) *big.Int { return new(big.Int).Set(orZero(x)) }
	l := &lpRun{n: n, signer: signer, h: h, block: block, tokens: run.Tokens,
		r:      HandlerRange{TotalLiquidity: cp(src.TotalLiquidity), TotalSupply: cp(src.TotalSupply), LiquidityUsed: cp(src.LiquidityUsed), DonatedLiquidity: cp(src.DonatedLiquidity), ReservedLiquidity: cp(src.ReservedLiquidity), LastDonation: src.LastDonation},
		shares: cp(src.Shares[signer]), res: Reservation{Liquidity: cp(src.Reserved[signer].Liquidity), LastReserve: src.Reserved[signer].LastReserve}}
	for _, s := range run.Steps {
		l.step(s)
	}
	out, err := contracts.PackProbe(l.outcome)
	return out, err == nil
}

func (l *lpRun) worth() clamm.ShareRange {
	return clamm.ShareRange{TotalLiquidity: l.r.TotalLiquidity, TotalSupply: l.r.TotalSupply, DonatedLiquidity: l.r.DonatedLiquidity,
		LastDonation: l.r.LastDonation, LockedBlockDuration: l.h.LP.LockedBlockDuration}
}

// step runs one step and records its outcome (a revert leaves the state).
func (l *lpRun) step(s contracts.ProbeStep) {
	o := contracts.ProbeOutcome{TokenDeltas: make([]*big.Int, len(l.tokens)), ShareDelta: new(big.Int), Quoted: new(big.Int)}
	for i := range o.TokenDeltas {
		o.TokenDeltas[i] = new(big.Int)
	}
	if len(s.Quote) >= 4 && bytes.Equal(s.Quote[:4], contracts.HandlerLP.Methods["convertToAssets"].ID) {
		if v, err := contracts.HandlerLP.Methods["convertToAssets"].Inputs.Unpack(s.Quote[4:]); err == nil {
			o.Quoted = l.worth().ConvertToAssets(v[0].(*big.Int), l.block)
		}
	}
	before := l.save()
	pool, amounts, shares, ok := l.apply(s)
	if ok && pool != nil {
		for i, t := range l.tokens {
			for k, pt := range []common.Address{pool.Token0, pool.Token1} {
				if t == pt {
					o.TokenDeltas[i] = amounts[k]
				}
			}
		}
		o.ShareDelta.Neg(shares)
	}
	if !ok {
		l.restore(before)
		o.TokenDeltas = make([]*big.Int, len(l.tokens))
		for i := range o.TokenDeltas {
			o.TokenDeltas[i] = new(big.Int)
		}
		o.ShareDelta = new(big.Int)
	}
	o.OK = ok
	l.outcome = append(l.outcome, o)
}

type lpSaved struct {
	t, s, r, shares, res *big.Int
	last                 uint64
}

func (l *lpRun) save() lpSaved {
	c := func(x *big.Int) *big.Int { return new(big.Int).Set(x) }
	return lpSaved{c(l.r.TotalLiquidity), c(l.r.TotalSupply), c(l.r.ReservedLiquidity), c(l.shares), c(l.res.Liquidity), l.res.LastReserve}
}

func (l *lpRun) restore(s lpSaved) {
	l.r.TotalLiquidity, l.r.TotalSupply, l.r.ReservedLiquidity, l.shares, l.res.Liquidity, l.res.LastReserve = s.t, s.s, s.r, s.shares, s.res, s.last
}

// apply runs a burn, reservation or reserved withdrawal of the probe's
// range: the pool it pays from, the signer's token changes (token0,
// token1), the shares it burnt, and whether it succeeded.
func (l *lpRun) apply(s contracts.ProbeStep) (*Pool, [2]*big.Int, *big.Int, bool) {
	zero := [2]*big.Int{new(big.Int), new(big.Int)}
	name := contracts.LPMethod(s.Data)
	var payload []byte
	switch {
	case name == "burnPosition" && l.n.PositionManagers[s.Target] != nil:
		v, err := contracts.PositionManagerLP.Methods[name].Inputs.Unpack(s.Data[4:])
		if err != nil || v[0].(common.Address) != l.h.address(l.n) {
			return nil, zero, nil, false
		}
		payload = v[1].([]byte)
	case (name == "reserveLiquidity" || name == "withdrawReserveLiquidity") && l.h.Version != 1 && l.n.Handlers[s.Target] == l.h:
		v, err := contracts.HandlerLP.Methods[name].Inputs.Unpack(s.Data[4:])
		if err != nil {
			return nil, zero, nil, false
		}
		payload = v[0].([]byte)
	default:
		return nil, zero, nil, false
	}
	pool, lo, hi, amount, ok := l.n.rangePayload(l.h, payload)
	if !ok {
		return nil, zero, nil, false
	}
	switch name {
	case "burnPosition":
		return l.burn(pool, lo, hi, amount)
	case "reserveLiquidity":
		return l.reserve(pool, amount)
	}
	return l.withdrawReserved(pool, lo, hi, amount)
}

// burn is burnPositionHandler: convertToAssets of the shares, which the
// range's free liquidity must cover, out of the pool at its price.
func (l *lpRun) burn(pool *Pool, lo, hi *big.Int, shares *big.Int) (*Pool, [2]*big.Int, *big.Int, bool) {
	a := l.worth().ConvertToAssets(shares, l.block)
	free := new(big.Int).Sub(l.r.TotalLiquidity, l.r.LiquidityUsed)
	if shares.Cmp(l.shares) > 0 || free.Cmp(a) < 0 || a.Sign() == 0 {
		return nil, [2]*big.Int{}, nil, false
	}
	a0, a1 := clamm.AmountsForLiquidity(pool.SqrtPriceX96, lo, hi, a)
	l.r.TotalLiquidity.Sub(l.r.TotalLiquidity, a)
	l.r.TotalSupply.Sub(l.r.TotalSupply, shares)
	l.shares.Sub(l.shares, shares)
	return pool, [2]*big.Int{a0, a1}, shares, true
}

// reserve is reserveLiquidity: the pool poke reverts on an empty position
// (NP); totalLiquidity pays the shares' worth (checked), which the
// signer's reservation gains, its cooldown restarted.
func (l *lpRun) reserve(pool *Pool, shares *big.Int) (*Pool, [2]*big.Int, *big.Int, bool) {
	a := l.worth().ConvertToAssets(shares, l.block)
	position := new(big.Int).Add(l.r.TotalLiquidity, l.r.ReservedLiquidity)
	if position.Sub(position, l.r.LiquidityUsed).Sign() <= 0 || shares.Cmp(l.shares) > 0 || l.r.TotalLiquidity.Cmp(a) < 0 {
		return nil, [2]*big.Int{}, nil, false
	}
	l.r.TotalLiquidity.Sub(l.r.TotalLiquidity, a)
	l.r.TotalSupply.Sub(l.r.TotalSupply, shares)
	l.r.ReservedLiquidity.Add(l.r.ReservedLiquidity, a)
	l.shares.Sub(l.shares, shares)
	l.res.Liquidity.Add(l.res.Liquidity, a)
	l.res.LastReserve = l.n.BlockTimestamp
	return pool, [2]*big.Int{new(big.Int), new(big.Int)}, shares, true
}

// withdrawReserved is withdrawReserveLiquidity: after the cooldown, as
// much as the range has free (totalLiquidity + reserved - used), out of
// the pool at its price.
func (l *lpRun) withdrawReserved(pool *Pool, lo, hi *big.Int, liquidity *big.Int) (*Pool, [2]*big.Int, *big.Int, bool) {
	free := new(big.Int).Add(l.r.TotalLiquidity, l.r.ReservedLiquidity)
	free.Sub(free, l.r.LiquidityUsed)
	if l.res.LastReserve+l.h.LP.ReserveCooldown > l.n.BlockTimestamp || free.Cmp(liquidity) < 0 || l.res.Liquidity.Cmp(liquidity) < 0 {
		return nil, [2]*big.Int{}, nil, false
	}
	a0, a1 := clamm.AmountsForLiquidity(pool.SqrtPriceX96, lo, hi, liquidity)
	l.r.ReservedLiquidity.Sub(l.r.ReservedLiquidity, liquidity)
	l.res.Liquidity.Sub(l.res.Liquidity, liquidity)
	return pool, [2]*big.Int{a0, a1}, new(big.Int), true
}

// rangePayload decodes a handler's position payload (V2: pool, hook,
// ticks, amount; V1 without the hook): its pool, the sqrt prices of its
// ticks and its amount.
func (n *Node) rangePayload(h *Handler, payload []byte) (*Pool, *big.Int, *big.Int, *big.Int, bool) {
	pos, amount, ok := n.rangeOf(h, payload)
	if !ok {
		return nil, nil, nil, nil, false
	}
	lo, err := clamm.SqrtRatioAtTick(pos.TickLower)
	if err != nil {
		return nil, nil, nil, nil, false
	}
	hi, err := clamm.SqrtRatioAtTick(pos.TickUpper)
	if err != nil {
		return nil, nil, nil, nil, false
	}
	return n.Pools[pos.Pool], lo, hi, amount, true
}

// rangeOf decodes a handler's position payload into the range it names
// (the handler's field is left zero) and its amount; false when the
// payload is short or its pool is not one of the node's.
func (n *Node) rangeOf(h *Handler, payload []byte) (contracts.Position, *big.Int, bool) {
	if h.Version == 1 {
		if len(payload) < 128 {
			return contracts.Position{}, nil, false
		}
		payload = append(append(append([]byte{}, payload[:32]...), make([]byte, 32)...), payload[32:128]...)
	}
	if len(payload) < 160 {
		return contracts.Position{}, nil, false
	}
	word := func(i int) *big.Int { return new(big.Int).SetBytes(payload[32*i : 32*(i+1)]) }
	tick := func(i int) int {
		v := word(i)
		if v.Bit(255) == 1 {
			v.Sub(v, new(big.Int).Lsh(big.NewInt(1), 256))
		}
		return int(v.Int64())
	}
	pos := contracts.Position{V1: h.Version == 1, Pool: common.BytesToAddress(payload[12:32]), Hook: common.BytesToAddress(payload[44:64]),
		TickLower: tick(2), TickUpper: tick(3)}
	if n.Pools[pos.Pool] == nil {
		return contracts.Position{}, nil, false
	}
	return pos, word(4), true
}

// address is the handler's address on the node.
func (h *Handler) address(n *Node) common.Address {
	for a, x := range n.Handlers {
		if x == h {
			return a
		}
	}
	return common.Address{}
}
