package systemtest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

func TestRateLimitPerClient(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.MaxFills = 1 })
	entered := make(chan struct{}, 10)
	release := make(chan struct{})
	f.Subgraph.Fail = func(string) *graphnodetest.Failure {
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

// Behind a proxy that appends X-Forwarded-For, the client is the entry the
// proxy added (the last one); what the client itself put before it cannot
// buy it a fresh bucket.
func TestRateLimitKeysOnTheProxysForwardedFor(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) {
		o.RateLimit, o.RateBurst, o.TrustForwardedFor = 0.001, 2, true
	})
	codes := map[int]int{}
	for i := range 5 {
		req := httptest.NewRequest(http.MethodGet, strikes, nil)
		req.Header.Set("X-Forwarded-For", "10.0.0."+strconv.Itoa(i)+", 203.0.113.7")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		codes[rec.Code]++
	}
	if codes[http.StatusOK] != 2 || codes[http.StatusTooManyRequests] != 3 {
		t.Fatalf("statuses %v, want 2 OK then 429s for one client", codes)
	}
	// Another proxy-added address is another client.
	req := httptest.NewRequest(http.MethodGet, strikes, nil)
	req.Header.Set("X-Forwarded-For", "10.0.0.1, 203.0.113.8")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("another client: %d", rec.Code)
	}
}
