package systemtest

import (
	"time"

	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

// 50 concurrent identical requests on a cold cache cost what one request
// costs upstream: one subgraph query and one cold chain snapshot (two RPC
// rounds: market getters, then pool, tokens and slot0 in one Multicall3).
func TestConcurrentMissesShareOneFill(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	entered := make(chan struct{}, 100)
	release := make(chan struct{})
	f.Subgraph.Fail = func(string) *graphnodetest.Failure {
		entered <- struct{}{}
		<-release // hold the fill open while the other requests pile up
		return nil
	}
	const n = 50
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			codes[i] = get(t, srv, strikes).Code
		}(i)
	}
	<-entered
	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Fatalf("request %d: status %d", i, c)
		}
	}
	// Two: the subgraph's indexed block (_meta: the gateway has not seen
	// it yet, so the strikes chain asks before its chain read), then the
	// strikes, pinned to it. A later miss pins to the block remembered.
	if got := f.Subgraph.Requests(); got != 2 {
		t.Errorf("subgraph queries: %d, want 2", got)
	}
	// A market seen for the first time: one ChainedRead (the market's
	// assets and pool, the pool's immutables and slot0), then the subgraph,
	// then one for the market's approvedPools of its prime pool (whose
	// address the first round's answer gave) and one probing the ranges'
	// hooks for admission.
	if got := f.Node.Requests(); got != 3 {
		t.Errorf("rpc round trips: %d, want 3", got)
	}
	if got := srv.CacheFills(); got != 1 {
		t.Errorf("cache fills: %d, want 1", got)
	}
	if rec := get(t, srv, strikes); rec.Header().Get("X-Cache") != "HIT" {
		t.Errorf("X-Cache after fill: %q", rec.Header().Get("X-Cache"))
	}
}

func TestUpstreamFailuresMapToCodesAndAreNotCached(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		subgraph   *graphnodetest.Failure
		rpcStatus  int
		wantStatus int
		wantCode   string
	}{
		{"graphql errors in 200", &graphnodetest.Failure{Errors: []string{"store error: column does not exist"}}, 0, 502, "SUBGRAPH_ERROR"},
		{"indexing error", &graphnodetest.Failure{Errors: []string{"indexing_error"}}, 0, 502, "SUBGRAPH_INDEXING_ERROR"},
		{"subgraph 500", &graphnodetest.Failure{Status: 500}, 0, 502, "SUBGRAPH_ERROR"},
		{"subgraph 503", &graphnodetest.Failure{Status: 503}, 0, 503, "SUBGRAPH_UNAVAILABLE"},
		{"subgraph 429", &graphnodetest.Failure{Status: 429}, 0, 503, "SUBGRAPH_UNAVAILABLE"},
		{"rpc 500", nil, 500, 502, "RPC_ERROR"},
		{"rpc 429", nil, 429, 503, "RPC_UNAVAILABLE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, f := newFakeServer(t)
			failing := true
			f.Subgraph.Fail = func(string) *graphnodetest.Failure {
				if failing {
					return c.subgraph
				}
				return nil
			}
			f.Node.Fail = func(string) int {
				if failing {
					return c.rpcStatus
				}
				return 0
			}
			rec := get(t, srv, strikes)
			e := decodeError(t, rec)
			if rec.Code != c.wantStatus || e.Code != c.wantCode {
				t.Fatalf("status %d code %s, want %d %s (%s)", rec.Code, e.Code, c.wantStatus, c.wantCode, e.Message)
			}
			if rec.Code == http.StatusServiceUnavailable && rec.Header().Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			failing = false
			rec = get(t, srv, strikes)
			if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Fatalf("after recovery: status %d X-Cache %q (an error was cached?)", rec.Code, rec.Header().Get("X-Cache"))
			}
		})
	}
}

// Past the TTL the stored bytes are served at once (STALE) while a refresh
// runs; when the upstream then fails they keep being served within the
// grace. Prepared exercises are never served stale.
func TestStaleServingThroughTheGateway(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServerWith(t, func(o *gateway.Options) {
		o.StrikesTTL, o.PrepareTTL, o.StaleGrace = time.Nanosecond, time.Nanosecond, time.Hour
	})
	first := get(t, srv, strikes)
	if first.Code != http.StatusOK || first.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("first: %d %s", first.Code, first.Header().Get("X-Cache"))
	}
	f.Subgraph.Fail = func(string) *graphnodetest.Failure { return &graphnodetest.Failure{Status: 503} }
	for i := 0; i < 3; i++ {
		rec := get(t, srv, strikes)
		if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "STALE" || rec.Body.String() != first.Body.String() {
			t.Fatalf("read %d with the subgraph down: %d %s", i, rec.Code, rec.Header().Get("X-Cache"))
		}
		if rec.Header().Get("Age") == "" {
			t.Fatal("no Age header")
		}
	}
	path := gateway.PathExercisePrepare + "?" + query(prepareParams, "", "", false)
	if rec := get(t, srv, path); rec.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("prepare first: %s", rec.Header().Get("X-Cache"))
	}
	if rec := get(t, srv, path); rec.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("prepare served %s past its TTL", rec.Header().Get("X-Cache"))
	}
}

// A node that refuses eth_call without `to` gets the first sight of a
// market as two Multicall3 rounds, and the same answer.
func TestStrikesWithoutCreateCalls(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	want := get(t, srv, strikes)
	srv2, f := newFakeServer(t)
	f.Node.NoCreateCalls = true
	got := get(t, srv2, strikes)
	if got.Code != http.StatusOK || got.Body.String() != want.Body.String() {
		t.Fatalf("status %d, body differs: %.300s", got.Code, got.Body)
	}
	// The refused ChainedRead, two Multicall3 rounds, the prime pool's
	// approval and the hook probe (each refused as a ChainedRead, then one
	// Multicall3 round).
	if n := f.Node.Requests(); n != 7 {
		t.Errorf("rpc round trips: %d, want 7", n)
	}
}

// An upstream refusing with Retry-After: 30 has its client told 30, not the
// gateway's default 5, and until the 30 s have run out nothing more is sent
// to it: each request is answered 503 at once with what remains.
func TestUpstreamRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	f.Subgraph.Fail = func(string) *graphnodetest.Failure {
		return &graphnodetest.Failure{Status: http.StatusTooManyRequests, RetryAfter: "30"}
	}
	rec := get(t, srv, strikes)
	if e := decodeError(t, rec); rec.Code != http.StatusServiceUnavailable || e.Code != "SUBGRAPH_UNAVAILABLE" || rec.Header().Get("Retry-After") != "30" {
		t.Fatalf("refused: %d %+v Retry-After %q", rec.Code, e, rec.Header().Get("Retry-After"))
	}
	sent := f.Subgraph.Requests()
	for range 5 {
		rec := get(t, srv, strikes)
		ra, _ := strconv.Atoi(rec.Header().Get("Retry-After"))
		if e := decodeError(t, rec); rec.Code != http.StatusServiceUnavailable || e.Code != "SUBGRAPH_UNAVAILABLE" || ra < 1 || ra > 30 {
			t.Fatalf("during the back-off: %d %+v Retry-After %q", rec.Code, e, rec.Header().Get("Retry-After"))
		}
	}
	if got := f.Subgraph.Requests(); got != sent {
		t.Errorf("%d more requests reached the refusing subgraph", got-sent)
	}
}
