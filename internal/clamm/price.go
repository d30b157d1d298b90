package clamm

import (
	"math"
	"math/big"
	"strconv"
)

// floatPrec is the working precision for 1.0001^tick. At 512 bits the
// accumulated error over the ~40 multiplications of a square-and-multiply is
// far below float64's half-ulp, so the final Float64() is correctly rounded.
const floatPrec = 512

// Market describes the two tokens of a pool from the option market's view:
// which one is the call asset and how many decimals each has.
type Market struct {
	Token0IsCall bool
	Decimals0    int
	Decimals1    int
}

// TickPrice is the price of one whole call asset in whole put assets at tick t:
// 1.0001^t * 10^(dec0-dec1) when token0 is the call asset, otherwise
// 10^(dec1-dec0) / 1.0001^t. The result is the float64 nearest the exact
// value, so its shortest decimal form is a stable strike key.
func (m Market) TickPrice(tick int) float64 {
	p := pow10001(tick)
	if m.Token0IsCall {
		p.Mul(p, pow10(m.Decimals0-m.Decimals1))
	} else {
		p.Quo(pow10(m.Decimals1-m.Decimals0), p)
	}
	f, _ := p.Float64()
	return f
}

// SqrtPriceX96Price is the price of one whole call asset in whole put assets
// for a pool at sqrtPriceX96: (s/2^96)^2 scaled by decimals, inverted when the
// call asset is token1. Computed as an exact rational, then rounded once.
func (m Market) SqrtPriceX96Price(sqrtPriceX96 *big.Int) float64 {
	if sqrtPriceX96.Sign() == 0 {
		return 0
	}
	num := new(big.Int).Mul(sqrtPriceX96, sqrtPriceX96)
	den := new(big.Int).Lsh(big.NewInt(1), 192)
	if !m.Token0IsCall {
		num, den = den, num
	}
	r := new(big.Rat).SetFrac(num, den)
	shift := m.Decimals0 - m.Decimals1
	if !m.Token0IsCall {
		shift = -shift
	}
	scale := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(shift))), nil))
	if shift >= 0 {
		r.Mul(r, scale)
	} else {
		r.Quo(r, scale)
	}
	f, _ := r.Float64()
	return f
}

// CallStrikeTick and PutStrikeTick name the tick whose price is the strike:
// the contract prices a call at its range's upper tick and a put at its lower
// tick, for normal and inverted markets alike.
func CallStrikeTick(tickLower, tickUpper int) int { return tickUpper }

// PutStrikeTick: see CallStrikeTick.
func PutStrikeTick(tickLower, tickUpper int) int { return tickLower }

// StrikeTick is the tick whose TickPrice is exactly price, and whether
// there is one: the inverse of the strikes chain's key, for a client that
// names a strike by the key it was shown. Neighbouring ticks' prices differ
// by a factor of 1.0001, far more than a float64's precision, so at most
// one tick matches; the logarithm only says where to look.
func (m Market) StrikeTick(price float64) (int, bool) {
	if !(price > 0) || math.IsInf(price, 0) {
		return 0, false
	}
	// log10(price) = t*log10(1.0001) + (dec0-dec1) when token0 is the call
	// asset, (dec1-dec0) - t*log10(1.0001) otherwise.
	est := (math.Log10(price) - float64(m.Decimals0-m.Decimals1)) / math.Log10(1.0001)
	if !m.Token0IsCall {
		est = (float64(m.Decimals1-m.Decimals0) - math.Log10(price)) / math.Log10(1.0001)
	}
	if math.IsNaN(est) || est < MinTick-2 || est > MaxTick+2 {
		return 0, false
	}
	t0 := int(math.Round(est))
	for d := 0; d <= 2; d++ {
		for _, t := range []int{t0 - d, t0 + d} {
			if t >= MinTick && t <= MaxTick && m.TickPrice(t) == price {
				return t, true
			}
		}
	}
	return 0, false
}

// FormatPrice is the shortest decimal string that parses back to p, never in
// exponent form: the strike key of the strikes chain.
func FormatPrice(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64)
}

func pow10001(tick int) *big.Float {
	base, _ := new(big.Float).SetPrec(floatPrec).SetString("1.0001")
	result := new(big.Float).SetPrec(floatPrec).SetInt64(1)
	n := tick
	if n < 0 {
		n = -n
	}
	for n > 0 {
		if n&1 == 1 {
			result.Mul(result, base)
		}
		base.Mul(base, base)
		n >>= 1
	}
	if tick < 0 {
		result.Quo(new(big.Float).SetPrec(floatPrec).SetInt64(1), result)
	}
	return result
}

func pow10(exp int) *big.Float {
	v := new(big.Float).SetPrec(floatPrec).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil))
	if exp < 0 {
		return v.Quo(new(big.Float).SetPrec(floatPrec).SetInt64(1), v)
	}
	return v
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
