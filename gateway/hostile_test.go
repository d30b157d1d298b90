package gateway_test

import (
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// field rewrites every value of a JSON string field in a Graph Node answer.
func field(name, value string) func(string, []byte) []byte {
	re := regexp.MustCompile(`"` + name + `":"[^"]*"`)
	return func(_ string, body []byte) []byte {
		return re.ReplaceAll(body, []byte(`"`+name+`":"`+value+`"`))
	}
}

// Answers an upstream should never give, in the upstreams' own framing:
// each is refused where it is decoded, as the upstream error it is (502),
// never a 500, never served, never cached.
func TestHostileUpstreamAnswers(t *testing.T) {
	history := gateway.PathExerciseHistory + "?" + query(historyParams, "", "", false)
	huge := new(big.Int).Lsh(big.NewInt(1), 300).String()
	tickOutOfRange := make([]byte, 64)
	tickOutOfRange[31] = 1
	new(big.Int).SetInt64(900_000).FillBytes(tickOutOfRange[32:])
	cases := []struct {
		name       string
		path       string
		warm       bool // one good answer first, so the market's immutables are cached
		subgraph   func(string, []byte) []byte
		slot0      []byte // the prime pool's slot0 return data
		wantStatus int
		wantCode   string
	}{
		// item 1: the warm path decodes slot0 like the cold one.
		{name: "slot0 short on a market already seen", path: strikes, warm: true, slot0: make([]byte, 32), wantStatus: 502, wantCode: "RPC_ERROR"},
		{name: "slot0 short on a market seen for the first time", path: strikes, slot0: make([]byte, 32), wantStatus: 502, wantCode: "RPC_ERROR"},
		{name: "slot0 tick out of range on a market already seen", path: strikes, warm: true, slot0: tickOutOfRange, wantStatus: 502, wantCode: "RPC_ERROR"},
		// item 3: a megabyte of digits is refused before big.Int parses it.
		{name: "number of a million digits", path: strikes, subgraph: field("totalLiquidity", strings.Repeat("7", 1<<20)), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		// item 7: a sqrtPriceX96 no pool can hold.
		{name: "sqrtPriceX96 of 300 bits in history", path: history, subgraph: field("sqrtPriceX96", huge), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "sqrtPriceX96 of 300 bits in strikes", path: strikes, subgraph: field("sqrtPriceX96", huge), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		// item 12: negative liquidity.
		{name: "negative total liquidity", path: strikes, subgraph: field("totalLiquidity", "-5"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "negative used liquidity", path: strikes, subgraph: field("usedLiquidity", "-1"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "negative profit in history", path: history, subgraph: field("totalProfit", "-1"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.StrikesTTL, o.HistoryTTL = time.Nanosecond, time.Nanosecond })
			if c.warm {
				if rec := get(t, srv, c.path); rec.Code != http.StatusOK {
					t.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
				}
			}
			pool := f.Node.Pools[demoScenario(t).Market.PrimePool]
			f.Subgraph.Rewrite, pool.Slot0Raw = c.subgraph, c.slot0
			rec := get(t, srv, c.path)
			if e := decodeError(t, rec); rec.Code != c.wantStatus || e.Code != c.wantCode {
				t.Fatalf("status %d code %s, want %d %s (%s)", rec.Code, e.Code, c.wantStatus, c.wantCode, e.Message)
			}
			f.Subgraph.Rewrite, pool.Slot0Raw = nil, nil
			if rec := get(t, srv, c.path); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Fatalf("after recovery: %d %s (an error was cached?)", rec.Code, rec.Header().Get("X-Cache"))
			}
		})
	}
}
