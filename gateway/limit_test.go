package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

func TestRateLimitPerClient(t *testing.T) {
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) { o.RateLimit, o.RateBurst = 0.001, 2 })
	from := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, strikes, nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		return rec
	}
	for i := 0; i < 2; i++ {
		if rec := from("192.0.2.1:1000"); rec.Code != http.StatusOK {
			t.Fatalf("request %d within the burst: %d", i, rec.Code)
		}
	}
	rec := from("192.0.2.1:1001") // same client, another port
	if e := decodeError(t, rec); rec.Code != http.StatusTooManyRequests || e.Code != "RATE_LIMITED" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("over the limit: %d %+v Retry-After %q", rec.Code, e, rec.Header().Get("Retry-After"))
	}
	if rec := from("192.0.2.2:1000"); rec.Code != http.StatusOK {
		t.Fatalf("another client: %d", rec.Code)
	}
}

// Fills beyond MaxFills are refused at once with 503 OVERLOADED; requests
// joining a running fill, and hits, are not fills and pass.
func TestConcurrentFillBound(t *testing.T) {
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.MaxFills = 1 })
	entered := make(chan struct{}, 10)
	release := make(chan struct{})
	f.Subgraph.Fail = func(string) *subgraphtest.Failure {
		entered <- struct{}{}
		<-release
		return nil
	}
	var wg sync.WaitGroup
	wg.Add(1)
	var first int
	go func() { defer wg.Done(); first = get(t, srv, strikes).Code }()
	<-entered // one fill holds the only slot
	rec := get(t, srv, gateway.PathStrikesChain+"?optionMarket="+wethUSDC+"&chainId=42161&callsReach=5&putsReach=5")
	if e := decodeError(t, rec); rec.Code != http.StatusServiceUnavailable || e.Code != "OVERLOADED" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("second fill: %d %+v", rec.Code, e)
	}
	close(release)
	wg.Wait()
	if first != http.StatusOK {
		t.Fatalf("first fill: %d", first)
	}
}
