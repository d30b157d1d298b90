package clamm

import "math/big"

// MintAmounts is what a Uniswap V3 pool's mint charges for liquidity L over
// [sqrtA, sqrtB] at price sqrtP: SqrtPriceMath.getAmount0Delta and
// getAmount1Delta rounded up (AmountsForLiquidity rounds down, as a burn
// pays). amount0 = ceil(ceil(L * 2^96 * (sb - p) / sb) / p) over the part
// of the range above the price, amount1 = ceil(L * (p - sa) / 2^96) over
// the part below.
func MintAmounts(sqrtP, sqrtA, sqrtB, liquidity *big.Int) (amount0, amount1 *big.Int) {
	sa, sb := sortedSqrt(sqrtA, sqrtB)
	switch {
	case sqrtP.Cmp(sa) <= 0:
		return amount0Up(sa, sb, liquidity), new(big.Int)
	case sqrtP.Cmp(sb) < 0:
		return amount0Up(sqrtP, sb, liquidity), amount1Up(sa, sqrtP, liquidity)
	default:
		return new(big.Int), amount1Up(sa, sb, liquidity)
	}
}

func amount0Up(sa, sb, liquidity *big.Int) *big.Int {
	if sa.Sign() == 0 {
		return new(big.Int)
	}
	num := new(big.Int).Lsh(liquidity, 96)
	num.Mul(num, new(big.Int).Sub(sb, sa))
	return ceilDiv(ceilDiv(num, sb), sa)
}

func amount1Up(sa, sb, liquidity *big.Int) *big.Int {
	num := new(big.Int).Mul(liquidity, new(big.Int).Sub(sb, sa))
	return ceilDiv(num, new(big.Int).Lsh(big.NewInt(1), 96))
}

// ceilDiv is ceil(a / b) for a >= 0, b > 0.
func ceilDiv(a, b *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(a, b, new(big.Int))
	if r.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}
