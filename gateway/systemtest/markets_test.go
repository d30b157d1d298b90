package systemtest

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// chainId is option-markets' only parameter: missing, repeated, malformed
// or not configured is a 400 naming it, before any upstream is asked.
func TestOptionMarketsParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	for _, q := range []string{"", "chainId=", "chainId=5", "chainId=42161&chainId=42161", "chainId=0x%20a4b1", "chainId=-42161", "chainId=99999999999999999999999"} {
		rec := get(t, srv, gateway.PathOptionMarkets+"?"+q)
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != "chainId" {
			t.Errorf("?%s: status %d, %+v", q, rec.Code, e)
		}
	}
	if f.Subgraph.Requests() != 0 || f.Node.Requests() != 0 {
		t.Error("invalid requests reached an upstream")
	}
}

// An answer carries the subgraph's block and an ETag; the second request
// is a hit that asks no upstream.
func TestOptionMarketsCached(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	a := get(t, srv, gateway.PathOptionMarkets+"?chainId=42161")
	var markets []struct {
		Address string `json:"address"`
	}
	if a.Code != http.StatusOK || a.Header().Get("X-Subgraph-Block") == "" || a.Header().Get("ETag") == "" ||
		json.Unmarshal(a.Body.Bytes(), &markets) != nil || len(markets) != 1 || markets[0].Address != wethUSDC {
		t.Fatalf("%d %v: %s", a.Code, a.Header(), a.Body)
	}
	sg, node := f.Subgraph.Requests(), f.Node.Requests()
	b := get(t, srv, gateway.PathOptionMarkets+"?chainId=42161")
	if b.Header().Get("X-Cache") != "HIT" || b.Body.String() != a.Body.String() || f.Subgraph.Requests() != sg || f.Node.Requests() != node {
		t.Fatalf("second request: %s", b.Header().Get("X-Cache"))
	}
}
