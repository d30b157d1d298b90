package market

import (
	"context"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// pricingChain answers ReadPricing as a market whose pricing has the IVs
// of ivs by ttl (percent; 0: none) and prices a strike tick at
// strikes[tick]; it keeps every read's asks.
type pricingChain struct {
	vocab.Chain
	head    contracts.PricingHead
	ivs     map[uint64]int64
	strikes map[int]int64
	err     error
	reads   [][]contracts.PricingAsk
}

func (c *pricingChain) ReadPricing(_ context.Context, _, _ common.Address, asks []contracts.PricingAsk) (contracts.PricingHead, []contracts.PricingAnswer, error) {
	c.reads = append(c.reads, asks)
	if c.err != nil {
		return contracts.PricingHead{}, nil, c.err
	}
	out := make([]contracts.PricingAnswer, len(asks))
	for i, a := range asks {
		iv := c.ivs[a.Ttl.Uint64()]
		out[i] = contracts.PricingAnswer{Strike: big.NewInt(c.strikes[int(a.StrikeTick.Int64())]), VolOk: true, BaseVol: big.NewInt(iv), Vol: big.NewInt(iv), VolFrom: contracts.VolTable}
	}
	return c.head, out, nil
}

// greeksMarket is a WETH(18)/USDC(6) market, WETH its pool's token0, at
// block time 1_000_000 and mark price 3001.904803.
func greeksMarket(t *testing.T) (*Market, *pricingChain, TradedMarket) {
	t.Helper()
	c := &pricingChain{
		head: contracts.PricingHead{BlockNumber: big.NewInt(7), Timestamp: big.NewInt(1_000_000), LastPrice: big.NewInt(3001904803), Pricing: common.HexToAddress("0xbeef")},
		ivs:  map[uint64]int64{3600: 60, 25200: 50}, strikes: map[int]int64{-196150: 3032e6, -196350: 2972e6},
	}
	m := TradedMarket{Address: common.HexToAddress("0xa1"), CallAsset: vocab.Token{Decimals: "18"}, PutAsset: vocab.Token{Decimals: "6"}, callIs0: true}
	return New(vocab.Chains{1: {Chain: c}}), c, m
}

func held(isCall bool, strikeTick int, expiry, ttl uint64, liquidity int64) HeldOption {
	lo := strikeTick - 10
	if !isCall {
		lo = strikeTick
	}
	return HeldOption{IsCall: isCall, StrikeTick: strikeTick, Expiry: expiry, TTL: ttl,
		Legs: []HeldLeg{{TickLower: lo, TickUpper: lo + 10, Liquidity: big.NewInt(liquidity)}}}
}

// The market's Greeks are the sum of its options' (clamm.HeldGreeks,
// checked against an independent table there), each at its own ttl's IV,
// strike and collateral and the time it has left; options sharing a ttl,
// side and strike share an ask, and the market is read once; an expired
// option counts for nothing, even where its ttl has no IV left.
func TestPortfolioGreeksSumOneReadPerMarket(t *testing.T) {
	s, c, m := greeksMarket(t)
	c.ivs[7200] = 0
	options := []HeldOption{
		held(true, -196150, 1_020_000, 25200, 4e15),
		held(true, -196150, 1_003_000, 25200, 2e15), // same ask as the first
		held(false, -196350, 1_002_000, 3600, 3e15),
		held(true, -196150, 999_000, 7200, 5e15), // expired; its ttl has no IV now
	}
	g, unknown, err := s.PortfolioGreeks(context.Background(), 1, m, options)
	if err != nil || g == nil || unknown != "" {
		t.Fatalf("greeks %+v, unknown %q, err %v", g, unknown, err)
	}
	if len(c.reads) != 1 || len(c.reads[0]) != 3 {
		t.Fatalf("%d reads, asks %v: want one read of three asks (7200, 25200 call, 3600 put)", len(c.reads), c.reads)
	}
	var want clamm.Greeks
	for _, o := range options[:3] {
		leg, err := clamm.ExerciseLeg(o.Legs[0].TickLower, o.Legs[0].TickUpper, o.Legs[0].Liquidity, o.IsCall)
		if err != nil {
			t.Fatal(err)
		}
		x := clamm.HeldGreeks(clamm.HeldOption{IsCall: o.IsCall, Spot: c.head.LastPrice, Strike: big.NewInt(c.strikes[o.StrikeTick]), Collateral: leg.AmountToSwap,
			Remaining: o.Expiry - 1_000_000, IV: big.NewInt(c.ivs[o.TTL]), CallDecimals: 18, PutDecimals: 6})
		want.Delta, want.Gamma, want.Theta, want.Vega = want.Delta+x.Delta, want.Gamma+x.Gamma, want.Theta+x.Theta, want.Vega+x.Vega
	}
	for _, x := range []struct {
		name      string
		got, want float64
	}{{"delta", g.Delta, want.Delta}, {"gamma", g.Gamma, want.Gamma}, {"theta", g.Theta, want.Theta}, {"vega", g.Vega, want.Vega}} {
		if x.want == 0 || math.Abs(x.got-x.want) > 1e-12*math.Abs(x.want) {
			t.Errorf("%s %v, the options' sum %v", x.name, x.got, x.want)
		}
	}
	if g.Options != 3 {
		t.Errorf("%d options summed, want 3", g.Options)
	}
}

// An input that cannot be read for an option that counts makes the
// market's Greeks null with the reason, never a partial sum; a node that
// fails fails the answer (it is not a fact about the market to cache).
func TestPortfolioGreeksUnknownOrFailed(t *testing.T) {
	ctx := context.Background()
	options := []HeldOption{held(true, -196150, 1_020_000, 25200, 4e15), held(false, -196350, 1_002_000, 3600, 3e15)}
	for _, c := range []struct {
		name, reason string
		change       func(*pricingChain)
	}{
		{"no IV for the put's ttl", "no IV for ttl 3600", func(c *pricingChain) { c.ivs[3600] = 0 }},
		{"no pricing", "no optionPricing()", func(c *pricingChain) { c.head.Pricing = common.Address{} }},
		{"no mark price", "mark price", func(c *pricingChain) { c.head.LastPrice = new(big.Int) }},
		{"a strike priced at 0", "strike tick -196350", func(c *pricingChain) { c.strikes[-196350] = 0 }},
		{"a market without the getters", "pricing getters", func(c *pricingChain) { c.err = &chain.RevertError{Reason: "no primePool"} }},
	} {
		s, ch, m := greeksMarket(t)
		c.change(ch)
		g, unknown, err := s.PortfolioGreeks(ctx, 1, m, options)
		if err != nil || g != nil || !strings.Contains(unknown, c.reason) {
			t.Errorf("%s: greeks %+v, unknown %q, err %v; want null saying %q", c.name, g, unknown, err, c.reason)
		}
	}
	s, ch, m := greeksMarket(t)
	ch.err = problem.New(problem.RPCTimeout, "the node timed out")
	if g, unknown, err := s.PortfolioGreeks(ctx, 1, m, options); problem.As(err).Code != problem.RPCTimeout || g != nil || unknown != "" {
		t.Errorf("a node timing out: greeks %+v, unknown %q, err %v", g, unknown, err)
	}
	s, ch, m = greeksMarket(t)
	if g, unknown, err := s.PortfolioGreeks(ctx, 1, m, nil); err != nil || g == nil || *g != (PortfolioGreeks{}) || unknown != "" || len(ch.reads) != 0 {
		t.Errorf("no open option: greeks %+v, unknown %q, err %v, %d reads; want zeros and no read", g, unknown, err, len(ch.reads))
	}
}

// On a market whose call asset is its pool's token1 (every Mantle
// market; here WETH(18) as token1 over USDC(6) as token0, so a call's
// collateral is amount1 of its range and a put's amount0), each option's
// collateral and the market's delta are the values worked out below,
// independently of clamm.ExerciseLeg (Python, decimal at 50 digits,
// sqrtP(t) = 1.0001^(t/2), L = 1e17):
//
//	call [196140, 196150]: amount1 = L*(sqrtP(196150) - sqrtP(196140))
//	  = 907757624077918268.65 -> 907757624077918268 wei (0.907757624 WETH)
//	put [196350, 196360]: amount0 = L*(1/sqrtP(196350) - 1/sqrtP(196360))
//	  = 2725001971.73 -> 2725001971 (2725.001971 USDC), 916891e-6 WETH at
//	  strike 2972 (HeldOption.Size floors to the put asset's units)
//
// (read on the wrong side, token0 for the call, the call would hold
// 2753763789 base units, 2.75e-9 WETH). Delta is N(d1)·size for the call
// and (N(d1)-1)·size for the put, d1 = (ln(S/K) + V²T/2)/(V·√T), S =
// 3001.904803, T = seconds left / (365·86400), r = 0 (math.erf):
//
//	call K 3032, 20000 s left, IV 50%: 0.19603331704621801
//	put K 2972, 2000 s left, IV 60%: -0.016471756699693425
//	sum 0.1795615603465246
func TestPortfolioGreeksCallAssetToken1(t *testing.T) {
	s, c, m := greeksMarket(t)
	m.callIs0 = false
	c.strikes = map[int]int64{196150: 3032e6, 196350: 2972e6} // tick t prices WETH at 1e12/1.0001^t USDC: 3032.07, 2972.04
	call, put := held(true, 196150, 1_020_000, 25200, 1e17), held(false, 196350, 1_002_000, 3600, 1e17)
	for _, x := range []struct {
		name string
		o    HeldOption
		want int64
	}{{"call", call, 907757624077918268}, {"put", put, 2725001971}} {
		got, err := m.collateral(x.o)
		if err != nil {
			t.Fatal(err)
		}
		// the contracts' fixed-point sqrt prices may round a unit apart
		// from the exact ones above
		if d := new(big.Int).Sub(got, big.NewInt(x.want)); d.CmpAbs(big.NewInt(2)) > 0 {
			t.Errorf("%s collateral %s, want %d", x.name, got, x.want)
		}
	}
	g, unknown, err := s.PortfolioGreeks(context.Background(), 1, m, []HeldOption{call, put})
	if err != nil || g == nil || unknown != "" {
		t.Fatalf("greeks %+v, unknown %q, err %v", g, unknown, err)
	}
	if want := 0.1795615603465246; g.Options != 2 || math.Abs(g.Delta-want) > 1e-9*want {
		t.Errorf("%d options, delta %v; want 2, %v", g.Options, g.Delta, want)
	}
}
