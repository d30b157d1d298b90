package systemtest

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
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

// problem is chain id's first problem, "" when it has none.
func (r readiness) problem(id uint64) string {
	for _, c := range r.Chains {
		if c.ChainID == id && len(c.Problems) > 0 {
			return c.Problems[0]
		}
	}
	return ""
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
	t.Parallel()
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.MaxLagBlocks, o.ReadyTTL = 100, time.Nanosecond })
	if rec := get(t, srv, gateway.PathHealthz); rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("healthz %d", rec.Code)
	}
	if code, r := readyz(t, srv); code != http.StatusOK || !r.Ready {
		t.Fatalf("healthy upstreams: %d %+v", code, r)
	}
	// The subgraph falls 101 blocks behind the node's head.
	head := f.Subgraph.Store.Head()
	lagging := head
	lagging.Number -= 101
	f.Subgraph.Store.SetHead(lagging)
	code, r := readyz(t, srv)
	if code != http.StatusServiceUnavailable || r.Ready {
		t.Fatalf("lagging subgraph: %d %+v", code, r)
	}
	for _, c := range r.Chains {
		if c.ChainID == 42161 && (c.LagBlocks != 101 || len(c.Problems) != 1 || c.Problems[0] != problem.SubgraphLagging.Name()) {
			t.Fatalf("chain 42161: %+v", c)
		}
	}
	f.Subgraph.Store.SetHead(head)
	f.Subgraph.Fail = func(string) *graphnodetest.Failure { return &graphnodetest.Failure{Status: 503} }
	if code, r := readyz(t, srv); code != http.StatusServiceUnavailable || r.problem(42161) != "SUBGRAPH_UNAVAILABLE" {
		t.Fatalf("subgraph down: %d %+v", code, r)
	}
	f.Subgraph.Fail = nil
	// An RPC URL of another network.
	f.Node.ChainID = 1
	if code, r := readyz(t, srv); code != http.StatusServiceUnavailable || r.problem(42161) != "RPC_WRONG_CHAIN" {
		t.Fatalf("node of chain 1: %d %+v", code, r)
	}
	f.Node.ChainID = 0
	f.Node.Fail = func(string) int { return 500 }
	if code, r := readyz(t, srv); code != http.StatusServiceUnavailable || r.problem(42161) != "RPC_ERROR" {
		t.Fatalf("rpc failing: %d %+v", code, r)
	}
}

// 400 concurrent probes of /readyz share one probe of each upstream: the
// upstreams see one request each (per chain: eth_chainId,
// eth_blockNumber, _meta), not 800.
func TestReadyzProbesAreSharedAndCached(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	release := make(chan struct{})
	f.Subgraph.Fail = func(string) *graphnodetest.Failure { <-release; return nil }
	const n = 400
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i] = get(t, srv, gateway.PathReadyz).Code
		}(i)
	}
	eventually.True(t, "a probe reaches the subgraph", func() bool { return f.Subgraph.Requests() > 0 })
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Fatalf("probe %d: %d", i, c)
		}
	}
	if s, r := f.Subgraph.Requests(), f.Node.Requests(); s > 2 || r > 4 {
		t.Errorf("%d subgraph and %d rpc requests for %d probes", s, r, n)
	}
}
