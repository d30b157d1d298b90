package clamm

import (
	"math/big"
	"testing"
)

// heldGreeksTable was printed by the Python script below (Python 3.11's
// math module, written for this table apart from the gateway's code) from
// the inputs each row states: spot, strike and collateral in base units,
// remaining seconds, IV percent, the assets' decimals; then the position's
// delta, gamma, theta (per day) and vega (per IV point).
//
//	import math
//	rows = [  # kind, spot raw, strike raw, collateral raw, remaining s, iv %, call dec, put dec
//	    ("call", 3001904803, 3035106369, 250000000000000000, 25190, 50, 18, 6),
//	    ("put", 3001904803, 2970000000, 1500000000, 25190, 50, 18, 6),
//	    ("call", 91234567890, 91500000000, 12345678, 600, 72, 8, 6),
//	    ("put", 2000123456, 2020000000, 7000000000, 86399, 45, 18, 6),
//	    ("put", 3000000000, 2900000000, 4000000000, 3600, 60, 18, 6),
//	    ("call", 2000500000000000000000, 2100000000000000000000, 3000000000000000000, 25200, 55, 18, 18),
//	]
//	N = lambda x: 0.5 * (1 + math.erf(x / math.sqrt(2)))
//	for kind, s, k, c, rem, iv, cd, pd in rows:
//	    S, K = s / 10**pd, k / 10**pd
//	    T, v = rem / (365 * 86400), iv / 100
//	    size = c / 10**cd if kind == "call" else (c * 10**pd // k) / 10**pd
//	    d1 = (math.log(S / K) + v * v / 2 * T) / (v * math.sqrt(T))
//	    pdf = math.exp(-d1 * d1 / 2) / math.sqrt(2 * math.pi)
//	    delta = N(d1) if kind == "call" else -N(-d1)
//	    gamma = pdf / (S * v * math.sqrt(T))
//	    theta = -S * pdf * v / (2 * math.sqrt(T)) / 365
//	    vega = S * pdf * math.sqrt(T) / 100
//	    print(f'{{"{kind}", "{s}", "{k}", "{c}", {rem}, {iv}, {cd}, {pd}, {size*delta!r}, {size*gamma!r}, {size*theta!r}, {size*vega!r}}},')
var heldGreeksTable = []struct {
	kind                      string
	spot, strike, collateral  string
	remaining, iv             uint64
	callDec, putDec           int
	delta, gamma, theta, vega float64
}{
	{"call", "3001904803", "3035106369", "250000000000000000", 25190, 50, 18, 6, 0.055065274792181276, 0.001746170953348497, -5.388870406077626, 0.06284520626347008},
	{"put", "3001904803", "2970000000", "1500000000", 25190, 50, 18, 6, -0.11246116738637085, 0.0035496495519247, -10.954598337369136, 0.1277529315362632},
	{"call", "91234567890", "91500000000", "12345678", 600, 72, 8, 6, 0.021960800637281726, 0.00011222260612274642, -663.3478436071484, 0.127960617979774},
	{"put", "2000123456", "2020000000", "7000000000", 86399, 45, 18, 6, -2.2815211266153073, 0.02700101241564293, -29.963726334201482, 1.3317057569694826},
	{"put", "3000000000", "2900000000", "4000000000", 3600, 60, 18, 6, -8.364065493109307e-08, 2.3784959010833235e-08, -0.00010556611944534202, 1.4661961034075277e-07},
	{"call", "2000500000000000000000", "2100000000000000000000", "3000000000000000000", 25200, 55, 18, 18, 0.002765815715517095, 0.0003014144036115841, -0.4998545299707754, 0.0053014874390839815},
}

// HeldGreeks against the independent table, 1e-9 relative: the size (a
// put's collateral over its strike, as mintOption counts it), the
// remaining time in a 365-day year, the IV in percent and the units of
// every Greek. A put's delta is negative: a held put gains as the price
// falls, and a sign flipped anywhere fails here.
func TestHeldGreeksTable(t *testing.T) {
	num := func(s string) *big.Int {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("bad number %q", s)
		}
		return v
	}
	for _, c := range heldGreeksTable {
		g := HeldGreeks(HeldOption{IsCall: c.kind == "call", Spot: num(c.spot), Strike: num(c.strike), Collateral: num(c.collateral),
			Remaining: c.remaining, IV: new(big.Int).SetUint64(c.iv), CallDecimals: c.callDec, PutDecimals: c.putDec})
		if (c.kind == "put") != (g.Delta < 0) {
			t.Errorf("%s at %s: delta %v has the wrong sign", c.kind, c.strike, g.Delta)
		}
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"delta", g.Delta, c.delta}, {"gamma", g.Gamma, c.gamma}, {"theta", g.Theta, c.theta}, {"vega", g.Vega, c.vega}} {
			if !closeRel(x.got, x.want, 1e-9) {
				t.Errorf("%s spot %s strike %s size %s, %d s at %d%%: %s %v, the table says %v", c.kind, c.spot, c.strike, c.collateral, c.remaining, c.iv, x.name, x.got, x.want)
			}
		}
	}
}

// A put with no strike has no size (mintOption would divide by zero), and
// an option with no time left has no Greeks but its intrinsic value.
func TestHeldGreeksDegenerate(t *testing.T) {
	put := HeldOption{Spot: big.NewInt(3000e6), Strike: new(big.Int), Collateral: big.NewInt(1e9), Remaining: 3600, IV: big.NewInt(50), CallDecimals: 18, PutDecimals: 6}
	if g := HeldGreeks(put); g != (Greeks{}) {
		t.Errorf("a put with strike 0: %+v", g)
	}
	call := HeldOption{IsCall: true, Spot: big.NewInt(3000e6), Strike: big.NewInt(2900e6), Collateral: big.NewInt(2e18), IV: big.NewInt(50), CallDecimals: 18, PutDecimals: 6}
	if g := HeldGreeks(call); g.Delta != 0 || g.Gamma != 0 || g.Theta != 0 || g.Vega != 0 || g.Price != 200 {
		t.Errorf("a call at expiry: %+v", g)
	}
}
