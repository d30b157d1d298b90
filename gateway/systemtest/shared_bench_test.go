package systemtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
)

// BenchmarkSharedTier compares, on one real Redis on loopback and a
// strikes chain of 10 ranges:
//
//   - local-hit/tier-off and local-hit/tier-on: a hit in the in-process
//     cache, without and with the Redis tier configured (the tier must
//     cost a local hit nothing);
//   - redis-hit: a local miss answered from Redis (the replica's cache
//     holds one entry and two keys alternate, so every request misses
//     locally and finds the other's answer in Redis);
//   - fill/tier-off and fill/tier-on: a miss filled from the upstream
//     fakes (no latency added), a new key each time; with the tier the
//     fill also takes the lease and writes the answer to Redis.
func BenchmarkSharedTier(b *testing.B) {
	rds := redistest.Start(b)
	sc := wideScenario(b, 10)
	shared := func(maxEntries int) func(*gateway.Options) {
		return func(o *gateway.Options) {
			// A command deadline far above a loaded machine's round trip:
			// with the default 150 ms a stall would send the replica to
			// its upstreams, and this benchmark measures the tier.
			tier, err := redistier.New(redistier.Options{URL: rds.URL(), Prefix: fmt.Sprintf("bench%d:", time.Now().UnixNano()), OpTimeout: 5 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = tier.Close() })
			o.Shared, o.StrikesTTL = tier, time.Hour
			if maxEntries > 0 {
				o.CacheMaxEntries = maxEntries
			}
		}
	}
	b.Run("local-hit/tier-off", func(b *testing.B) { benchHit(b, benchServer(b, sc), strikes) })
	b.Run("local-hit/tier-on", func(b *testing.B) { benchHit(b, benchServer(b, sc, shared(0)), strikes) })
	b.Run("redis-hit", func(b *testing.B) {
		srv := benchServer(b, sc, shared(1))
		paths := []string{strikes, gateway.PathStrikesChain + "?optionMarket=" + wethUSDC + "&chainId=42161&callsReach=99&putsReach=100"}
		reqs := make([]*http.Request, len(paths))
		for i, p := range paths {
			reqs[i] = httptest.NewRequest(http.MethodGet, p, nil)
		}
		w := &discard{h: http.Header{}}
		for _, r := range reqs { // fill both
			srv.ServeHTTP(w, r)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			clear(w.h)
			srv.ServeHTTP(w, reqs[i%2])
			if w.h.Get("X-Cache") != "HIT" || w.code != http.StatusOK {
				b.Fatalf("%d %v", w.code, w.h)
			}
		}
	})
	fill := func(b *testing.B, adjust ...func(*gateway.Options)) {
		srv := benchServer(b, sc, adjust...)
		reqs := make([]*http.Request, b.N)
		for i := range reqs {
			reqs[i] = httptest.NewRequest(http.MethodGet, fmt.Sprintf("%s?optionMarket=%s&chainId=42161&callsReach=%d&putsReach=%d",
				gateway.PathStrikesChain, wethUSDC, 1+i%1000, 1+i/1000%1000), nil)
		}
		w := &discard{h: http.Header{}}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			clear(w.h)
			srv.ServeHTTP(w, reqs[i])
			if w.h.Get("X-Cache") != "MISS" || w.code != http.StatusOK {
				b.Fatalf("%d %v", w.code, w.h)
			}
		}
	}
	b.Run("fill/tier-off", func(b *testing.B) { fill(b) })
	b.Run("fill/tier-on", func(b *testing.B) { fill(b, shared(0)) })
}
