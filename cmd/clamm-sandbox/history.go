package main

import (
	"math/big"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// The sandbox's accounts: protocoltest's fixed keys, so addresses (and
// with them every contract's address) are the same on every start.
const (
	owner  = iota // deploys and owns every contract; the settler
	lp            // deposits on both sides of the price
	buyer         // buys calls, exercises one
	trader        // buys a put, moves the price
	lp2           // deposits, withdraws
	you           // funded, no history: yours to try
	accounts
)

var accountRoles = [accounts]string{"owner, settler", "LP", "buyer", "trader", "second LP", "yours: funded, no history"}

// history is what play did, for the start's summary and the test.
type history struct {
	Multicall3                       common.Address
	Deposits, Withdrawals, Exercises int
	Purchases                        []*big.Int // option ids, in order
	Settled                          []*big.Int
	Head                             uint64
	t                                interface{ Fatal(...any) }
}

// historyStart is how long before the wall clock the chain begins: the
// history moves the chain's clock forward by about four hours (options
// bought, exercised, expired, settled), so it ends in the past and the
// blocks mined afterwards take the wall clock's time.
const historyStart = 6 * time.Hour

// play runs the stated history on a freshly deployed protocol, in this
// order, each step its own transactions:
//
//  1. the market's pricing (IV 50% for one-hour options, 45% for one-day
//     ones) and a Multicall3;
//  2. the LP deposits into five call ranges above the price and five put
//     ranges below it, the second LP into the nearest of each;
//  3. an hour later, the buyer buys a one-day call and a one-hour call,
//     the trader a one-hour put;
//  4. half an hour later the trader swaps the price up through both calls'
//     ranges, and the buyer exercises a third of the one-day call;
//  5. two hours later (the one-hour options expired) the owner settles
//     the one-hour call (in the money) and put (worthless);
//  6. the LP deposits into three call ranges above the new price, the
//     second LP withdraws part of a put range;
//  7. the clock moves to a minute before now.
//
// Every step is a real transaction on the real contracts; a revert
// stops the start (tb.Fatal).
func play(p *pt.Protocol, now time.Time) *history {
	h := &history{t: p.Chain.T}
	c := p.Chain
	u := p.Chain.Accounts
	p.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{3600: 50, 86400: 45}, FeePercentage: 340000})
	h.Multicall3 = p.DeployMulticall3()
	_, tick := p.Slot0(p.Pool)
	calls, puts := ranges(p, tick, 2, 5), ranges(p, tick, -7, 5)
	liq := map[pt.Range]*big.Int{}
	for _, r := range append(calls, puts...) {
		liq[r] = h.deposit(p, u[lp], r, e18(1))
	}
	h.deposit(p, u[lp2], calls[0], e17(5))
	h.deposit(p, u[lp2], puts[4], e17(5))

	c.AdjustTime(time.Hour)
	dayCall := h.buy(p, u[buyer], true, calls[0], 86400, half(liq[calls[0]]))
	hourCall := h.buy(p, u[buyer], true, calls[1], 3600, half(liq[calls[1]]))
	hourPut := h.buy(p, u[trader], false, puts[4], 3600, half(liq[puts[4]]))

	c.AdjustTime(30 * time.Minute)
	h.ok(p.SwapToTick(u[trader], p.Fee, calls[1].TickUpper+3*p.TickSpacing))
	third := new(big.Int).Div(liq[calls[0]], big.NewInt(6))
	h.ok(p.Exercise(u[buyer], dayCall, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: third}}))
	h.Exercises++

	c.AdjustTime(2 * time.Hour)
	for _, id := range []*big.Int{hourCall, hourPut} {
		h.ok(p.Settle(u[owner], id, settleLegs(p, id)))
		h.Settled = append(h.Settled, id)
	}

	_, tick = p.Slot0(p.Pool)
	for _, r := range ranges(p, tick, 2, 3) {
		h.deposit(p, u[lp], r, e18(1))
	}
	h.ok(p.Withdraw(u[lp2], puts[4], big.NewInt(1000)))
	h.Withdrawals++

	if gap := now.Add(-time.Minute).Unix() - int64(c.Now()); gap > 0 {
		c.AdjustTime(time.Duration(gap) * time.Second)
	}
	h.Head = c.BlockNumber()
	return h
}

// ranges are n single-spacing ranges starting from spacings off the
// spacing-aligned tick below tick (positive: above the price, the call
// asset's side; negative: below).
func ranges(p *pt.Protocol, tick, from, n int) []pt.Range {
	s := p.TickSpacing
	base := tick - ((tick%s)+s)%s
	out := make([]pt.Range, n)
	for i := range out {
		lo := base + (from+i)*s
		out[i] = pt.Range{TickLower: lo, TickUpper: lo + s}
	}
	return out
}

func (h *history) deposit(p *pt.Protocol, a *pt.Account, r pt.Range, liquidity *big.Int) *big.Int {
	_, shares, err := p.Deposit(a, r, liquidity)
	if err != nil {
		p.Chain.T.Fatal(err)
	}
	h.Deposits++
	return shares
}

// buy buys an option from one range: a call is struck at the range's
// upper tick, a put at its lower one.
func (h *history) buy(p *pt.Protocol, a *pt.Account, call bool, r pt.Range, ttl uint64, liquidity *big.Int) *big.Int {
	id, _, err := p.Buy(a, pt.Option{IsCall: call, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: ttl,
		Legs: []pt.Leg{{Range: r, Liquidity: liquidity}}})
	if err != nil {
		p.Chain.T.Fatal(err)
	}
	h.Purchases = append(h.Purchases, id)
	return id
}

// settleLegs settles every leg of an option in full, swapping through
// the Uniswap swapper where the price crossed the leg's range.
func settleLegs(p *pt.Protocol, id *big.Int) []pt.ExerciseLeg {
	var legs []pt.ExerciseLeg
	for _, l := range p.OpTicks(id) {
		legs = append(legs, pt.ExerciseLeg{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: l.Liquidity})
	}
	return legs
}

// ok stops the history at a transaction that failed.
func (h *history) ok(_ *types.Receipt, err error) {
	if err != nil {
		h.t.Fatal(err)
	}
}

func e18(n int64) *big.Int     { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }
func e17(n int64) *big.Int     { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e17)) }
func half(v *big.Int) *big.Int { return new(big.Int).Div(v, big.NewInt(2)) }
