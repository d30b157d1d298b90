package indexer_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
)

// benchHistory puts events protocol events into blocks 100..blocks of a
// synthetic chain, one transaction a block, spread evenly: deposits
// (LogMintedPosition), purchases (LogUsePosition with the premium's
// LogDonation), exercises (LogUnusePosition) and pool swaps, in turn.
func benchHistory(b *testing.B, blocks, events int) *indexertest.Chain {
	b.Helper()
	c, h := newChain(b, uint64(blocks))
	c.MaxLogs = 10_000    // Infura's and Alchemy's cap on one answer
	txs := events * 4 / 5 // 1.25 events a transaction
	step := uint64(blocks-100) / uint64(txs)
	n, written := uint64(100), 0
	for i := 0; written < events; i++ {
		// each group of four is one range's deposit, use, donation and
		// unuse: protocol events only, as the subgraph follows no pool
		tl := -200_000 + 10*int64((i/4)%50)
		var tx *indexertest.Tx
		switch i % 4 {
		case 0:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, tl, 1_000_000)}}
		case 1:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Use(tl, 10), h.Donate(tl, 1)}}
		case 2:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Donate(tl, 2)}}
		default:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Unuse(tl, 5)}}
		}
		if len(tx.Logs) > events-written {
			tx.Logs = tx.Logs[:events-written]
		}
		c.Add(n, tx)
		written += len(tx.Logs)
		n += step
	}
	c.SetHead(uint64(blocks))
	return c
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peak samples the heap in use until stop is called.
func peak() (stop func() uint64) {
	var max atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > max.Load() {
				max.Store(m.HeapInuse)
				heapProfile()
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return max.Load() }
}

// HeapProfileEnv names a file peak writes the heap profile to each time
// the heap in use reaches a new peak (at most every 2 s): what was live
// at the last collection before the peak, to find what holds the heap.
const HeapProfileEnv = "CLAMM_BENCH_HEAP_PROFILE"

var lastHeapProfile time.Time

func heapProfile() {
	path := os.Getenv(HeapProfileEnv)
	if path == "" || time.Since(lastHeapProfile) < 2*time.Second {
		return
	}
	lastHeapProfile = time.Now()
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// nodeMethods are the node calls the indexer makes besides the mappings'
// eth_calls.
var nodeMethods = []string{"eth_chainId", "eth_blockNumber", "eth_getLogs", "eth_getBlockByNumber", "eth_getBlockByHash",
	"eth_getBlockReceipts", "eth_getTransactionReceipt"}

// traffic is what the node answered so far besides the mappings' own
// eth_calls: HTTP requests (a batch is one) and the calls in them.
func traffic(c *indexertest.Chain) (requests, calls int64) {
	for methods, n := range c.Requests() {
		if methods != "eth_call" {
			requests += n
		}
	}
	for _, m := range nodeMethods {
		calls += c.Calls(m)
	}
	return requests, calls
}

// loadavg is the machine's load average (1, 5 and 15 minutes), which the
// figures are read beside on a shared machine.
func loadavg() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(raw))[:3], " ")
}

// BenchmarkBackfill indexes 10,000 protocol events spread over a synthetic
// history (100,000 and 1,000,000 blocks) from a local JSON-RPC node that
// caps answers at 10,000 logs, and reports events per second (wall and
// per CPU-second), the node's traffic per event apart from the mappings'
// own eth_calls (HTTP requests, a JSON-RPC batch being one, and the calls
// in them, each call of a batch counted), the peak heap in use and the
// heap live once synced; it logs the load average and the requests and
// calls by method. Run it:
//
//	go test ./internal/indexer -run '^$' -bench Backfill -benchtime 1x
func BenchmarkBackfill(b *testing.B) {
	const events = 10_000
	for _, blocks := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("blocks=%d", blocks), func(b *testing.B) {
			c := benchHistory(b, blocks, events)
			for i := 0; i < b.N; i++ {
				runtime.GC()
				calls0 := c.Calls("eth_call")
				req0, node0 := traffic(c)
				ix := open(b, c, filepath.Join(b.TempDir(), fmt.Sprintf("%d.sqlite", i)), indexer.Options{})
				load0 := loadavg()
				stop := peak()
				cpu0 := cpuTime()
				start := time.Now()
				b.ResetTimer()
				runToHead(b, ix, c.Head())
				b.StopTimer()
				elapsed, heap, cpu := time.Since(start), stop(), cpuTime()-cpu0
				got := ix.Counts().Events
				if got != events {
					b.Fatalf("%d events indexed, want %d", got, events)
				}
				req, node := traffic(c)
				// what the indexer keeps once synced (the synthetic
				// chain's blocks included), past what the collector
				// had not freed yet when peak sampled
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				b.Logf("load average before %s, after %s", load0, loadavg())
				b.Logf("HTTP requests by the methods they carried: %v", c.Requests())
				for _, m := range append(nodeMethods, "eth_call") {
					b.Logf("%s: %d calls", m, c.Calls(m))
				}
				b.ReportMetric(float64(got)/elapsed.Seconds(), "events/s")
				b.ReportMetric(float64(req-req0)/float64(got), "requests/event")
				b.ReportMetric(float64(node-node0)/float64(got), "calls/event")
				b.ReportMetric(float64(c.Calls("eth_call")-calls0), "mapping-eth_calls")
				b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
				b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
				// what the process's CPU time allows, the node's own work
				// (in this process) included: the figure a machine that is
				// not shared would see
				b.ReportMetric(float64(got)/cpu.Seconds(), "events/cpu-s")
				_ = ix.Close()
			}
		})
	}
}

// ScaleEnv sets the scale of BenchmarkBackfillArbitrum's history: "full"
// is the (220 million blocks, 1,000,000 protocol events; about
// ten minutes or more on two cores), a number N divides the span and the
// events by N. Unset, the history is 1/10,000 of it (22,000 blocks, 100
// events, about 7,600 swaps), so that CI, which runs every benchmark once,
// stays fast. ScaleEnv+"_SWAPS"=0 leaves the pools' swaps out: the
// protocol's own events alone, what the index costs once it no longer
// follows the pools (the options subgraph still does: docs/operations.md).
const ScaleEnv = "CLAMM_BENCH_BACKFILL_SCALE"

// scaleOf reads ScaleEnv.
func scaleOf(b *testing.B) uint64 {
	v := os.Getenv(ScaleEnv)
	switch v {
	case "":
		return 10_000
	case "full":
		return 1
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n == 0 {
		b.Fatalf("%s=%q: want full or a positive divisor", ScaleEnv, v)
	}
	return n
}

// scaleMarkets are two handlers over pools of their own, as Arbitrum's
// WETH/USDC and WBTC/USDC markets; their pools' slot0 answers a price,
// every other eth_call reverts (the pools' tokens are then unknown).
func scaleMarkets(b *testing.B) ([]*indexertest.Handler, func(common.Address, []byte, uint64) ([]byte, bool)) {
	var hs []*indexertest.Handler
	calls := map[common.Address]func(common.Address, []byte, uint64) ([]byte, bool){}
	for i := range 2 {
		h, err := indexertest.NewHandler(common.BigToAddress(big.NewInt(int64(0xa0001+i))), common.BigToAddress(big.NewInt(int64(0xb0001+i))))
		if err != nil {
			b.Fatal(err)
		}
		hs = append(hs, h)
		calls[h.Pool] = h.Slot0(price, 0)
	}
	return hs, func(to common.Address, data []byte, n uint64) ([]byte, bool) {
		if f, ok := calls[to]; ok {
			return f(to, data, n)
		}
		return nil, true
	}
}

// storeBytes is the size of the store's files (the database, its WAL)
// and, for the log, each one's.
func storeBytes(path string) (int64, string) {
	var n int64
	var each []string
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
			each = append(each, fmt.Sprintf("%s %d", filepath.Base(p), fi.Size()))
		}
	}
	return n, strings.Join(each, ", ")
}

// BenchmarkBackfillArbitrum indexes a synthetic history shaped as
// Arbitrum's (indexertest.ArbitrumScale: a first market 220 million
// blocks before the head at four blocks a second, 1,000,000 protocol
// events over 20,000 users and 50 ranges a market, two markets whose
// pools swap 60,000 times a day each) from a node with a provider's caps
// (10,000 logs an answer, 10,000 blocks a range) that computes its
// blocks and logs when asked, and reports the time to the head, protocol
// events a second, HTTP requests per protocol event apart from the
// mappings' eth_calls, the peak heap and the store's bytes per protocol
// event. The scale is ScaleEnv's (1/10,000 unset); the full history:
//
//	CLAMM_BENCH_BACKFILL_SCALE=full go test ./internal/indexer -run '^$' -bench BackfillArbitrum -benchtime 1x -timeout 3h
func BenchmarkBackfillArbitrum(b *testing.B) {
	scale := scaleOf(b)
	hs, call := scaleMarkets(b)
	s := indexertest.ArbitrumScale(chainID, hs, scale)
	s.Call = call
	if os.Getenv(ScaleEnv+"_SWAPS") == "0" {
		s.SwapsPerDay = 0 // the protocol's own events alone, for comparison
	}
	// the history the one-variable start keeps (CLAMM_INDEX_HISTORY_BLOCKS'
	// default): versions ended further back are pruned as it goes
	history := config.Default().IndexHistoryBlocks
	for i := 0; i < b.N; i++ {
		runtime.GC()
		path := filepath.Join(b.TempDir(), fmt.Sprintf("%d.sqlite", i))
		var src []mapping.Watched
		for _, h := range hs {
			src = append(src, mapping.Watched{Address: h.Address, Name: "HandlerV2", Start: s.First()})
		}
		ix := openNode(b, s, path, src, s.MaxRange, history)
		stop := peak()
		cpu0 := cpuTime()
		start := time.Now()
		b.ResetTimer()
		runToHead(b, ix, s.Head)
		b.StopTimer()
		elapsed, heap, cpu := time.Since(start), stop(), cpuTime()-cpu0
		events := float64(s.Events)
		var req int64
		for methods, n := range s.Requests() {
			if methods != "eth_call" {
				req += n
			}
		}
		size, files := storeBytes(path)
		b.Logf("scale 1/%d: %d blocks, %d protocol events, %d swaps a pool, %d logs indexed; history kept %d blocks", scale, s.Span, s.Events, s.Swaps(), ix.Counts().Events, history)
		b.Logf("time to head %s; store %d bytes (%s); HTTP requests by the methods they carried: %v", elapsed.Round(time.Second), size, files, s.Requests())
		b.Logf("load average after %s", loadavg())
		for _, m := range append(nodeMethods, "eth_call") {
			b.Logf("%s: %d calls", m, s.Calls(m))
		}
		b.ReportMetric(elapsed.Seconds(), "s-to-head")
		b.ReportMetric(events/elapsed.Seconds(), "events/s")
		// the process's CPU time (the node's share in it): the figure a
		// machine not shared would approach, and what a change cuts
		b.ReportMetric(events/cpu.Seconds(), "events/cpu-s")
		b.ReportMetric(float64(req)/events, "requests/event")
		b.ReportMetric(float64(heap)/(1<<20), "peak-heap-MiB")
		b.ReportMetric(float64(size)/events, "store-B/event")
		b.ReportMetric(float64(s.Calls("eth_call")), "mapping-eth_calls")
		_ = ix.Close()
	}
}

// openNode opens an indexer of sources on the node h serves, its ranges
// capped at maxRange as docs/operations.md advises for a provider's cap
// (CLAMM_INDEX_MAX_RANGE): no range is refused for its width; it keeps
// history blocks of history (0: all).
func openNode(b *testing.B, h http.Handler, path string, sources []mapping.Watched, maxRange, history uint64) *indexer.Indexer {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	rc, err := indexer.NewClient(srv.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rc.Close)
	ix, err := indexer.Open(context.Background(), indexer.Options{ChainID: chainID, RPC: rc, Path: path, Sources: sources, MaxRange: maxRange, History: history,
		Poll: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(testLog{b}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		b.Fatal(err)
	}
	return ix
}

// runToHead runs ix until it has indexed block head, however long that
// takes (a benchmark's history may take minutes: no deadline here, go
// test's -timeout bounds it), then stops it.
func runToHead(b *testing.B, ix *indexer.Indexer, head uint64) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	for {
		select {
		case err := <-done:
			b.Fatalf("Run returned %v before the head", err)
		case <-time.After(20 * time.Millisecond):
		}
		st := ix.Status()
		if st.State == indexer.StateFailed {
			b.Fatalf("indexing failed: %s", st.Error)
		}
		if st.State == indexer.StateSynced && st.Block >= head {
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			return
		}
	}
}
