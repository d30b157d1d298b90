package clamm

import "math"

// Greeks are an option's Black-Scholes sensitivities, in the units option
// chains quote them in: Delta per unit of the underlying, Gamma per unit of
// price per unit of the underlying, Theta per day (a 365-day year), Vega per
// volatility point (0.01 of volatility). Price is the Black-Scholes value.
type Greeks struct {
	Price, Delta, Gamma, Theta, Vega float64
}

// BSInput is a European option under Black-Scholes: a call (IsCall) or put
// on spot S with strike K, T years to expiry, volatility V (0.5 is 50%) and
// continuous rate R, S and K in one price unit.
type BSInput struct {
	IsCall        bool
	S, K, T, V, R float64
}

// BlackScholes gives the value and Greeks of the option in. The Stryke pricing contracts use this model
// with r = 0 and t = floor(ttl / 864) / 36500 (clamm
// src/pricing/external/BlackScholes.sol); the gateway computes the Greeks
// from the contract's own IV and price, never the premium. Inputs that
// make d1 undefined (t or v not positive, s or k not positive) give zero
// Greeks and the intrinsic value.
func BlackScholes(in BSInput) Greeks {
	isCall, s, k, t, v, r := in.IsCall, in.S, in.K, in.T, in.V, in.R
	if !(s > 0 && k > 0 && t > 0 && v > 0) {
		intrinsic := math.Max(s-k, 0)
		if !isCall {
			intrinsic = math.Max(k-s, 0)
		}
		return Greeks{Price: intrinsic}
	}
	sqrtT := math.Sqrt(t)
	d1 := (math.Log(s/k) + (r+v*v/2)*t) / (v * sqrtT)
	d2 := d1 - v*sqrtT
	disc := k * math.Exp(-r*t)
	pdf := math.Exp(-d1*d1/2) / math.Sqrt(2*math.Pi)
	g := Greeks{
		Gamma: pdf / (s * v * sqrtT),
		Vega:  s * sqrtT * pdf / 100,
	}
	decay := -v * s * pdf / (2 * sqrtT)
	if isCall {
		g.Price = s*normCDF(d1) - disc*normCDF(d2)
		g.Delta = normCDF(d1)
		g.Theta = (decay - r*disc*normCDF(d2)) / 365
	} else {
		g.Price = disc*normCDF(-d2) - s*normCDF(-d1)
		g.Delta = -normCDF(-d1) // not N(d1) - 1, which cancels to 0 far out of the money
		g.Theta = (decay + r*disc*normCDF(-d2)) / 365
	}
	return g
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
