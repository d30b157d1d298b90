package clamm

import "math/big"

// SecondsPerYear is the year of the Greeks of a held option: 365 days,
// the year theta's "per day" divides (BlackScholes).
const SecondsPerYear = 365 * 86400

// HeldOption is an option held, in the contracts' own units: what a
// portfolio sums the Greeks of.
type HeldOption struct {
	IsCall bool
	// Spot and Strike are put-asset base units per one whole call asset,
	// as getCurrentPricePerCallAsset and getPricePerCallAssetViaTick
	// answer them.
	Spot, Strike *big.Int
	// Collateral is what the option's legs hold: call-asset base units
	// for a call, put-asset base units for a put.
	Collateral *big.Int
	// Remaining is the time to expiry in seconds, IV the volatility in
	// percent (ttlToVol's unit). Spot, Strike, Collateral and IV are
	// never nil.
	Remaining                 uint64
	IV                        *big.Int
	CallDecimals, PutDecimals int
}

// Size is the position's number of call assets, as mintOption counts an
// option's amount: a call's collateral in whole call assets; a put's
// floor(collateral * 10^putDecimals / strike) scaled back by
// 10^putDecimals (collateral over strike: the call assets the put sells
// at the strike). Zero for a put with no strike.
func (p HeldOption) Size() float64 {
	if p.IsCall {
		return ratio(p.Collateral, tenTo(p.CallDecimals))
	}
	if p.Strike.Sign() <= 0 {
		return 0
	}
	amount := new(big.Int).Mul(p.Collateral, tenTo(p.PutDecimals))
	amount.Quo(amount, p.Strike)
	return ratio(amount, tenTo(p.PutDecimals))
}

// HeldGreeks are the Black-Scholes Greeks of the whole position: one
// call asset's Greeks (BlackScholes at spot and strike in whole put-asset
// units, T = Remaining / SecondsPerYear, V = IV / 100, r = 0) times Size.
// Delta is then in call assets (a put's negative: a held put gains as the
// price falls), Gamma in call assets per put-asset unit of price, Theta in
// put-asset units per day, Vega in put-asset units per IV point, Price the
// position's Black-Scholes value in put-asset units.
//
// T is the remaining time in seconds, not the contracts'
// floor(ttl / 864) / 36500: that floor prices a purchase at its ttl, while
// a held option's time is whatever is left, and the floor would zero the
// Greeks of an option in its last 864 seconds, when its gamma is largest.
func HeldGreeks(p HeldOption) Greeks {
	unit := tenTo(p.PutDecimals)
	g := BlackScholes(BSInput{
		IsCall: p.IsCall,
		S:      ratio(p.Spot, unit),
		K:      ratio(p.Strike, unit),
		T:      float64(p.Remaining) / SecondsPerYear,
		V:      ratio(p.IV, big.NewInt(100)),
	})
	n := p.Size()
	return Greeks{Price: g.Price * n, Delta: g.Delta * n, Gamma: g.Gamma * n, Theta: g.Theta * n, Vega: g.Vega * n}
}

// ratio is a/b as the nearest float64 (big.Rat: exact until the one
// rounding).
func ratio(a, b *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(a, b).Float64()
	return f
}

func tenTo(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
