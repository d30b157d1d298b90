package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// sink is one SSE subscriber's connection, in process: it records when
// each answer event reaches it. (Ten thousand sockets would need twice
// as many descriptors as this machine allows a process; the server's
// per-connection buffers, 8 KiB in net/http, come on top of what the
// heap figure counts.)
type sink struct {
	h   http.Header
	got chan struct{}

	mu     sync.Mutex
	events int
	at     time.Time
}

func newSink() *sink { return &sink{h: http.Header{}, got: make(chan struct{}, 1)} }

func (s *sink) Header() http.Header { return s.h }
func (s *sink) WriteHeader(int)     {}
func (s *sink) Flush()              {}
func (s *sink) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("event: answer")) {
		now := time.Now()
		s.mu.Lock()
		s.events++
		s.at = now
		s.mu.Unlock()
		select {
		case s.got <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

// await waits for the sink's n-th answer and returns when it came.
func (s *sink) await(n int) time.Time {
	for {
		s.mu.Lock()
		ev, at := s.events, s.at
		s.mu.Unlock()
		if ev >= n {
			return at
		}
		<-s.got
	}
}

// fanoutApp is a gateway over f with streams on and room for every
// subscriber; redisURL, if set, is its shared tier.
func fanoutApp(b *testing.B, f *scenario.Fakes, redisURL string) *app.App {
	cfg := arbitrumOnly()
	cfg.Streams, cfg.StreamsPerClient, cfg.StreamsMax = true, 20_000, 20_000
	cfg.CacheMaxEntries = 100_000
	cfg.RedisURL = redisURL
	a, err := app.New(app.Options{Config: cfg, Transports: onFakes(f)})
	if err != nil {
		b.Fatal(err)
	}
	a.Pins.SetHeadAges(block.HeadAges{})
	b.Cleanup(func() { a.Server.CloseStreams(); _ = a.Close() })
	return a
}

// nextBlock moves f's node and subgraph one block on, with the prime
// pool one tick further, and returns the new head as the node has it.
func nextBlock(b testing.TB, f *scenario.Fakes, a *app.App) block.Ref {
	sc := demoScenario(b)
	f.Node.Lock()
	f.Node.BlockNumber++
	n := f.Node.BlockNumber
	p := f.Node.Pools[sc.Market.PrimePool]
	p.Tick++
	p.SqrtPriceX96, _ = clamm.SqrtRatioAtTick(p.Tick)
	f.Node.Unlock()
	hash := strings.ToLower(f.Node.HashOf(n).Hex())
	r, err := a.Pins.BlockAt(context.Background(), 42161, n, nil)
	if err != nil || r.Hash != hash {
		b.Fatalf("block %d: %+v %v", n, r, err)
	}
	f.Subgraph.Store.SetHead(graphnode.Block{Number: n, Hash: hash, Timestamp: uint64(r.Timestamp)})
	return r
}

// subscribe opens n SSE streams of path on a's server, in process, and
// waits for each one's first answer.
func subscribe(b *testing.B, ctx context.Context, a *app.App, path string, n int) []*sink {
	out := make([]*sink, n)
	for i := range out {
		s := newSink()
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		req.Header.Set("Accept", "text/event-stream")
		go a.Server.ServeHTTP(s, req)
		out[i] = s
	}
	for _, s := range out {
		s.await(1)
	}
	return out
}

// strikesKeys are n strikes-chain requests, each its own cache key.
func strikesKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s?chainId=42161&optionMarket=%s&callsReach=%d&putsReach=%d", gateway.PathStrikesChain, wethUSDC, 1+i%100, 1+i/100)
	}
	return out
}

// BenchmarkStreamFanout follows one key with 10,000 SSE subscribers, and
// 1,000 keys with 10 each, on one process; and 10 keys with 10
// subscribers on each of two replicas sharing one Redis. Each iteration
// is one block that changes every answer (the pool moves a tick). It
// reports fills per block (at the response cache; the node's eth_calls
// per block beside it), the head-to-last-subscriber delay's p99 and, for
// one key, the heap each idle subscriber holds.
func BenchmarkStreamFanout(b *testing.B) {
	b.Run("1key-10000subs", func(b *testing.B) { fanout(b, []string{streamMark}, 10_000, true) })
	b.Run("1000keys-10subs", func(b *testing.B) {
		if os.Getenv("CLAMM_BENCH_STREAM_KEYS") == "" {
			// Known: fanout waits for one event per subscriber per block,
			// but a strikes chain that nextBlock's one-tick move leaves
			// as it was sends none (by design), so the wait never ends
			// (seen in CI: every topic filled, every stream idle). It
			// needs keys whose answers change each block, or a wait on
			// fills; until then it runs only when asked.
			b.Skip("1,000 keys: set CLAMM_BENCH_STREAM_KEYS=1 (waits for events unchanged answers never send)")
		}
		fanout(b, strikesKeys(1000), 10, false)
	})
	b.Run("2replicas-10keys-10subs", fanoutReplicas)
}

func fanout(b *testing.B, keys []string, per int, heap bool) {
	f := newFakesOnly(b)
	a := fanoutApp(b, f, "")
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(b, a, f.Node.BlockNumber)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var sinks []*sink
	for _, k := range keys {
		sinks = append(sinks, subscribe(b, ctx, a, k, per)...)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	fills0, calls0 := a.Server.CacheFills(), f.Node.Calls()
	delays := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		head := nextBlock(b, f, a)
		start := time.Now()
		a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: head})
		var last time.Time
		for _, s := range sinks {
			if at := s.await(i + 2); at.After(last) {
				last = at
			}
		}
		delays = append(delays, last.Sub(start))
	}
	b.StopTimer()
	report(b, delays, float64(a.Server.CacheFills()-fills0), float64(f.Node.Calls()-calls0), len(keys))
	if heap {
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(sinks)), "heapB/idle-sub")
	}
}

// report states per-block figures: fills and node calls per block (and
// per key changed), and the p99 of the delay from the head's publication
// to the last subscriber's event.
func report(b *testing.B, delays []time.Duration, fills, calls float64, keys int) {
	slices.Sort(delays)
	p99 := delays[min(len(delays)-1, len(delays)*99/100)]
	b.ReportMetric(fills/float64(b.N), "fills/block")
	b.ReportMetric(fills/float64(b.N)/float64(keys), "fills/block/key")
	b.ReportMetric(calls/float64(b.N), "ethcalls/block")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

// fanoutReplicas: two gateways on one Redis and one set of fakes, each
// told every head (as each replica's feed would see it; the relay of
// app.RunFeeds runs too); fills are counted at both caches.
func fanoutReplicas(b *testing.B) {
	if os.Getenv("CLAMM_BENCH_REPLICAS") == "" {
		// Known: on a loaded machine this case did not finish within
		// 200 s at 3 blocks (waiting on a subscriber's first answer or
		// a block's, not yet found); it runs only when asked.
		b.Skip("two replicas on one Redis: set CLAMM_BENCH_REPLICAS=1 (does not finish yet)")
	}
	srv := redistest.Start(b)
	f := newFakesOnly(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var reps []*app.App
	for range 2 {
		a := fanoutApp(b, f, srv.URL())
		wait := a.RunFeeds(ctx)
		b.Cleanup(func() { cancel(); wait() })
		reps = append(reps, a)
	}
	first := headAt(b, reps[0], f.Node.BlockNumber)
	keys := strikesKeys(10)
	var sinks []*sink
	for _, a := range reps {
		a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: first})
		for _, k := range keys {
			sinks = append(sinks, subscribe(b, ctx, a, k, 10)...)
		}
	}
	fills := func() int64 { return reps[0].Server.CacheFills() + reps[1].Server.CacheFills() }
	fills0, calls0 := fills(), f.Node.Calls()
	delays := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		head := nextBlock(b, f, reps[0])
		start := time.Now()
		for _, a := range reps { // each replica's own feed sees the block (the relay may too)
			a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: head})
		}
		var last time.Time
		for _, s := range sinks {
			if at := s.await(i + 2); at.After(last) {
				last = at
			}
		}
		delays = append(delays, last.Sub(start))
	}
	b.StopTimer()
	report(b, delays, float64(fills()-fills0), float64(f.Node.Calls()-calls0), len(keys))
}
