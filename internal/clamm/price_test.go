package clamm

import (
	"math"
	"strconv"
	"testing"
)

// A strike named by the key the strikes chain showed finds its tick: the
// decimal.js prices of the vectors (code that is not ours) parse back to
// their ticks, on normal and inverted markets; a price between two ticks'
// names none.
func TestStrikeTickInvertsTheKey(t *testing.T) {
	t.Parallel()
	for _, c := range loadVectors(t).Prices {
		m := vectorMarkets[c.Market]
		price, err := strconv.ParseFloat(c.Float, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := m.StrikeTick(price); !ok || got != c.Tick {
			t.Errorf("%s %s: tick %d %v, want %d", c.Market, c.Float, got, ok, c.Tick)
		}
		if _, ok := m.StrikeTick(math.Nextafter(price, math.Inf(1))); ok {
			t.Errorf("%s: the float after %s names a tick", c.Market, c.Float)
		}
	}
	m := vectorMarkets["normal"]
	for _, tick := range []int{MinTick, MinTick + 1, -1, 0, 1, MaxTick - 1, MaxTick} {
		if got, ok := m.StrikeTick(m.TickPrice(tick)); !ok || got != tick {
			t.Errorf("tick %d: %d %v", tick, got, ok)
		}
	}
	for _, p := range []float64{0, -1, math.Inf(1), math.NaN(), 1e300, 1e-300} {
		if got, ok := m.StrikeTick(p); ok {
			t.Errorf("price %v names tick %d", p, got)
		}
	}
}
