package systemtest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	h    http.Header
	seen *tally

	mu     sync.Mutex
	events int
	at     time.Time
}

// tally counts the answer events every sink of a benchmark received, and
// wakes its waiter on each.
type tally struct {
	n    atomic.Int64
	wake chan struct{}
}

func newTally() *tally { return &tally{wake: make(chan struct{}, 1)} }

func newSink(t *tally) *sink { return &sink{h: http.Header{}, seen: t} }

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
		s.seen.n.Add(1)
		select {
		case s.seen.wake <- struct{}{}:
		default:
		}
	}
	return len(b), nil
}

// last is the sink's answer count and its newest answer's time.
func (s *sink) last() (int, time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.events, s.at
}

// benchPatience bounds a benchmark's wait for what it waits on: past it
// the run fails naming what did not come, rather than hanging until the
// package's timeout (as the event count once did when answers did not
// change).
const benchPatience = 3 * time.Minute

// waitUntil polls done (woken by t, or every millisecond: an unchanged
// answer wakes no sink) until it holds, and returns when it first held.
func waitUntil(b *testing.B, t *tally, what func() string, done func() bool) time.Time {
	deadline := time.Now().Add(benchPatience)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !done() {
		if time.Now().After(deadline) {
			b.Fatalf("no %s within %v", what(), benchPatience)
		}
		select {
		case <-t.wake:
		case <-tick.C:
		}
	}
	return time.Now()
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
func subscribe(b *testing.B, ctx context.Context, a *app.App, t *tally, path string, n int) []*sink {
	out := make([]*sink, n)
	for i := range out {
		s := newSink(t)
		req := httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil)
		req.Header.Set("Accept", "text/event-stream")
		go a.Server.ServeHTTP(s, req)
		out[i] = s
	}
	waitUntil(b, t, func() string { return "first answer of " + path }, func() bool {
		for _, s := range out {
			if n, _ := s.last(); n == 0 {
				return false
			}
		}
		return true
	})
	return out
}

// fleet is the replicas of a benchmark, their subscribers and what the
// subscribers received.
type fleet struct {
	apps  []*app.App
	sinks []*sink
	seen  *tally
	keys  int // keys each replica follows
	per   int // subscribers of a key on each replica
}

// counts sums the replicas' stream figures.
func (fl *fleet) counts() gateway.StreamCounts {
	var c gateway.StreamCounts
	for _, a := range fl.apps {
		x := a.Server.StreamCounts()
		c.Answered += x.Answered
		c.Changed += x.Changed
		c.Dropped += x.Dropped
		c.Fills += x.Fills
	}
	return c
}

// fills sums the replicas' response-cache fills (a shared-tier hit is
// none).
func (fl *fleet) fills() int64 {
	var n int64
	for _, a := range fl.apps {
		n += a.Server.CacheFills()
	}
	return n
}

// block publishes head to every replica (as each one's feed would see
// it) and waits until every topic has answered it (sent or unchanged)
// and every answer sent has reached its subscribers. It returns the delay
// from the publication to the last subscriber's answer (to the topics'
// last answer when none changed) and how many keys changed.
func (fl *fleet) block(b *testing.B, head block.Ref) (time.Duration, int64) {
	c0, got0 := fl.counts(), fl.seen.n.Load()
	start := time.Now()
	for _, a := range fl.apps {
		a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: head})
	}
	var c gateway.StreamCounts
	settled := waitUntil(b, fl.seen, func() string {
		return fmt.Sprintf("settling of block %d: answered %d of %d, events %d of %d", head.Number,
			c.Answered-c0.Answered, fl.keys*len(fl.apps), fl.seen.n.Load()-got0, (c.Changed-c0.Changed)*int64(fl.per))
	}, func() bool {
		c = fl.counts()
		want := (c.Changed-c0.Changed)*int64(fl.per) - (c.Dropped - c0.Dropped)
		return c.Answered-c0.Answered >= int64(fl.keys*len(fl.apps)) && fl.seen.n.Load()-got0 >= want
	})
	changed := (c.Changed - c0.Changed) / int64(len(fl.apps))
	if changed == 0 {
		return settled.Sub(start), 0
	}
	var last time.Time
	for _, s := range fl.sinks {
		if _, at := s.last(); at.After(last) {
			last = at
		}
	}
	return last.Sub(start), changed
}

// optionsKeys are n options-chain requests, each its own cache key, whose
// answers (premiums at the pool's price) change with every block
// nextBlock makes: a strikes chain a one-tick move leaves as it was, and
// an unchanged answer sends nothing.
func optionsKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s?chainId=42161&optionMarket=%s&callsReach=%d&putsReach=%d&ttls=3600", gateway.PathOptionsChain, wethUSDC, 1+i%100, 1+i/100)
	}
	return out
}

// BenchmarkStreamFanout follows one key with 10,000 SSE subscribers, and
// 1,000 keys with 10 each, on one process; and 10 keys with 10
// subscribers on each of two replicas sharing one Redis. Each iteration
// is one block (the pool moves a tick), published to every replica; it
// ends when every topic has answered the block (sent, or unchanged) and
// every answer sent has reached its subscribers. It reports fills per
// block (at the response caches: per block, per key followed, per key
// that changed; the node's eth_calls and the subgraph's queries per
// block beside them), the delay from the head's publication to the last
// subscriber's event (p99) and, for one key, the heap each idle
// subscriber holds.
func BenchmarkStreamFanout(b *testing.B) {
	b.Run("1key-10000subs", func(b *testing.B) { fanout(b, []string{streamMark}, 10_000, true) })
	b.Run("1000keys-10subs", func(b *testing.B) { fanout(b, optionsKeys(1000), 10, false) })
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
	fl := &fleet{apps: []*app.App{a}, seen: newTally(), keys: len(keys), per: per}
	for _, k := range keys {
		fl.sinks = append(fl.sinks, subscribe(b, ctx, a, fl.seen, k, per)...)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	run(b, f, fl)
	if heap {
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(fl.sinks)), "heapB/idle-sub")
	}
}

// run makes b.N blocks and reports their figures: fills and upstream
// reads per block (and per key followed, and per key changed), keys
// changed per block, and the p99 of the delay from the head's
// publication to the last subscriber's event.
func run(b *testing.B, f *scenario.Fakes, fl *fleet) {
	fills0, calls0, queries0 := fl.fills(), f.Node.Calls(), f.Subgraph.Requests()
	delays := make([]time.Duration, 0, b.N)
	var changed int64
	b.ResetTimer()
	for range b.N {
		d, n := fl.block(b, nextBlock(b, f, fl.apps[0]))
		delays = append(delays, d)
		changed += n
	}
	b.StopTimer()
	blocks := float64(b.N)
	fills := float64(fl.fills()-fills0) / blocks
	slices.Sort(delays)
	b.ReportMetric(fills, "fills/block")
	b.ReportMetric(fills/float64(fl.keys), "fills/block/key")
	b.ReportMetric(float64(changed)/blocks, "changed/block")
	if changed > 0 {
		b.ReportMetric(fills/(float64(changed)/blocks), "fills/changed")
	}
	b.ReportMetric(float64(f.Node.Calls()-calls0)/blocks, "ethcalls/block")
	b.ReportMetric(float64(f.Subgraph.Requests()-queries0)/blocks, "queries/block")
	b.ReportMetric(float64(delays[min(len(delays)-1, len(delays)*99/100)].Microseconds())/1000, "p99-ms")
}

// fanoutReplicas: two gateways on one Redis and one set of fakes, each
// told every head (as each replica's feed would see it; the relay of
// app.RunFeeds runs too); fills are counted at both caches, and the
// upstream reads at the fakes.
func fanoutReplicas(b *testing.B) {
	srv := redistest.Start(b)
	f := newFakesOnly(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	keys := optionsKeys(10)
	fl := &fleet{seen: newTally(), keys: len(keys), per: 10}
	for range 2 {
		a := fanoutApp(b, f, srv.URL())
		wait := a.RunFeeds(ctx)
		b.Cleanup(func() { cancel(); wait() })
		fl.apps = append(fl.apps, a)
	}
	first := headAt(b, fl.apps[0], f.Node.BlockNumber)
	for _, a := range fl.apps {
		a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: first})
		for _, k := range keys {
			fl.sinks = append(fl.sinks, subscribe(b, ctx, a, fl.seen, k, fl.per)...)
		}
	}
	run(b, f, fl)
	// A Redis command past CLAMM_REDIS_TIMEOUT (a loaded machine) makes
	// its replica fill alone, by design: a fill per key above one per
	// block comes with these.
	var failed int64
	for _, a := range fl.apps {
		errs, skipped := a.Shared.Failures()
		failed += errs + skipped
	}
	b.ReportMetric(float64(failed), "redis-failures")
}
