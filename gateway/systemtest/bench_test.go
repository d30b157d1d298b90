package systemtest

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// discard is a ResponseWriter that keeps nothing, so the benchmarks count
// the gateway's allocations and not the recorder's.
type discard struct {
	h    http.Header
	code int
	n    int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }

// wideScenario is the demo scenario with n extra call ranges above the
// price, for a large strikes-chain answer.
func wideScenario(b testing.TB, n int) *scenario.Scenario {
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	sc := scs[0]
	// Only ranges: the scenario's options name ranges this replaces, and
	// a history whose options use ranges not on chain cannot be indexed.
	sc.Strikes, sc.Options, sc.Exercises, sc.Settlements, sc.Delegates = sc.Strikes[:0], nil, nil, nil, nil
	h := common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	for i := 0; i < n; i++ {
		lo := -196250 + 10*(i%990)
		hook := common.BigToAddress(big.NewInt(int64(i / 990)))
		sc.Strikes = append(sc.Strikes, scenario.Strike{Handler: h, Pool: sc.Market.PrimePool, Hook: hook, TickLower: lo, TickUpper: lo + 10,
			TotalLiquidity: fmt.Sprint(1_000_000_000_000_000_000 + i), UsedLiquidity: fmt.Sprint(i * 1_000_000_000_000)})
	}
	return sc
}

func benchServer(b testing.TB, sc *scenario.Scenario, adjust ...func(*gateway.Options)) *gateway.Server {
	f := scenario.NewFakes(b, sc)
	return newApp(b, app.Options{Transports: onFakes(f), Metrics: metrics.New(), AccessLog: io.Discard, // as deployed: metrics and access log on
		Gateway: func(o *gateway.Options) {
			o.CacheMaxEntries, o.CacheMaxBytes, o.StrikesTTL, o.HistoryTTL, o.PrepareTTL = 1000, 1<<30, 1<<62, 1<<62, 1<<62
			for _, a := range adjust {
				a(o)
			}
		}})
}

func benchHit(b *testing.B, h http.Handler, path string) {
	w := timeHits(b, h, httptest.NewRequest(http.MethodGet, path, nil))
	if _, ok := h.(*gateway.Server); ok && w.h.Get("X-Cache") != "HIT" {
		b.Fatalf("timed requests were not hits: %v", w.h)
	}
}

// timeHits serves req once (the fill), then times b.N more through one
// reused writer, as net/http reuses its own, and returns the writer of
// the last.
func timeHits(b *testing.B, h http.Handler, req *http.Request) *discard {
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req) // fill
	if w.code != http.StatusOK && w.code != 0 {
		b.Fatalf("status %d", w.code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		w.n = 0
		h.ServeHTTP(w, req)
	}
	b.StopTimer()
	b.SetBytes(int64(w.n))
	return w
}

// bare is a gorilla/mux router writing fixed bytes at the same path: the
// floor a cached read is measured against.
func bare(path string, body []byte) http.Handler {
	r := mux.NewRouter()
	r.HandleFunc(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}).Methods(http.MethodGet)
	return r
}

func body(b *testing.B, h http.Handler, path string) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Body.Bytes()
}

func BenchmarkHit(b *testing.B) {
	large := wideScenario(b, 1000)
	small := wideScenario(b, 10)
	demo, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		sc   *scenario.Scenario
		path string
	}{
		{"strikes-10", small, strikes},
		{"strikes-1000", large, strikes},
		{"history", demo[0], gateway.PathExerciseHistory + "?chainId=42161&user=" + alice + "&optionMarket=" + wethUSDC + "&first=100&skip=0"},
		{"prepare", demo[0], gateway.PathExercisePrepare + "?chainId=42161&optionMarket=" + wethUSDC + "&optionId=110&swapperId=uni-v3&slippage=1"},
		{"markets", demo[0], gateway.PathOptionMarkets + "?chainId=42161"},
		{"quote", demo[0], quoteQuery},
		{"options-chain", demo[0], chainQuery},
	}
	for _, c := range cases {
		srv := benchServer(b, c.sc)
		b.Run(c.name+"/gateway", func(b *testing.B) { benchHit(b, srv, c.path) })
		route := pathOnly(c.path)
		b.Run(c.name+"/bare-mux", func(b *testing.B) { benchHit(b, bare(route, body(b, srv, c.path)), c.path) })
	}
}

func pathOnly(p string) string {
	for i := range p {
		if p[i] == '?' {
			return p[:i]
		}
	}
	return p
}

// slow delays every round trip by d before the fake answers: a remote
// upstream's latency, for measuring what the gateway adds on a miss. It
// records when each round trip was in flight.
type slow struct {
	d    time.Duration
	rt   http.RoundTripper
	log  *flights
	name string // the upstream, for the critical path's composition
}

func (s slow) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	time.Sleep(s.d)
	resp, err := s.rt.RoundTrip(r)
	s.log.add(s.name, start, time.Now())
	return resp, err
}

// flights collects upstream round trips' intervals.
type flights struct {
	mu    sync.Mutex
	ivls  [][2]time.Time
	names []string
}

func (f *flights) add(name string, a, b time.Time) {
	f.mu.Lock()
	f.ivls = append(f.ivls, [2]time.Time{a, b})
	f.names = append(f.names, name)
	f.mu.Unlock()
}

func (f *flights) reset() {
	f.mu.Lock()
	f.ivls, f.names = f.ivls[:0], f.names[:0]
	f.mu.Unlock()
}

// chain is the sequence of round trips, each begun after the one before
// it ended, whose nominal latencies sum the highest: the upstream round
// trips on the miss's critical path, as upstream names in order.
func (f *flights) chain(nominal map[string]time.Duration) ([]string, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	idx := make([]int, len(f.ivls))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return f.ivls[idx[a]][1].Before(f.ivls[idx[b]][1]) })
	type path struct {
		names []string
		sum   time.Duration
	}
	best := make([]path, len(idx)) // the heaviest chain ending with idx[k]
	var top path
	for k, i := range idx {
		var prev path
		for j := range k {
			if !f.ivls[idx[j]][1].After(f.ivls[i][0]) && best[j].sum > prev.sum {
				prev = best[j]
			}
		}
		best[k] = path{append(append([]string(nil), prev.names...), f.names[i]), prev.sum + nominal[f.names[i]]}
		if best[k].sum > top.sum {
			top = best[k]
		}
	}
	return top.names, top.sum
}

// inFlight is the time at least one upstream round trip was under way: the
// upstream critical path as it actually ran (sleeps overshoot their nominal
// length by a fraction of a millisecond on a loaded machine).
func (f *flights) inFlight() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	iv := append([][2]time.Time(nil), f.ivls...)
	sort.Slice(iv, func(i, j int) bool { return iv[i][0].Before(iv[j][0]) })
	var total time.Duration
	var cur [2]time.Time
	for i, x := range iv {
		if i == 0 || x[0].After(cur[1]) {
			if i > 0 {
				total += cur[1].Sub(cur[0])
			}
			cur = x
			continue
		}
		if x[1].After(cur[1]) {
			cur[1] = x[1]
		}
	}
	if len(iv) > 0 {
		total += cur[1].Sub(cur[0])
	}
	return total
}

// BenchmarkColdPath measures cache misses against fakes with fixed
// latencies (subgraph 100 ms, RPC 20 ms, 1inch 150 ms). It reports the
// miss latency, the time upstream round trips were actually in flight
// (ms-upstream), the latency minus the nominal critical path
// (ms-over-nominal) and minus the measured one (ms-gateway: what the
// gateway itself adds). Each gateway is started as the command starts it
// (the start check, and the read of each chain's subgraph head the command
// makes beside binding its listener) before anything is timed. Nominal
// critical paths, every read at one block (docs/api.md, "One block per
// answer"):
//
//	strikes (market immutables cached): slot0s, handlers' pause and
//	  whitelist (RPC, one aggregate3) -> strikes (subgraph) -> hook
//	  probes (RPC)                                                         = 140 ms
//	strikes-first-sight, a started gateway that has not seen the market:
//	  ChainedRead (RPC) -> strikes (subgraph) -> the prime pool's
//	  approvedPools, whose address the first read gave (RPC, CompleteView)
//	  -> hook probes (RPC)                                                 = 160 ms
//	strikes-stale-head, the same with the head past the fresh age: the
//	  same path, one `_meta` alongside (the background refresh)           = 160 ms
//	strikes-unseen-head, the same with no head remembered (a gateway idle
//	  past the stale bound with no readiness probes, or not started):
//	  _meta (subgraph) -> the first sight's four                          = 260 ms
//	history: market (cached) || exercises (subgraph)                        = 100 ms
//	prepare uni-v3: position with the head's header (RPC batch) -> quotes
//	  (RPC batch) -> legs simulated in sequence (RPC batch) -> the whole
//	  exercise simulated (RPC)                                             =  80 ms
//	prepare 1inch:  position with the header (RPC) -> quotes (1inch, legs
//	  in parallel) -> legs in sequence (RPC) -> whole (RPC)                = 210 ms
func BenchmarkColdPath(b *testing.B) {
	const sub, rpcD, quote = 100 * time.Millisecond, 20 * time.Millisecond, 150 * time.Millisecond
	demo, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	f := scenario.NewFakes(b, demo[0])
	log := &flights{}
	// connect builds a gateway; started, it runs the start check and reads
	// each chain's subgraph head as the command does. With
	// staleHead, that head is past the fresh age (within the stale bound)
	// as it is a second after the start or the last readiness probe.
	connect := func(started, staleHead bool) *gateway.Server {
		a, err := app.New(app.Options{Config: arbitrumOnly(), Transports: map[uint64]upstream.Transports{42161: {Subgraph: slow{sub, transport(f.Subgraph), log, "subgraph"},
			RPC: slow{rpcD, transport(f.Node), log, "rpc"}, Quote: slow{quote, transport(f.OneInch), log, "1inch"}}},
			Gateway: func(o *gateway.Options) { o.CacheMaxEntries, o.CacheMaxBytes = 100000, 1<<30 }})
		if err != nil {
			b.Fatal(err)
		}
		if staleHead {
			a.Pins.SetHeadAges(block.HeadAges{Strikes: 7500 * time.Millisecond, Quotes: time.Second})
		}
		if started {
			if _, err := a.Service.CheckChainIDs(context.Background()); err != nil {
				b.Fatal(err)
			}
			a.Pins.SeedHeads(context.Background()) // beside the listener's bind, in the command

		}
		return a.Server
	}
	strikesAt := func(i int) string {
		return fmt.Sprintf("%s?optionMarket=%s&chainId=42161&callsReach=%d&putsReach=100", gateway.PathStrikesChain, wethUSDC, 1+i%1000)
	}
	cases := []struct {
		name     string
		critical time.Duration
		warm     bool // market immutables read once before timing
		started  bool // a new gateway per miss: started (start check) or not
		stale    bool // its head past the fresh age
		path     func(i int) string
	}{
		{"strikes", 140 * time.Millisecond, true, true, false, strikesAt},
		{"strikes-first-sight", 160 * time.Millisecond, false, true, false, strikesAt},
		{"strikes-stale-head", 160 * time.Millisecond, false, true, true, strikesAt},
		{"strikes-unseen-head", 260 * time.Millisecond, false, false, false, strikesAt},
		{"history", 100 * time.Millisecond, true, true, false, func(i int) string {
			return fmt.Sprintf("%s?chainId=42161&user=%s&optionMarket=%s&first=%d&skip=0", gateway.PathExerciseHistory, alice, wethUSDC, 1+i%1000)
		}},
		// A quote reads its strike's ranges only: the pool prices (rpc),
		// the strike's ranges (subgraph) and the market's pricing (rpc),
		// one after the other (and the hooks of hooked ranges, which the
		// demo's strike has none of, before the pricing).
		{"quote", 140 * time.Millisecond, true, true, false, func(i int) string {
			return fmt.Sprintf("%s?chainId=42161&optionMarket=%s&user=%s&type=call&strike=3004.9080590767317&ttl=86400&amount=%d", gateway.PathPurchaseQuote, wethUSDC, zeroAddr, 1_000_000_000_000_000+i)
		}},
		{"prepare-uni-v3", 80 * time.Millisecond, true, true, false, func(i int) string {
			return fmt.Sprintf("%s?chainId=42161&optionMarket=%s&optionId=110&swapperId=uni-v3&slippage=0.%06d", gateway.PathExercisePrepare, wethUSDC, 1+i%999999)
		}},
		{"prepare-1inch", 210 * time.Millisecond, true, true, false, func(i int) string {
			return fmt.Sprintf("%s?chainId=42161&optionMarket=%s&optionId=110&swapperId=1inch&slippage=0.%06d", gateway.PathExercisePrepare, wethUSDC, 1+i%999999)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			srv := connect(c.started, c.stale)
			if c.warm {
				if rec := get(b, srv, c.path(0)); rec.Code != http.StatusOK {
					b.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
				}
			}
			var total, upstream time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !c.warm {
					b.StopTimer()
					srv = connect(c.started, c.stale) // a new reader: the market is unseen again
					b.StartTimer()
				}
				path := c.path(1 + i%900) // 0 is the warm-up's key
				log.reset()
				start := time.Now()
				rec := get(b, srv, path)
				total += time.Since(start)
				upstream += log.inFlight()
				if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
					b.Fatalf("%s: %d %s %.300s", path, rec.Code, rec.Header().Get("X-Cache"), rec.Body)
				}
			}
			mean, up := total/time.Duration(b.N), upstream/time.Duration(b.N)
			b.ReportMetric(float64(mean.Microseconds())/1000, "ms/miss")
			b.ReportMetric(float64(up.Microseconds())/1000, "ms-upstream")
			b.ReportMetric(float64((mean-c.critical).Microseconds())/1000, "ms-over-nominal")
			b.ReportMetric(float64((mean-up).Microseconds())/1000, "ms-gateway")
		})
	}
}

// BenchmarkHitCompressed compares a cache hit served gzipped (the bytes
// compressed once at the fill) with the same hit served as identity bytes:
// what Accept-Encoding costs the hit path.
func BenchmarkHitCompressed(b *testing.B) {
	large := wideScenario(b, 1000)
	demo, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sc   *scenario.Scenario
		path string
	}{{"strikes-1000", large, strikes}, {"strikes-demo", demo[0], strikes}} {
		srv := benchServer(b, c.sc)
		b.Run(c.name+"/identity", func(b *testing.B) { benchHitWith(b, srv, c.path, "") })
		b.Run(c.name+"/gzip", func(b *testing.B) { benchHitWith(b, srv, c.path, "gzip, deflate, br") })
	}
}

func benchHitWith(b *testing.B, h http.Handler, path, acceptEncoding string) {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept-Encoding", "identity")
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	w := timeHits(b, h, req)
	if w.h.Get("X-Cache") != "HIT" || (acceptEncoding != "") != (w.h.Get("Content-Encoding") == "gzip") {
		b.Fatalf("not the hit asked for: %v", w.h)
	}
}

// BenchmarkHitCompressedRatio interleaves blocks of identity and gzip hits
// of one answer in one loop, so the drift of a shared, noisy machine hits
// both alike, and reports the ratio of their time per hit (gzip/identity;
// the target is at most 1.10) with each one's ns per hit.
func BenchmarkHitCompressedRatio(b *testing.B) {
	large := wideScenario(b, 1000)
	srv := benchServer(b, large)
	// Both carry the headers a client sends (an empty header map would
	// make every lookup of the hit path free for one side only).
	plain := httptest.NewRequest(http.MethodGet, strikes, nil)
	plain.Header.Set("User-Agent", "bench")
	plain.Header.Set("Accept-Encoding", "identity")
	gz := httptest.NewRequest(http.MethodGet, strikes, nil)
	gz.Header.Set("User-Agent", "bench")
	gz.Header.Set("Accept-Encoding", "gzip, deflate, br")
	w := &discard{h: http.Header{}}
	srv.ServeHTTP(w, plain) // fill
	const block = 1000
	var tPlain, tGzip time.Duration
	b.ResetTimer()
	type side struct {
		req *http.Request
		t   *time.Duration
	}
	for i := 0; i < b.N; i++ {
		order := []side{{plain, &tPlain}, {gz, &tGzip}}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0] // neither always runs second
		}
		for _, c := range order {
			start := time.Now()
			for range block {
				clear(w.h)
				srv.ServeHTTP(w, c.req)
			}
			*c.t += time.Since(start)
		}
	}
	b.StopTimer()
	clear(w.h)
	srv.ServeHTTP(w, gz)
	if w.h.Get("Content-Encoding") != "gzip" || w.h.Get("X-Cache") != "HIT" {
		b.Fatalf("not a gzip hit: %v", w.h)
	}
	n := float64(b.N * block)
	b.ReportMetric(float64(tPlain.Nanoseconds())/n, "ns-identity")
	b.ReportMetric(float64(tGzip.Nanoseconds())/n, "ns-gzip")
	b.ReportMetric(float64(tGzip)/float64(tPlain), "gzip/identity")
}

// BenchmarkColdPathEveryRoute times one miss of every route the demo
// answers (its first request of each path), each on a new started
// gateway that has seen the market once (a strikes-chain answer), with
// the fakes' fixed latencies. Per route it logs the upstream round trips
// on the miss's critical path (heaviest chain of round trips one after
// another) and reports the miss against their nominal sum.
//
//	go test ./gateway/systemtest -run XXX -bench ColdPathEveryRoute -benchtime 5x -v
func BenchmarkColdPathEveryRoute(b *testing.B) {
	nominal := map[string]time.Duration{"subgraph": 100 * time.Millisecond, "rpc": 20 * time.Millisecond, "1inch": 150 * time.Millisecond}
	sc, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		b.Fatal(err)
	}
	f := scenario.NewFakes(b, sc[0])
	log := &flights{}
	connect := func() *gateway.Server {
		a, err := app.New(app.Options{Config: arbitrumOnly(), Transports: map[uint64]upstream.Transports{42161: {
			Subgraph: slow{nominal["subgraph"], transport(f.Subgraph), log, "subgraph"},
			RPC:      slow{nominal["rpc"], transport(f.Node), log, "rpc"}, Quote: slow{nominal["1inch"], transport(f.OneInch), log, "1inch"}}}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Service.CheckChainIDs(context.Background()); err != nil {
			b.Fatal(err)
		}
		a.Pins.SeedHeads(context.Background())
		return a.Server
	}
	seen := map[string]bool{}
	for _, r := range demo.Requests {
		route, _, _ := strings.Cut(r.Path, "?")
		if r.Status() != http.StatusOK || seen[route] || strings.Contains(r.Path, "block=") || !strings.HasPrefix(route, "/clamm/") {
			continue
		}
		seen[route] = true
		b.Run(strings.TrimPrefix(strings.ReplaceAll(route, "/", "_"), "_"), func(b *testing.B) {
			var total time.Duration
			var names []string
			var sum time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				srv := connect()
				if rec := get(b, srv, seenMarket); rec.Code != http.StatusOK {
					b.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
				}
				log.reset()
				b.StartTimer()
				start := time.Now()
				rec := get(b, srv, r.Path)
				total += time.Since(start)
				if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
					b.Fatalf("%s: %d %s %.300s", r.Path, rec.Code, rec.Header().Get("X-Cache"), rec.Body)
				}
				names, sum = log.chain(nominal)
			}
			mean := total / time.Duration(b.N)
			b.Logf("%s: critical path %s (nominal %v), miss %v", route, strings.Join(names, " -> "), sum, mean.Round(100*time.Microsecond))
			b.ReportMetric(float64(mean.Microseconds())/1000, "ms/miss")
			b.ReportMetric(float64(sum.Milliseconds()), "ms-nominal")
			b.ReportMetric(float64(len(names)), "sequential-trips")
		})
	}
}

// seenMarket is the request that shows a cold-path gateway the demo market.
const seenMarket = gateway.PathStrikesChain + "?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=1&putsReach=1"
