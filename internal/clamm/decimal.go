package clamm

import (
	"math/big"
	"strings"
)

// PercentPlaces is how many fractional digits utilization and APR carry.
// Values are truncated toward zero, never rounded up, so a range shows
// "100" only when it is fully used.
const PercentPlaces = 6

// FormatUnits writes raw / 10^decimals as an exact decimal string with no
// trailing zeros ("1.5", "0.000001", "42"). No rounding happens: a base-unit
// amount always has a finite decimal form.
func FormatUnits(raw *big.Int, decimals int) string {
	return formatScaled(raw, decimals)
}

// Percent returns floor(num * 100 * 10^PercentPlaces / den) / 10^PercentPlaces
// as a decimal string, "0" when den is zero.
func Percent(num, den *big.Int) string {
	if den.Sign() == 0 {
		return "0"
	}
	scaled := new(big.Int).Mul(num, big.NewInt(100))
	scaled.Mul(scaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(PercentPlaces), nil))
	scaled.Quo(scaled, den)
	return formatScaled(scaled, PercentPlaces)
}

// formatScaled writes v / 10^places exactly, trimming trailing zeros.
func formatScaled(v *big.Int, places int) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if places > 0 {
		if len(digits) <= places {
			digits = strings.Repeat("0", places-len(digits)+1) + digits
		}
		intPart, frac := digits[:len(digits)-places], strings.TrimRight(digits[len(digits)-places:], "0")
		digits = intPart
		if frac != "" {
			digits += "." + frac
		}
	}
	if neg && digits != "0" {
		return "-" + digits
	}
	return digits
}
