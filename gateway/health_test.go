package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

type readiness struct {
	Ready  bool `json:"ready"`
	Chains []struct {
		ChainID   uint64   `json:"chainId"`
		Ready     bool     `json:"ready"`
		LagBlocks uint64   `json:"lagBlocks"`
		Problems  []string `json:"problems"`
	} `json:"chains"`
}

func readyz(t *testing.T, h http.Handler) (int, readiness) {
	t.Helper()
	rec := get(t, h, gateway.PathReadyz)
	var r readiness
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	return rec.Code, r
}

func TestHealthzAndReadyz(t *testing.T) {
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.MaxLagBlocks = 100 })
	if rec := get(t, srv, gateway.PathHealthz); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("healthz %d", rec.Code)
	}
	if code, r := readyz(t, srv); code != http.StatusOK || !r.Ready {
		t.Fatalf("healthy upstreams: %d %+v", code, r)
	}
	// The subgraph falls 101 blocks behind the node's head.
	f.Subgraph.Lock()
	f.Subgraph.Block -= 101
	f.Subgraph.Unlock()
	code, r := readyz(t, srv)
	if code != http.StatusServiceUnavailable || r.Ready {
		t.Fatalf("lagging subgraph: %d %+v", code, r)
	}
	for _, c := range r.Chains {
		if c.ChainID == 42161 && (c.LagBlocks != 101 || len(c.Problems) != 1 || c.Problems[0] != "SUBGRAPH_LAGGING") {
			t.Fatalf("chain 42161: %+v", c)
		}
	}
	f.Subgraph.Lock()
	f.Subgraph.Block += 101
	f.Subgraph.Unlock()
	f.Subgraph.Fail = func(string) *subgraphtest.Failure { return &subgraphtest.Failure{Status: 503} }
	if code, r := readyz(t, srv); code != http.StatusServiceUnavailable || r.Chains[1].Problems[0] != "SUBGRAPH_UNAVAILABLE" {
		t.Fatalf("subgraph down: %d %+v", code, r)
	}
	f.Subgraph.Fail = nil
	f.Node.Fail = func(string) int { return 500 }
	if code, r := readyz(t, srv); code != http.StatusServiceUnavailable || r.Chains[1].Problems[0] != "RPC_ERROR" {
		t.Fatalf("rpc failing: %d %+v", code, r)
	}
}
