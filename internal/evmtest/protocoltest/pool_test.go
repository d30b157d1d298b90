package protocoltest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// updateAddress is the one way a pool gets approved, as on the real
// market: until then a purchase of its ranges reverts PoolNotApproved;
// the approval emits LogUpdateAddress naming neither the pool nor the
// settler, and keeps the other addresses as ApprovePool passes them; a
// pool of another token pair reverts InvalidPool and changes nothing; a
// de-approval stops purchases again.
func TestUpdateAddressApprovesPools(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	pool2 := p.NewPool(3000, tick)
	_, tick2 := p.Slot0(pool2)
	r := Range{Pool: pool2, TickLower: tick2/60*60 + 600, TickUpper: tick2/60*60 + 660}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	half := new(big.Int).Div(l, big.NewInt(2))
	buy := func() error {
		_, _, err := p.Buy(p.Users[1], Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, half}}})
		return err
	}
	if err := buy(); !IsRevert(err, "DopexV2OptionMarket__PoolNotApproved") {
		t.Fatalf("before approval: %v", err)
	}
	pr := p.DeployPricing(PricingConfig{IVs: map[uint64]uint64{3600: 50}})
	rc := p.Chain.MustSend(p.Owner, p.Market, MarketV2.ABI, "updateAddress", pr.FeeTo, common.Address{}, pr.FeeStrategy, pr.Pricing, common.Address{}, false, pool2, true)
	ev := p.Find(rc, "LogUpdateAddress")
	if ev == nil || ev.Args["optionPricing"] != pr.Pricing || ev.Args["dpFee"] != pr.FeeStrategy || len(rc.Logs) != 1 {
		t.Fatalf("LogUpdateAddress %v in %d logs", ev, len(rc.Logs))
	}
	if !p.Chain.Call(p.Market, MarketV2.ABI, "approvedPools", pool2)[0].(bool) || !p.Chain.Call(p.Market, MarketV2.ABI, "approvedPools", p.Pool)[0].(bool) {
		t.Fatal("approvedPools after updateAddress")
	}
	if err := buy(); err != nil {
		t.Fatalf("after approval: %v", err)
	}
	other := p.Chain.Deploy(Token, "Other", "OTH", uint8(18))
	if _, err := p.Chain.Send(p.Owner, p.Market, MarketV2.ABI, "updateAddress", pr.FeeTo, common.Address{}, pr.FeeStrategy, pr.Pricing, common.Address{}, false, other, true); !IsRevert(err, "") {
		t.Fatalf("a token as the pool: %v", err)
	}
	if p.Chain.Call(p.Market, MarketV2.ABI, "approvedPools", other)[0].(bool) {
		t.Fatal("a reverted updateAddress approved its pool")
	}
	p.ApprovePool(p.Market, pool2, false)
	if p.Chain.Call(p.Market, MarketV2.ABI, "optionPricing")[0].(common.Address) != pr.Pricing {
		t.Fatal("ApprovePool changed the pricing")
	}
	if err := buy(); !IsRevert(err, "DopexV2OptionMarket__PoolNotApproved") {
		t.Fatalf("after de-approval: %v", err)
	}
}

// A leg in a second pool (fee 3000) at its own price: the handler places
// it against that pool's tick, the exercise swaps through that pool.
func TestLegInSecondPool(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	pool2 := p.AddPool(3000, tick+600)
	_, tick2 := p.Slot0(pool2)
	if tick2-tick < 500 {
		t.Fatalf("second pool at tick %d, prime at %d", tick2, tick)
	}
	// Above the prime pool's price but below the second pool's: only
	// token1 in pool2, so a put range there.
	r := Range{Pool: pool2, TickLower: tick2 - 180, TickUpper: tick2 - 120}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	id, rc, err := p.Buy(p.Users[1], Option{IsCall: false, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, l}}})
	if err != nil {
		t.Fatal(err)
	}
	a0, a1 := rangeAmounts(t, r, l)
	eq(t, "put collateral from pool2", p.Find(rc, "LogMintOption").Args["totalAssetWithdrawn"].(*big.Int), a1)
	if _, err := p.SwapToTick(p.Users[2], 3000, tick2-480); err != nil {
		t.Fatal(err)
	}
	out, _ := p.Quote(p.PutAsset, a1, 3000)
	rc, err = p.Exercise(p.Users[1], id, []ExerciseLeg{{p.Swapper, UniV3SwapData(3000, big.NewInt(0)), l}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "profit in the call asset", p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int), sub(out, a0))
	checkPoolInvariant(t, p, r)
}

// An option that expired out of the money is settled by a settler: the
// leg's liquidity goes back to the handler as it is (no swap), and
// LogSettleOption names the owner.
func TestSettleExpiredOutOfTheMoney(t *testing.T) {
	s := newCall(t)
	p := s.p
	legs := []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}}
	if _, err := p.Settle(p.Owner, s.id, legs); !IsRevert(err, "DopexV2OptionMarket__OptionNotExpired") {
		t.Fatalf("before expiry: %v", err)
	}
	p.Chain.AdjustTime(3601e9)
	before := p.RangeInfo(s.r)
	rc, err := p.Settle(p.Owner, s.id, legs)
	if err != nil {
		t.Fatal(err)
	}
	ev := p.Find(rc, "LogSettleOption")
	if ev == nil || ev.Args["user"] != s.buyer.Addr {
		t.Fatalf("LogSettleOption %v", ev)
	}
	if swapOuts(p, p.Events(rc), false) != nil {
		t.Fatal("an out-of-the-money leg is not swapped")
	}
	reminted := p.FindAll(rc, "LogUnusePosition")[0].Args["liquidityUnused"].(*big.Int)
	eq(t, "liquidityUsed", p.RangeInfo(s.r).LiquidityUsed, sub(before.LiquidityUsed, reminted))
	eq(t, "leg", p.OpTicks(s.id)[0].Liquidity, new(big.Int))
	checkPoolInvariant(t, p, s.r)
}
