package clamm

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// MaxSlippagePlaces is how many fractional digits a slippage may carry.
const MaxSlippagePlaces = 6

// Slippage is a tolerance in percent (1 means 1%), held as an exact
// fraction num/den (den a power of ten) so applying it never goes through
// a float. Small integers suffice: at most 3 integer and 6 fractional digits.
type Slippage struct {
	num int64 // percent * den
	den int64 // 10^places
}

var errSlippageFormat = errors.New("must be a decimal number like 1 or 0.5, with at most 6 decimals")

// ParseSlippage accepts a plain decimal ("1", "0.5", "2.25") with at most
// MaxSlippagePlaces fractional digits, greater than 0 and at most max.
func ParseSlippage(s string, max int64) (Slippage, error) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") || len(frac) > MaxSlippagePlaces || len(intPart) > 3 {
		return Slippage{}, errSlippageFormat
	}
	num, den := int64(0), int64(1)
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return Slippage{}, errSlippageFormat
			}
			num = num*10 + int64(c-'0')
		}
	}
	for range frac {
		den *= 10
	}
	if num <= 0 || num > max*den {
		return Slippage{}, errors.New("must be greater than 0 and at most " + strconv.FormatInt(max, 10))
	}
	return Slippage{num: num, den: den}, nil
}

// String is the slippage in percent, shortest form ("1", "0.5"): what the
// 1inch API takes, and a cache key part under which "1" and "1.0" agree.
func (s Slippage) String() string { return string(s.Append(nil)) }

// Append appends String's text to b (cache keys are built without it
// allocating).
func (s Slippage) Append(b []byte) []byte {
	ip, fp := s.num/s.den, s.num%s.den
	b = strconv.AppendInt(b, ip, 10)
	if fp == 0 {
		return b
	}
	b = append(b, '.')
	start := len(b)
	b = strconv.AppendInt(b, fp+s.den, 10) // zero-padded to the den's digits behind a leading 1
	b = append(b[:start], b[start+1:]...)
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

// MinOut is floor(out * (100 - slippage) / 100): the least a swap quoted at
// out may deliver. It only ever lowers the amount.
func (s Slippage) MinOut(out *big.Int) *big.Int {
	hundred := big.NewInt(100 * s.den)
	v := new(big.Int).Mul(out, big.NewInt(100*s.den-s.num))
	return v.Quo(v, hundred)
}

// MaxIn is floor(cost * (100 + slippage) / 100): the most a payment quoted
// at cost may grow to before the payer refuses it. It only ever raises the
// amount.
func (s Slippage) MaxIn(cost *big.Int) *big.Int {
	hundred := big.NewInt(100 * s.den)
	v := new(big.Int).Mul(cost, big.NewInt(100*s.den+s.num))
	return v.Quo(v, hundred)
}
