package clamm

import (
	"errors"
	"math/big"
	"strings"
)

// MaxSlippagePlaces is how many fractional digits a slippage may carry.
const MaxSlippagePlaces = 6

// Slippage is a tolerance in percent (1 means 1%), held as an exact
// fraction so applying it never goes through a float.
type Slippage struct {
	text string
	num  *big.Int // percent * 10^places
	den  *big.Int // 10^places
}

// ParseSlippage accepts a plain decimal ("1", "0.5", "2.25") with at most
// MaxSlippagePlaces fractional digits, greater than 0 and at most max.
func ParseSlippage(s string, max int64) (Slippage, error) {
	intPart, frac, hasDot := strings.Cut(s, ".")
	if intPart == "" || (hasDot && frac == "") || len(frac) > MaxSlippagePlaces || len(intPart) > 3 {
		return Slippage{}, errors.New("must be a decimal number like 1 or 0.5, with at most 6 decimals")
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return Slippage{}, errors.New("must be a decimal number like 1 or 0.5, with at most 6 decimals")
		}
	}
	num, _ := new(big.Int).SetString(intPart+frac, 10)
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	limit := new(big.Int).Mul(big.NewInt(max), den)
	if num.Sign() <= 0 || num.Cmp(limit) > 0 {
		return Slippage{}, errors.New("must be greater than 0 and at most " + big.NewInt(max).String())
	}
	return Slippage{text: s, num: num, den: den}, nil
}

// String is the slippage as given, in percent (what 1inch's API takes).
func (s Slippage) String() string { return s.text }

// MinOut is floor(out * (100 - slippage) / 100): the least a swap quoted at
// out may deliver. It only ever lowers the amount.
func (s Slippage) MinOut(out *big.Int) *big.Int {
	hundred := new(big.Int).Mul(big.NewInt(100), s.den)
	v := new(big.Int).Mul(out, new(big.Int).Sub(hundred, s.num))
	return v.Quo(v, hundred)
}
