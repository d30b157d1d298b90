package indexer_test

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

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
		tl := -200_000 + 10*int64((i/4)%50) // each group of four is one range's deposit, use, swap and unuse
		var tx *indexertest.Tx
		switch i % 4 {
		case 0:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, tl, 1_000_000)}}
		case 1:
			tx = &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Use(tl, 10), h.Donate(tl, 1)}}
		case 2:
			tx = &indexertest.Tx{From: lp, To: poolAddr, Logs: []typesLog{h.Swap(lp, new(big.Int).Add(price, big.NewInt(int64(i))), int64(i%100))}}
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
				runUntilSynced(b, ix, c)
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
