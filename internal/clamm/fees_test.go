package clamm

import (
	"math/big"
	"testing"
)

// Uniswap's Tick.getFeeGrowthInside, worked by hand: a range [0, 60) with
// global growth 1000, 100 outside the lower tick and 300 outside the upper
// one. Inside: 1000 - 100 - 300 = 600; the current tick below the range
// reads the lower tick's outside as global - outside (900 below counts as
// above it): 1000 - 900 - 300, modulo 2^256 (negative: wraps, as the
// pool's unchecked arithmetic does, and the wrap cancels once the last
// value is taken off).
func TestFeeGrowthInsideByHand(t *testing.T) {
	g, lo, hi := big.NewInt(1000), big.NewInt(100), big.NewInt(300)
	wrap := func(v int64) *big.Int { return new(big.Int).Mod(big.NewInt(v), two256) }
	for _, c := range []struct {
		tick int
		want *big.Int
	}{{30, wrap(600)}, {0, wrap(600)}, {-10, wrap(1000 - 900 - 300)}, {60, wrap(1000 - 100 - 700)}, {100, wrap(1000 - 100 - 700)}} {
		if got := (PoolGrowth{g, lo, hi}).Inside(c.tick, 0, 60); got.Cmp(c.want) != 0 {
			t.Errorf("tick %d: %s, want %s", c.tick, got, c.want)
		}
	}
}

// What a burn pays in fees, by hand: growth of 3 * 2^128 per unit of
// liquidity since the handler's last poke, on 50 units earning, adds 150
// to the 10 owed; a burn of 1/4 of the range's total liquidity pays a
// quarter of each token's owed (as the amounts the liquidity spans across
// the range, rounded down: 40 of 160, 1 of 7); a burn of more than the
// total pays all that is owed.
func TestFeesPaidByHand(t *testing.T) {
	q := new(big.Int).Lsh(big.NewInt(3), 128)
	f := RangeFees{TickLower: 600, TickUpper: 660, Owed: [2]*big.Int{big.NewInt(10), big.NewInt(7)},
		Last: [2]*big.Int{big.NewInt(5), big.NewInt(0)}, Now: [2]*big.Int{new(big.Int).Add(q, big.NewInt(5)), big.NewInt(0)},
		Earning: big.NewInt(50), TotalLiquidity: big.NewInt(4_000_000_000)}
	sa, _ := SqrtRatioAtTick(600)
	sb, _ := SqrtRatioAtTick(660)
	quarter := new(big.Int).Mul(big.NewInt(160), Amount0ForLiquidity(sa, sb, big.NewInt(1_000_000_000)))
	quarter.Quo(quarter, Amount0ForLiquidity(sa, sb, big.NewInt(4_000_000_000)))
	f0, f1, err := f.Paid(big.NewInt(1_000_000_000))
	if err != nil || f0.Cmp(quarter) != 0 || f1.Int64() != 1 || quarter.Int64() < 39 || quarter.Int64() > 40 {
		t.Errorf("a quarter: %s / %s (%v), want %s / 1", f0, f1, err, quarter)
	}
	if f0, _, _ := f.Paid(big.NewInt(5_000_000_000)); f0.Int64() != 160 {
		t.Errorf("more than the total: %s, want all 160 owed", f0)
	}
}
