package systemtest

import (
	"cmp"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// proxied starts an in-process toxiproxy in front of target (an
// httptest server) on loopback and returns it with its URL.
func proxied(t *testing.T, srv *toxiproxy.ApiServer, name string, target *httptest.Server) (*toxiproxy.Proxy, string) {
	t.Helper()
	p := toxiproxy.NewProxy(srv, name, "127.0.0.1:0", strings.TrimPrefix(target.URL, "http://"))
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p, "http://" + p.Listen
}

func addToxic(t *testing.T, p *toxiproxy.Proxy, json string) {
	t.Helper()
	if _, err := p.Toxics.AddToxicJson(strings.NewReader(json)); err != nil {
		t.Fatal(err)
	}
}

// Faults on real sockets, through toxiproxy: a connection reset mid-body
// and a truncated body are upstream errors (502), a body trickling slower
// than the upstream deadline and a silent hang are timeouts (504). Nothing
// erroneous is cached: once the toxic is gone the next request is a MISS
// that succeeds.
func TestToxiproxyFaults(t *testing.T) {
	f := scenario.NewFakes(t, demoScenario(t))
	sgSrv, rpcSrv := httptest.NewServer(f.Subgraph), httptest.NewServer(f.Node)
	defer sgSrv.Close()
	defer rpcSrv.Close()
	zerolog.SetGlobalLevel(zerolog.Disabled) // toxics log through zerolog's global logger
	tp := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	sgProxy, sgURL := proxied(t, tp, "subgraph", sgSrv)
	rpcProxy, rpcURL := proxied(t, tp, "rpc", rpcSrv)

	cases := []struct {
		name  string
		proxy *toxiproxy.Proxy
		toxic string
		codes []string // accepted codes: how a cut shows depends on where it lands
		want  int
		// deadline is the upstream deadline, 2 s unless set. It is shared
		// by both upstreams, so under a loaded machine the one not at fault
		// could reach a shorter one first (CI saw a subgraph hang answered
		// RPC_TIMEOUT after 687 ms of a 300 ms deadline), and a fault that
		// must show as an error gets one no scheduler can reach before the
		// fault lands (a reset answered 504 after 441 ms).
		deadline time.Duration
	}{
		// The strikes chain's first query is the indexed block's _meta
		// (about 300 bytes with its headers): the cut falls in its answer
		// (502), or in the strikes' answer, which then ends early (503)
		// or stalls until the deadline (504). Never a 500, never a 200.
		{"subgraph body cut after 300 bytes", sgProxy, `{"name":"t","type":"limit_data","stream":"downstream","attributes":{"bytes":300}}`, []string{"SUBGRAPH_ERROR", "SUBGRAPH_UNAVAILABLE", "SUBGRAPH_TIMEOUT"}, 0, 0},
		{"subgraph reset mid-body", sgProxy, `{"name":"t","type":"reset_peer","stream":"downstream","attributes":{"timeout":1}}`, []string{"SUBGRAPH_ERROR", "SUBGRAPH_UNAVAILABLE"}, 0, 10 * time.Second},
		{"subgraph slow body", sgProxy, `{"name":"t","type":"bandwidth","stream":"downstream","attributes":{"rate":1}}`, []string{"SUBGRAPH_TIMEOUT"}, 504, 0},
		{"subgraph hang", sgProxy, `{"name":"t","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`, []string{"SUBGRAPH_TIMEOUT"}, 504, 0},
		{"rpc body cut after 200 bytes", rpcProxy, `{"name":"t","type":"limit_data","stream":"downstream","attributes":{"bytes":200}}`, []string{"RPC_ERROR", "RPC_UNAVAILABLE"}, 0, 10 * time.Second},
		{"rpc hang", rpcProxy, `{"name":"t","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`, []string{"RPC_TIMEOUT"}, 504, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := arbitrumOnly()
			cfg.Chains[42161].SubgraphURL, cfg.Chains[42161].RPCURL = sgURL, rpcURL
			deadline := cmp.Or(c.deadline, 2*time.Second)
			cfg.UpstreamTimeout = config.Duration(deadline)
			srv := newApp(t, app.Options{Config: cfg})
			addToxic(t, c.proxy, c.toxic)
			start := time.Now()
			rec := get(t, srv, strikes)
			took := time.Since(start)
			e := decodeError(t, rec)
			ok := false
			for _, code := range c.codes {
				ok = ok || e.Code == code
			}
			if !ok || (c.want != 0 && rec.Code != c.want) || rec.Code < 500 {
				t.Errorf("status %d code %s, want %v %v", rec.Code, e.Code, c.want, c.codes)
			}
			if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			t.Logf("answered %d %s in %s (upstream deadline %s)", rec.Code, e.Code, took.Round(time.Millisecond), deadline)
			if err := c.proxy.Toxics.RemoveToxic(context.Background(), "t"); err != nil {
				t.Fatal(err)
			}
			if rec := get(t, srv, strikes); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Fatalf("after the fault: %d %s %s", rec.Code, rec.Header().Get("X-Cache"), rec.Body)
			}
		})
	}
}

// /readyz while the node hangs on a real socket: every concurrent probe
// is answered 503 naming RPC_TIMEOUT, after one shared probe cut at its
// deadline, instead of each probe holding its own upstream calls.
func TestToxiproxyReadyzWithAHangingNode(t *testing.T) {
	f := scenario.NewFakes(t, demoScenario(t))
	sgSrv, rpcSrv := httptest.NewServer(f.Subgraph), httptest.NewServer(f.Node)
	defer sgSrv.Close()
	defer rpcSrv.Close()
	zerolog.SetGlobalLevel(zerolog.Disabled)
	tp := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	rpcProxy, rpcURL := proxied(t, tp, "rpc", rpcSrv)
	cfg := arbitrumOnly()
	cfg.Chains[42161].SubgraphURL, cfg.Chains[42161].RPCURL = sgSrv.URL, rpcURL
	cfg.UpstreamTimeout = config.Duration(300 * time.Millisecond)
	srv := newApp(t, app.Options{Config: cfg})
	addToxic(t, rpcProxy, `{"name":"t","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
	const n = 50
	var wg sync.WaitGroup
	bodies := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rec := get(t, srv, "/readyz")
			codes[i], bodies[i] = rec.Code, rec.Body.String()
		}(i)
	}
	wg.Wait()
	queries := f.Subgraph.Requests()
	for i := range n {
		if codes[i] != http.StatusServiceUnavailable || !strings.Contains(bodies[i], "RPC_TIMEOUT") {
			t.Fatalf("probe %d: %d %s", i, codes[i], bodies[i])
		}
	}
	if queries > 2 {
		t.Errorf("%d subgraph _meta queries for %d concurrent probes", queries, n)
	}
}
