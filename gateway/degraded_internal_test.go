package gateway

import (
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// A positions page with an add-on left unknown is encoded as a brief
// entry (cached for the prepare TTL at most, never shared); a whole one
// keeps the route's policy.
func TestDegradedPagesAreBriefEntries(t *testing.T) {
	whole := trade.PositionPage{{OptionID: "1"}}
	deg := trade.PositionPage{{OptionID: "1"}, {OptionID: "2"}}
	deg[1].Unknown = map[string]string{"autoExercise": "auto-exerciser not read"}
	sell := trade.ExpiringPage{{PositionRecord: trade.PositionRecord{OptionID: "3", SellOrderUnknown: "the book did not answer"}}}
	for _, c := range []struct {
		name  string
		v     any
		brief bool
	}{{"whole", whole, false}, {"degraded", deg, true}, {"expiring, sell order unknown", sell, true}} {
		e, err := encodeAt(c.v, 0, block.Ref{Number: 7})
		if err != nil || e.brief != c.brief {
			t.Errorf("%s: brief %v, want %v (%v)", c.name, e.brief, c.brief, err)
		}
	}
}
