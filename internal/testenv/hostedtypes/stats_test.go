package hostedtypes

import "testing"

// The checker refuses what the statistics clients' types refuse: a
// numeric string where a number is declared, a missing or unknown field,
// null; it lets the gateway's asOf envelope through where allowed only.
func TestStatsTypesHoldTheClients(t *testing.T) {
	fees, delta := StatsPaths["/clamm/stats/fees"], StatsPaths["/clamm/stats/delta"]
	for _, c := range []struct {
		body string
		typ  Type
		ok   bool
	}{
		{`12.5`, Number, true},
		{`"12.5"`, Number, false},
		{`null`, Number, false},
		{`{"asOf":{"number":1},"premiums":1.5,"protocolFees":0}`, fees, true},
		{`{"premiums":"1.5","protocolFees":0}`, fees, false},
		{`{"premiums":1.5}`, fees, false},
		{`{"premiums":1,"protocolFees":0,"total":1}`, fees, false},
		{`[{"delta":-1.25,"timestamp":1700000000}]`, delta, true},
		{`[{"delta":-1.25,"timestamp":1700000000,"asOf":{}}]`, delta, false},
		{`{"user":"0x1","firstTradeTimestamp":1,"lastTradeTimestamp":2,"pnl":0,"premiumPaid":0,"volume":0,"roi":0,"totalOptionsBought":"1"}`, userPnl, false},
	} {
		if got := Check([]byte(c.body), c.typ); (len(got) == 0) != c.ok {
			t.Errorf("%s: %v, want ok %v", c.body, got, c.ok)
		}
	}
}
