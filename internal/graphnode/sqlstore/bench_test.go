package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	gateway "github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The synthetic protocol of BenchmarkIndexedQueries: a history that grows
// at Arbitrum's pace (four blocks a second, a protocol event every 220
// blocks: 1,000,000 events over the 220 million blocks since the first
// market), so a bigger store is a longer history, not a busier day: the
// last day, the live options, a user's page hold the same at every size.
const (
	benchHead    = 300_000_000 // the head block
	benchStep    = 220         // blocks between two protocol events
	benchKeep    = 1_000_000   // the retention (DefaultHistory)
	benchT0      = 1_650_000_000
	benchUsers   = 20_000
	benchStrikes = 50 // ranges per market
)

func benchTime(block uint64) uint64 { return benchT0 + block/4 }

// benchSizes are the protocol events the stores hold:
// CLAMM_BENCH_INDEXED_LARGE=1 adds the 1,000,000 of the target
// (about 1.5 GB of temp space and minutes to build); by default the
// benchmark stays cheap for CI. CLAMM_BENCH_INDEXED_DIR keeps the stores
// in a directory of one's choice, built once and reused by later runs
// (a store of the same layout opens as it was, new indexes added).
func benchSizes() []int {
	if os.Getenv("CLAMM_BENCH_INDEXED_LARGE") != "" {
		return []int{10_000, 1_000_000}
	}
	return []int{1_000, 10_000}
}

// BenchmarkIndexedQueries runs each of the gateway's documents
// (queries/*.graphql), with the variables the gateway sends, against
// stores of the synthetic protocol at two sizes, pinned to the head: a
// document that costs what it returns takes the same at both. The two
// sizes' queries alternate, one of each per iteration, so the machine's
// load hits both alike; each is timed alone, and the report gives each
// size's median time a query (small-ms, large-ms: a shared machine's
// stalls move a mean, not a median), their ratio, the ratio of the means
// (mean-ratio) and of the process's CPU time (cpu-ratio). The stores are
// built once per run by a bulk path (the store's own tables and
// encodings, no mappings) in a temp dir.
//
//	go test ./internal/graphnode/sqlstore -run '^$' -bench IndexedQueries -benchtime 20x
//	CLAMM_BENCH_INDEXED_LARGE=1 go test ./internal/graphnode/sqlstore -run '^$' -bench IndexedQueries -benchtime 200x -timeout 1h
func BenchmarkIndexedQueries(b *testing.B) {
	docs := gateway.Embedded()
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	dir := os.Getenv("CLAMM_BENCH_INDEXED_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	sizes := benchSizes()
	var stores [2]*Store
	for i, size := range sizes {
		stores[i] = buildBench(b, dir, size)
	}
	for _, name := range names {
		doc := docs[name]
		req := graphnode.Request{Query: doc.Text, OperationName: doc.OperationName, Variables: benchVars(name)}
		b.Run(fmt.Sprintf("%s/events=%d,%d", name, sizes[0], sizes[1]), func(b *testing.B) {
			var t [2]timings
			for i, st := range stores {
				t[i].answer = checkAnswer(b, st.Query(req))
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for k := range 2 {
					k ^= i & 1 // small first, then large first
					t[k].query(stores[k], req)
				}
			}
			small, large := t[0].median(), t[1].median()
			b.ReportMetric(small.Seconds()*1e3, "small-ms")
			b.ReportMetric(large.Seconds()*1e3, "large-ms")
			b.ReportMetric(float64(large)/float64(small), "ratio")
			b.ReportMetric(float64(t[1].wall)/float64(t[0].wall), "mean-ratio")
			b.ReportMetric(float64(t[1].cpu)/float64(t[0].cpu), "cpu-ratio")
			b.ReportMetric(float64(t[1].answer), "answer-bytes")
		})
	}
}

// timings are one store's queries in a run.
type timings struct {
	each      []time.Duration
	wall, cpu time.Duration
	answer    int
}

func (t *timings) query(st *Store, req graphnode.Request) {
	cpu, start := cpuTime(), time.Now()
	st.Query(req)
	d := time.Since(start)
	t.cpu += cpuTime() - cpu
	t.wall += d
	t.each = append(t.each, d)
}

func (t *timings) median() time.Duration {
	s := slices.Clone(t.each)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// checkAnswer fails on an error answer and returns its size.
func checkAnswer(b *testing.B, r graphnode.Response) int {
	b.Helper()
	raw, _ := json.Marshal(r)
	if len(r.Errors) > 0 || r.Data == nil {
		b.Fatalf("answer %.400s", raw)
	}
	return len(raw)
}

func hexAddr(kind byte, i int) string {
	return fmt.Sprintf("0x%02x%036x%02x", kind, i, kind)
}

var (
	benchMarkets = []string{hexAddr(0xa0, 0), hexAddr(0xa0, 1)}
	benchPools   = []string{hexAddr(0xb0, 0), hexAddr(0xb0, 1)}
)

// benchVars are a document's variables as the gateway sends them, for the
// busiest user (user 0: a twentieth of the events) and the first market,
// over the last day (the statistics' days: five) before the head: windows
// the 10,000 events' six days hold whole, so both sizes answer the same.
func benchVars(name string) map[string]any {
	now := int(benchTime(benchHead))
	day := now / 86400 * 86400
	u, m := hexAddr(0xc0, 0), benchMarkets[0]
	owners := make([]any, 50)
	for i := range owners {
		owners[i] = hexAddr(0xc0, i)
	}
	page := map[string]any{"first": 10, "skip": 0}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{"block": map[string]any{"number": benchHead}}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	user := func(more map[string]any) map[string]any {
		return with(merge(page, more))
	}
	switch name {
	case "exercise_delegates":
		return with(map[string]any{"market": m, "owners": owners, "first": 1000})
	case "exercise_history", "purchase_history", "purchase_positions":
		return user(map[string]any{"user": u, "market": m})
	case "expiring_options":
		return with(map[string]any{"market": m, "after": fmt.Sprint(now), "until": fmt.Sprint(now + 86400), "first": 101})
	case "leaderboard_exercises", "leaderboard_purchases":
		return with(map[string]any{"markets": []any{benchMarkets[0], benchMarkets[1]}, "from": fmt.Sprint(now - 86400), "to": fmt.Sprint(now), "first": 1000})
	case "lp_deposit_history", "lp_withdraw_history":
		return user(map[string]any{"where": map[string]any{"user": u}})
	case "lp_positions":
		return user(map[string]any{"where": map[string]any{"user": u, "open": true}})
	case "settlement_history":
		return user(map[string]any{"where": map[string]any{"user": u, "market": m}})
	case "open_options", "option_markets":
		return with(map[string]any{"market": m, "after": "", "first": 100})
	case "stats_day_buyers":
		return with(map[string]any{"market": m, "from": day - 5*86400, "to": day, "after": "", "first": 1000})
	case "stats_days":
		return with(map[string]any{"market": m, "from": day - 5*86400, "to": day, "after": "", "first": 1000})
	case "stats_exercises", "stats_purchases":
		return with(map[string]any{"market": m, "from": fmt.Sprint(now - 86400), "to": fmt.Sprint(now), "after": "", "first": 1000})
	case "stats_ranges":
		return with(map[string]any{"pools": []any{benchPools[0]}, "market": m, "after": "", "first": 1000})
	case "swappers":
		return with(map[string]any{"first": 1000, "since": "0"})
	case "strikes":
		return with(map[string]any{"pools": []any{benchPools[0]}, "tickLowerMin": -201_000, "tickLowerMax": -199_000,
			"tickUpperMin": -201_000, "tickUpperMax": -199_000, "market": m, "after": "", "first": 1000})
	}
	return map[string]any{}
}

func merge(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// benchStore is a store of size events in a test's temp dir.
func benchStore(t testing.TB, size int) *Store {
	return buildBench(t, t.TempDir(), size)
}

// buildBench builds (once per run and size) the store of size events.
func buildBench(b testing.TB, dir string, size int) *Store {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("events-%d.sqlite", size))
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		b.Fatal(err)
	}
	st, _, err := Open(path, s, "bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if _, ok, _ := st.Head(context.Background()); ok {
		return st
	}
	start := time.Now()
	g := newBulk(st)
	if err := g.history(size); err != nil {
		b.Fatal(err)
	}
	b.Logf("%d events: built in %s, %d versions, %d bytes (%.0f bytes an event)", size, time.Since(start).Round(time.Second),
		g.versions, st.Size(), float64(st.Size())/float64(size))
	return st
}
