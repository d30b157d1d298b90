package clamm

import "math/big"

var (
	q192 = new(big.Int).Lsh(big.NewInt(1), 192) // Q192 is 2^192
	// maxUint128 is type(uint128).max, the bound of _getPrice's exact branch.
	maxUint128 = new(big.Int).Sub(q128, big.NewInt(1))
)

// PricePerCallAsset is the price of one whole call asset in put-asset base
// units at a pool's sqrtPriceX96, as the option market's
// getCurrentPricePerCallAsset computes it (DopexV2OptionMarketV2._getPrice):
// sqrtP² scaled by 10^callDecimals over 2^192 when the call asset is
// token0, the inverse otherwise, floored; above 2^128 the square is first
// floored to X128, as the contract does to stay within 256 bits, so the two
// agree to the unit. 0 at a zero price.
func PricePerCallAsset(sqrtPriceX96 *big.Int, callIs0 bool, callDecimals int) *big.Int {
	if sqrtPriceX96.Sign() <= 0 {
		return new(big.Int)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(callDecimals)), nil)
	sq := new(big.Int).Mul(sqrtPriceX96, sqrtPriceX96)
	one := q192
	if sqrtPriceX96.Cmp(maxUint128) > 0 {
		sq.Rsh(sq, 64) // FullMath.mulDiv(s, s, 1 << 64): floored
		one = q128
	}
	if callIs0 {
		return sq.Div(sq.Mul(sq, unit), one)
	}
	if sq.Sign() == 0 {
		return new(big.Int)
	}
	num := new(big.Int).Mul(one, unit)
	return num.Div(num, sq)
}
