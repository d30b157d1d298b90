package protocoltest

import (
	"math/big"
	"testing"
)

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
