package indexer

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stats are the indexer's counters for /metrics and the progress log.
type stats struct {
	mu                   sync.Mutex
	blocks, evts, reorgs int64
	lag                  uint64
	// the progress log's last sample
	lastAt                 time.Time
	lastBlocks, lastEvents int64
	// the mappings' calls prefetched (calls.go), and those of them the
	// mappings read
	prefetched, usedCalls atomic.Int64
}

func (s *stats) advanced(blocks, lag uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blocks += int64(blocks)
	s.lag = lag
}

func (s *stats) events(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evts += int64(n)
}

func (s *stats) reorg() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reorgs++
}

func (s *stats) lagBlocks(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lag = n
}

// sample returns the blocks and events since the last sample, if every
// has passed since it (the first call only starts the clock).
func (s *stats) sample(now time.Time, every time.Duration) (blocks, events int64, since time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastAt.IsZero() {
		s.lastAt, s.lastBlocks, s.lastEvents = now, s.blocks, s.evts
		return 0, 0, 0, false
	}
	if now.Sub(s.lastAt) < every {
		return 0, 0, 0, false
	}
	blocks, events, since = s.blocks-s.lastBlocks, s.evts-s.lastEvents, now.Sub(s.lastAt)
	s.lastAt, s.lastBlocks, s.lastEvents = now, s.blocks, s.evts
	return blocks, events, since, true
}

// Counts are an indexer's totals so far.
type Counts struct {
	Blocks, Events, Reorgs int64
	// Requests are the calls made to the node, by JSON-RPC method (each
	// call of a batch counted).
	Requests map[string]int64
	// HTTPRequests are the requests sent to the node (a batch is one).
	HTTPRequests int64
	// CallsPrefetched are the mappings' eth_calls asked ahead, in batches
	// (counted in Requests too); CallsUsed those whose answer a mapping
	// read. The rest were asked in vain: a prediction that missed, a
	// node's error (the mapping asked live), or a range not applied yet.
	CallsPrefetched, CallsUsed int64
}

// Counts returns the indexer's totals.
func (ix *Indexer) Counts() Counts {
	ix.stats.mu.Lock()
	c := Counts{Blocks: ix.stats.blocks, Events: ix.stats.evts, Reorgs: ix.stats.reorgs}
	ix.stats.mu.Unlock()
	c.Requests = ix.node.counts.snapshot()
	c.HTTPRequests = ix.node.counts.requests.Load()
	c.CallsPrefetched, c.CallsUsed = ix.stats.prefetched.Load(), ix.stats.usedCalls.Load()
	return c
}

// descs are an indexer's metrics, its chain a constant label: each chain's
// indexer is a collector of its own, and a registry refuses two collectors
// that describe the same metrics (a variable chain_id label would make
// the second indexed chain's registration fail).
type descs struct {
	block, head, lag, blocks, events, reorgs, requests, sent, size, failed *prometheus.Desc
}

func newDescs(chainID uint64) descs {
	id := prometheus.Labels{"chain_id": strconv.FormatUint(chainID, 10)}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, id)
	}
	return descs{
		block:    d("clamm_index_block", "Last block the embedded indexer committed, per chain."),
		head:     d("clamm_index_chain_head", "The node's head when the embedded indexer last asked, per chain."),
		lag:      d("clamm_index_lag_blocks", "Blocks the embedded indexer trails the node's head, per chain."),
		blocks:   d("clamm_index_blocks_total", "Blocks the embedded indexer went through (with or without events), per chain."),
		events:   d("clamm_index_events_total", "Logs the embedded indexer handed to the mappings, per chain."),
		reorgs:   d("clamm_index_reorgs_total", "Reorgs the embedded indexer reverted, per chain."),
		requests: d("clamm_index_rpc_requests_total", "JSON-RPC calls of the embedded indexer by method (each call of a batch counted), per chain.", "method"),
		sent:     d("clamm_index_rpc_http_requests_total", "HTTP requests the embedded indexer sent to the node (a JSON-RPC batch is one), per chain."),
		size:     d("clamm_index_store_bytes", "Size on disk of the embedded indexer's store, per chain."),
		failed:   d("clamm_index_failed", "1 when the embedded indexer stopped on an error it cannot retry past, per chain."),
	}
}

// Describe implements prometheus.Collector.
func (ix *Indexer) Describe(ch chan<- *prometheus.Desc) {
	d := ix.descs
	for _, x := range []*prometheus.Desc{d.block, d.head, d.lag, d.blocks, d.events, d.reorgs, d.requests, d.sent, d.size, d.failed} {
		ch <- x
	}
}

// Collect implements prometheus.Collector: the indexer is collected when
// /metrics is read, from its counters.
func (ix *Indexer) Collect(ch chan<- prometheus.Metric) {
	d := ix.descs
	st, c := ix.Status(), ix.Counts()
	ix.stats.mu.Lock()
	lag := ix.stats.lag
	ix.stats.mu.Unlock()
	failed := 0.0
	if st.State == StateFailed {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(d.block, prometheus.GaugeValue, float64(st.Block))
	ch <- prometheus.MustNewConstMetric(d.head, prometheus.GaugeValue, float64(st.ChainHead))
	ch <- prometheus.MustNewConstMetric(d.lag, prometheus.GaugeValue, float64(lag))
	ch <- prometheus.MustNewConstMetric(d.blocks, prometheus.CounterValue, float64(c.Blocks))
	ch <- prometheus.MustNewConstMetric(d.events, prometheus.CounterValue, float64(c.Events))
	ch <- prometheus.MustNewConstMetric(d.reorgs, prometheus.CounterValue, float64(c.Reorgs))
	for _, m := range methods {
		ch <- prometheus.MustNewConstMetric(d.requests, prometheus.CounterValue, float64(c.Requests[m]), m)
	}
	ch <- prometheus.MustNewConstMetric(d.sent, prometheus.CounterValue, float64(c.HTTPRequests))
	ch <- prometheus.MustNewConstMetric(d.size, prometheus.GaugeValue, float64(ix.store.Size()))
	ch <- prometheus.MustNewConstMetric(d.failed, prometheus.GaugeValue, failed)
}
