package clamm

import (
	"errors"
	"fmt"
	"math/big"
)

// Tick bounds of Uniswap V3 (TickMath.MIN_TICK / MAX_TICK).
const (
	MinTick = -887272
	MaxTick = 887272
)

// ErrTickOutOfRange is returned for ticks outside [MinTick, MaxTick].
var ErrTickOutOfRange = errors.New("tick out of range")

// Q96 is 2^96, the fixed-point scale of sqrtPriceX96.
var Q96 = new(big.Int).Lsh(big.NewInt(1), 96)

var (
	q128      = new(big.Int).Lsh(big.NewInt(1), 128)
	q32       = new(big.Int).Lsh(big.NewInt(1), 32)
	maxUint   = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	tickMagic = mustHexes(
		"fff97272373d413259a46990580e213a",
		"fff2e50f5f656932ef12357cf3c7fdcc",
		"ffe5caca7e10e4e61c3624eaa0941cd0",
		"ffcb9843d60f6159c9db58835c926644",
		"ff973b41fa98c081472e6896dfb254c0",
		"ff2ea16466c96a3843ec78b326b52861",
		"fe5dee046a99a2a811c461f1969c3053",
		"fcbe86c7900a88aedcffc83b479aa3a4",
		"f987a7253ac413176f2b074cf7815e54",
		"f3392b0822b70005940c7a398e4b70f3",
		"e7159475a2c29b7443b29c7fa6e889d9",
		"d097f3bdfd2022b8845ad8f792aa5825",
		"a9f746462d870fdf8a65dc1f90e061e5",
		"70d869a156d2a1b890bb3df62baf32f7",
		"31be135f97d08fd981231505542fcfa6",
		"9aa508b5b7a84e1c677de54f3e99bc9",
		"5d6af8dedb81196699c329225ee604",
		"2216e584f5fa1ea926041bedfe98",
		"48a170391f7dc42444e8fa2",
	)
	tickMagicBit0 = mustHexes("fffcb933bd6fad37aa2d162d1a594001")[0]
)

func mustHexes(hs ...string) []*big.Int {
	out := make([]*big.Int, len(hs))
	for i, h := range hs {
		v, ok := new(big.Int).SetString(h, 16)
		if !ok {
			panic("clamm: bad constant " + h)
		}
		out[i] = v
	}
	return out
}

// SqrtRatioAtTick returns sqrt(1.0001^tick) * 2^96 exactly as Uniswap's
// TickMath.getSqrtRatioAtTick computes it (same constants, same rounding), so
// amounts derived from it match what the contracts move to the last unit.
func SqrtRatioAtTick(tick int) (*big.Int, error) {
	if tick < MinTick || tick > MaxTick {
		return nil, fmt.Errorf("%w: %d", ErrTickOutOfRange, tick)
	}
	abs := tick
	if abs < 0 {
		abs = -abs
	}
	ratio := new(big.Int)
	if abs&1 != 0 {
		ratio.Set(tickMagicBit0)
	} else {
		ratio.Set(q128)
	}
	for i, m := range tickMagic {
		if abs&(2<<i) != 0 {
			ratio.Mul(ratio, m)
			ratio.Rsh(ratio, 128)
		}
	}
	if tick > 0 {
		ratio.Div(maxUint, ratio)
	}
	// Round up when shifting from Q128.128 to Q64.96, as the contract does.
	rem := new(big.Int).Mod(ratio, q32)
	ratio.Rsh(ratio, 32)
	if rem.Sign() != 0 {
		ratio.Add(ratio, big.NewInt(1))
	}
	return ratio, nil
}

// Amount0ForLiquidity is LiquidityAmounts.getAmount0ForLiquidity:
// floor(L * 2^96 * (sb - sa) / sb / sa), with the two divisions done in that
// order (mulDiv by sb, then div by sa), which is what the contract rounds.
func Amount0ForLiquidity(sqrtA, sqrtB, liquidity *big.Int) *big.Int {
	sa, sb := sortedSqrt(sqrtA, sqrtB)
	if sa.Sign() == 0 {
		return new(big.Int)
	}
	num := new(big.Int).Lsh(liquidity, 96)
	num.Mul(num, new(big.Int).Sub(sb, sa))
	num.Quo(num, sb)
	return num.Quo(num, sa)
}

// Amount1ForLiquidity is LiquidityAmounts.getAmount1ForLiquidity:
// floor(L * (sb - sa) / 2^96).
func Amount1ForLiquidity(sqrtA, sqrtB, liquidity *big.Int) *big.Int {
	sa, sb := sortedSqrt(sqrtA, sqrtB)
	out := new(big.Int).Mul(liquidity, new(big.Int).Sub(sb, sa))
	return out.Rsh(out, 96)
}

// AmountsForLiquidity is LiquidityAmounts.getAmountsForLiquidity: the token
// amounts a position of liquidity L over [sa, sb] holds at price sqrtP.
func AmountsForLiquidity(sqrtP, sqrtA, sqrtB, liquidity *big.Int) (amount0, amount1 *big.Int) {
	sa, sb := sortedSqrt(sqrtA, sqrtB)
	switch {
	case sqrtP.Cmp(sa) <= 0:
		return Amount0ForLiquidity(sa, sb, liquidity), new(big.Int)
	case sqrtP.Cmp(sb) < 0:
		return Amount0ForLiquidity(sqrtP, sb, liquidity), Amount1ForLiquidity(sa, sqrtP, liquidity)
	default:
		return new(big.Int), Amount1ForLiquidity(sa, sb, liquidity)
	}
}

func sortedSqrt(a, b *big.Int) (*big.Int, *big.Int) {
	if a.Cmp(b) > 0 {
		return b, a
	}
	return a, b
}

// RangeAmounts gives the raw amounts of token0 and token1 that liquidity L
// represents over [tickLower, tickUpper] when the whole range is on one side
// of the price: amount0 if the range sits above the price, amount1 if below.
// Both are returned; the caller picks the one for the token the range holds.
func RangeAmounts(tickLower, tickUpper int, liquidity *big.Int) (amount0, amount1 *big.Int, err error) {
	sa, sb, err := sqrtRange(tickLower, tickUpper)
	if err != nil {
		return nil, nil, err
	}
	return Amount0ForLiquidity(sa, sb, liquidity), Amount1ForLiquidity(sa, sb, liquidity), nil
}

// sqrtRange is the sqrt prices at a range's two ticks.
func sqrtRange(tickLower, tickUpper int) (sa, sb *big.Int, err error) {
	if sa, err = SqrtRatioAtTick(tickLower); err != nil {
		return nil, nil, err
	}
	if sb, err = SqrtRatioAtTick(tickUpper); err != nil {
		return nil, nil, err
	}
	return sa, sb, nil
}
