package clamm

import "math/big"

var (
	two128 = new(big.Int).Lsh(big.NewInt(1), 128)
	two256 = new(big.Int).Lsh(big.NewInt(1), 256)
)

// PoolGrowth is a Uniswap V3 pool's fee growth per unit of liquidity of
// one token: global, and outside a range's lower and upper ticks (ticks'
// feeGrowthOutside).
type PoolGrowth struct {
	Global, LowerOutside, UpperOutside *big.Int
}

// Inside is the growth inside [tickLower, tickUpper) now
// (Tick.getFeeGrowthInside): the global growth less what accrued below the
// lower tick and above the upper one, each side's outside value taken as
// the current tick puts it, all modulo 2^256 as the pool computes it. It
// is what a poke of a position in the range (a burn) records as its
// feeGrowthInsideLast.
func (g PoolGrowth) Inside(tickCurrent, tickLower, tickUpper int) *big.Int {
	below := new(big.Int).Set(g.LowerOutside)
	if tickCurrent < tickLower {
		below.Sub(g.Global, g.LowerOutside)
	}
	above := new(big.Int).Set(g.UpperOutside)
	if tickCurrent >= tickUpper {
		above.Sub(g.Global, g.UpperOutside)
	}
	in := new(big.Int).Sub(g.Global, below)
	in.Sub(in, above)
	return in.Mod(in, two256)
}

// RangeFees is what a single-tick handler owes one range in swap fees not
// compounded into it yet, and what it pays a burn or a reservation of it.
type RangeFees struct {
	TickLower, TickUpper int
	// Owed is tokenIds' tokensOwed0/1: fees collected by pokes so far.
	Owed [2]*big.Int
	// Last is tokenIds' feeGrowthInside0/1LastX128: the pool's growth at
	// the handler's last poke; Now the pool's growth inside the range now
	// (PoolGrowth.Inside).
	Last, Now [2]*big.Int
	// Earning is the handler's liquidity in the pool position, which the
	// growth since the last poke accrued on: totalLiquidity +
	// reservedLiquidity - liquidityUsed (V2 handlers), totalLiquidity -
	// liquidityUsed (V1).
	Earning *big.Int
	// TotalLiquidity is tokenIds' totalLiquidity, whose share a burn pays.
	TotalLiquidity *big.Int
}

// Paid is what a burn (or a V2 handler's reservation) of liquidity of the
// range, made now, pays in fees beside the liquidity itself: the handler
// first pokes the pool position, adding floor((Now - Last) * Earning /
// 2^128) to what it owes (uint128, as its unchecked arithmetic keeps it),
// then pays owed * amount(liquidity) / amount(totalLiquidity) of each
// token, the amounts being what each liquidity spans across the whole
// range, whatever the price (getAmount0/1ForLiquidity at its two ticks,
// rounded down), so a one-sided range still shares both tokens' fees
// pro rata. Liquidity
// above totalLiquidity (the whole supply's worth is totalLiquidity + 1,
// which no burn can take) counts as totalLiquidity: all that is owed.
func (f RangeFees) Paid(liquidity *big.Int) (fee0, fee1 *big.Int, err error) {
	if liquidity.Cmp(f.TotalLiquidity) > 0 {
		liquidity = f.TotalLiquidity
	}
	sa, err := SqrtRatioAtTick(f.TickLower)
	if err != nil {
		return nil, nil, err
	}
	sb, err := SqrtRatioAtTick(f.TickUpper)
	if err != nil {
		return nil, nil, err
	}
	earning := f.Earning
	if earning.Sign() < 0 {
		earning = new(big.Int)
	}
	amount := [2]func(l *big.Int) *big.Int{
		func(l *big.Int) *big.Int { return Amount0ForLiquidity(sa, sb, l) },
		func(l *big.Int) *big.Int { return Amount1ForLiquidity(sa, sb, l) },
	}
	var out [2]*big.Int
	for k := range out {
		growth := new(big.Int).Sub(f.Now[k], f.Last[k])
		growth.Mod(growth, two256)
		owed := growth.Mul(growth, earning)
		owed.Rsh(owed, 128)
		owed.Add(owed, f.Owed[k])
		owed.Mod(owed, two128)
		out[k] = new(big.Int)
		if total := amount[k](f.TotalLiquidity); total.Sign() > 0 {
			out[k].Mul(owed, amount[k](liquidity))
			out[k].Quo(out[k], total)
		}
	}
	return out[0], out[1], nil
}
