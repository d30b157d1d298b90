package clamm

import "math/big"

// LiquidityForAmount is the most liquidity a range [tickLower, tickUpper]
// entirely on one side of the price can give for at most `amount` of the
// token it holds (token0 when heldIs0): Uniswap LiquidityAmounts'
// getLiquidityForAmount0 (mulDiv(amount, mulDiv(sa, sb, 2^96), sb - sa))
// or getLiquidityForAmount1 (mulDiv(amount, 2^96, sb - sa)), rounding
// down, so the range's amount for the result never exceeds `amount`.
func LiquidityForAmount(tickLower, tickUpper int, amount *big.Int, heldIs0 bool) (*big.Int, error) {
	sa, sb, err := sqrtRange(tickLower, tickUpper)
	if err != nil {
		return nil, err
	}
	diff := new(big.Int).Sub(sb, sa)
	if diff.Sign() <= 0 {
		return new(big.Int), nil
	}
	if heldIs0 {
		mid := new(big.Int).Mul(sa, sb)
		mid.Rsh(mid, 96)
		l := new(big.Int).Mul(amount, mid)
		return l.Quo(l, diff), nil
	}
	l := new(big.Int).Lsh(amount, 96)
	return l.Quo(l, diff), nil
}

// RangeAmount is the amount of the held token that liquidity L stands for
// over a one-sided range (RangeAmounts, one side).
func RangeAmount(tickLower, tickUpper int, liquidity *big.Int, heldIs0 bool) (*big.Int, error) {
	a0, a1, err := RangeAmounts(tickLower, tickUpper, liquidity)
	if err != nil {
		return nil, err
	}
	if heldIs0 {
		return a0, nil
	}
	return a1, nil
}

// MaxLiquidityWithin is the largest liquidity L whose RangeAmount over the
// one-sided range [tickLower, tickUpper] is at most amount: what a purchase
// leg can borrow for `amount` of the held token, the pool's burn rounding
// the amount down. LiquidityForAmount, which rounds the liquidity down
// from the amount, can stop short of it: over a range where one unit of
// liquidity is worth less than one base unit (a USDC put range, a WBTC call
// range) many more units still fit, and over a token1 range the round trip
// amount -> liquidity -> amount usually loses one base unit. It starts
// from LiquidityForAmount, which always fits, and
// searches upwards (doubling, then halving), checking each candidate with
// the pool's own rounding.
func MaxLiquidityWithin(tickLower, tickUpper int, amount *big.Int, heldIs0 bool) (*big.Int, error) {
	sa, sb, err := sqrtRange(tickLower, tickUpper)
	if err != nil {
		return nil, err
	}
	if sb.Cmp(sa) <= 0 || amount.Sign() <= 0 {
		return new(big.Int), nil
	}
	fits := func(l *big.Int) bool {
		if heldIs0 {
			return Amount0ForLiquidity(sa, sb, l).Cmp(amount) <= 0
		}
		return Amount1ForLiquidity(sa, sb, l).Cmp(amount) <= 0
	}
	lo, err := LiquidityForAmount(tickLower, tickUpper, amount, heldIs0)
	if err != nil {
		return nil, err
	}
	for lo.Sign() > 0 && !fits(lo) { // never taken: LiquidityForAmount rounds down
		lo.Sub(lo, big.NewInt(1))
	}
	// lo fits; find a step that does not, then halve the gap.
	step := big.NewInt(1)
	for fits(new(big.Int).Add(lo, step)) {
		lo.Add(lo, step)
		step.Lsh(step, 1)
	}
	for step.Cmp(big.NewInt(1)) > 0 {
		step.Rsh(step, 1)
		if next := new(big.Int).Add(lo, step); fits(next) {
			lo = next
		}
	}
	return lo, nil
}
