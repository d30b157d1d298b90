package systemtest

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// Requests that time out against a hanging subgraph, and requests answered
// with garbage, leave no goroutine behind once they are answered: the
// count returns to what it was before them (idle keep-alive connections
// closed on both sides).
func TestNoGoroutineOutlivesItsRequest(t *testing.T) {
	f := scenario.NewFakes(t, demoScenario(t))
	rpcSrv := httptest.NewServer(f.Node)
	defer rpcSrv.Close()
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	defer hang.Close()
	defer close(done)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"data": {"strikes": [`)) }))
	defer garbage.Close()

	// settle counts the gateway's goroutines: the fixture servers' own
	// connection goroutines (net/http.(*conn).serve) are not the gateway's.
	settle := func() int {
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		buf := make([]byte, 1<<20)
		n := 0
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if !strings.Contains(g, "net/http.(*conn).serve") {
				n++
			}
		}
		return n
	}
	for _, sg := range []string{hang.URL, garbage.URL} {
		cfg := arbitrumOnly()
		cfg.Chains[42161].SubgraphURL, cfg.Chains[42161].RPCURL = sg, rpcSrv.URL
		cfg.UpstreamTimeout = config.Duration(50 * time.Millisecond)
		srv := newApp(t, app.Options{Config: cfg})
		get(t, srv, strikes) // warm: market immutables, connections
		before := settle()
		for i := 0; i < 20; i++ {
			if rec := get(t, srv, gateway.PathStrikesChain+"?optionMarket="+wethUSDC+"&chainId=42161&callsReach=1&putsReach="+itoa(i+1)); rec.Code < 500 {
				t.Fatalf("%s: status %d", sg, rec.Code)
			}
		}
		after := settle()
		for i := 0; i < 200 && after > before; i++ { // goroutines unwinding after their answer
			time.Sleep(10 * time.Millisecond)
			after = settle()
		}
		if after > before {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines before 20 failing requests, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
		}
	}
}

func itoa(i int) string {
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}
