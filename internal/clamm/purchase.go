package clamm

import "math/big"

// LiquidityForAmount is the most liquidity a range [tickLower, tickUpper]
// entirely on one side of the price can give for at most `amount` of the
// token it holds (token0 when heldIs0): Uniswap LiquidityAmounts'
// getLiquidityForAmount0 (mulDiv(amount, mulDiv(sa, sb, 2^96), sb - sa))
// or getLiquidityForAmount1 (mulDiv(amount, 2^96, sb - sa)), rounding
// down, so the range's amount for the result never exceeds `amount`.
func LiquidityForAmount(tickLower, tickUpper int, amount *big.Int, heldIs0 bool) (*big.Int, error) {
	sa, err := SqrtRatioAtTick(tickLower)
	if err != nil {
		return nil, err
	}
	sb, err := SqrtRatioAtTick(tickUpper)
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
