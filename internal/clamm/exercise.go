package clamm

import (
	"math/big"
)

// Leg is one leg's exercise amounts (domain.md section 4): the collateral
// the market sends to the swapper and what the liquidity providers must get
// back, both raw base units.
type Leg struct {
	AmountToSwap *big.Int // of the collateral (assetToUse)
	AmountReq    *big.Int // of the profit token (assetToGet)
}

// ExerciseLeg computes a leg from its range and liquidity. collateralIs0 is
// true when the collateral (call asset for calls, put asset for puts) is the
// pool's token0: the range then holds amount0(L) of it, and the LPs are owed
// amount1(L) of the other token, and the other way round.
func ExerciseLeg(tickLower, tickUpper int, liquidity *big.Int, collateralIs0 bool) (Leg, error) {
	a0, a1, err := RangeAmounts(tickLower, tickUpper, liquidity)
	if err != nil {
		return Leg{}, err
	}
	if collateralIs0 {
		return Leg{AmountToSwap: a0, AmountReq: a1}, nil
	}
	return Leg{AmountToSwap: a1, AmountReq: a0}, nil
}

// SwapAtPrice is the output of an ideal swap (no fee, no price impact) of
// amountIn at sqrtPriceX96: token0 -> token1 gives amountIn * P, token1 ->
// token0 gives amountIn / P, with P = sqrtPriceX96^2 / 2^192, floored once.
// Scenarios use it to derive consistent exercise amounts; live quotes come
// from the swappers.
func SwapAtPrice(amountIn, sqrtPriceX96 *big.Int, zeroForOne bool) *big.Int {
	p2 := new(big.Int).Mul(sqrtPriceX96, sqrtPriceX96)
	q192 := new(big.Int).Lsh(big.NewInt(1), 192)
	if zeroForOne {
		out := new(big.Int).Mul(amountIn, p2)
		return out.Quo(out, q192)
	}
	out := new(big.Int).Mul(amountIn, q192)
	return out.Quo(out, p2)
}

// RemintFits reports whether a leg can be exercised with the pool at tick:
// the handler re-mints the leg's liquidity from the profit token alone
// (the market sends it nothing else), which takes the range lying wholly on
// the profit token's side of the price. With the collateral token0, the
// price at or above the range (tick >= tickUpper: all token1); with the
// collateral token1, below it (tick < tickLower: all token0). At a price
// inside the range the re-mint needs both tokens and the exercise reverts.
func RemintFits(tickLower, tickUpper, tick int, collateralIs0 bool) bool {
	if collateralIs0 {
		return tick >= tickUpper
	}
	return tick < tickLower
}
