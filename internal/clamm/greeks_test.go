package clamm

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// Greeks against testdata/vectors/greeks.json, written once by gen.mjs from
// the npm greeks 1.0.0 and black-scholes 1.1.0 packages (an implementation
// outside the project; CI regenerates and diffs the file): 1e-9 relative.
func TestBlackScholesGreeksVectors(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/vectors/greeks.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Greeks []struct {
			Kind                             string
			S, K, T, V, R                    float64
			Price, Delta, Gamma, Theta, Vega float64
		}
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Greeks) < 100 {
		t.Fatalf("only %d vectors", len(f.Greeks))
	}
	for _, c := range f.Greeks {
		g := BlackScholes(BSInput{c.Kind == "call", c.S, c.K, c.T, c.V, c.R})
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"price", g.Price, c.Price}, {"delta", g.Delta, c.Delta}, {"gamma", g.Gamma, c.Gamma}, {"theta", g.Theta, c.Theta}, {"vega", g.Vega, c.Vega}} {
			if !closeRel(x.got, x.want, 1e-9) {
				t.Errorf("%s s=%v k=%v t=%v v=%v r=%v: %s %v, library %v", c.Kind, c.S, c.K, c.T, c.V, c.R, x.name, x.got, x.want)
			}
		}
	}
}

func closeRel(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

func TestBlackScholesDegenerate(t *testing.T) {
	if g := BlackScholes(BSInput{IsCall: true, S: 3000, K: 2900, V: 0.5}); g.Price != 100 || g.Delta != 0 {
		t.Errorf("expired call: %+v", g)
	}
	if g := BlackScholes(BSInput{S: 3000, K: 2900, T: 0.1}); g.Price != 0 || g.Vega != 0 {
		t.Errorf("zero-vol put: %+v", g)
	}
}
