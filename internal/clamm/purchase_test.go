package clamm

import (
	"math/big"
	"testing"
)

// MaxLiquidityWithin is the largest L whose amount, as the pool's burn
// rounds it (getAmount0Delta/getAmount1Delta rounding down: RangeAmount,
// held to the v3-sdk's vectors), is at most what is asked: L fits and L+1
// does not. Ranges where a unit of liquidity is worth many base units
// (WETH), about one, or far less than one (USDC, WBTC), both tokens.
func TestMaxLiquidityWithinIsTheLargestThatFits(t *testing.T) {
	t.Parallel()
	ranges := []struct {
		tl, tu  int
		heldIs0 bool
	}{
		{-196250, -196240, true}, {-196270, -196260, false}, {71200, 71210, true}, {71200, 71210, false},
		{-887270, -887260, true}, {887260, 887270, false}, {0, 60, true}, {-60, 0, false}, {-200000, -190000, false},
	}
	amounts := []*big.Int{big.NewInt(1), big.NewInt(7), big.NewInt(5_000_000), big.NewInt(123_456_789), big.NewInt(1_000_000_000),
		new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil), new(big.Int).Sub(new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil), big.NewInt(1))}
	for _, r := range ranges {
		for _, a := range amounts {
			l, err := MaxLiquidityWithin(r.tl, r.tu, a, r.heldIs0)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := RangeAmount(r.tl, r.tu, l, r.heldIs0)
			next, _ := RangeAmount(r.tl, r.tu, new(big.Int).Add(l, big.NewInt(1)), r.heldIs0)
			floor, _ := LiquidityForAmount(r.tl, r.tu, a, r.heldIs0)
			if got.Cmp(a) > 0 || next.Cmp(a) <= 0 || l.Cmp(floor) < 0 {
				t.Errorf("[%d, %d] token%d, %s: L %s gives %s, L+1 %s (LiquidityForAmount %s)", r.tl, r.tu, map[bool]int{true: 0, false: 1}[r.heldIs0], a, l, got, next, floor)
			}
		}
	}
	if l, _ := MaxLiquidityWithin(-60, 0, new(big.Int), false); l.Sign() != 0 {
		t.Errorf("nothing asked: L %s", l)
	}
}
