package indexer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
)

// Run indexes until ctx ends (then it returns nil) or indexing stops for
// good: a mapping's error, a node of another chain, a node without the
// history's state. Failures of the node or the disk are retried with
// growing pauses, each logged and shown in Status (scrubbed and cut: a
// node's error text is the node's); a node behind (it lacks a block it
// reported) is waited for, a chain that changed while read is read again
// at once, and a node's Retry-After is waited out.
func (ix *Indexer) Run(ctx context.Context) error {
	var r retries
	for {
		err := ix.step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			r = retries{}
			ix.stepped()
			continue
		}
		r.progressed(ix.Status().Block)
		msg := ix.clean(err)
		if fatal(err) {
			ix.setStatus(func(s *Status) { s.State, s.Error = StateFailed, msg })
			ix.log.Error("indexing stopped", "chainId", ix.opts.ChainID, "err", msg)
			return err
		}
		ix.setStatus(func(s *Status) { s.Error = msg })
		wait, level := r.next(err, ix.opts.Poll)
		ix.log.Log(ctx, level, "indexing failed, retrying", "chainId", ix.opts.ChainID, "in", wait, "err", msg)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// clean is an error's text fit for the log and /readyz: the node's URL
// redacted (Options.Redact), key-like tokens scrubbed and the text cut to
// secret.MaxTextLen bytes (a node may answer a megabyte of error).
func (ix *Indexer) clean(err error) string {
	return secret.Scrub(ix.opts.Redact(err.Error()))
}

// retries are the pauses between failed steps: growing from 1 s to 30 s
// for a failure that repeats; a poll interval for a node behind; none for
// the first few times the chain changed while read; at least the node's
// Retry-After.
type retries struct {
	pause          time.Duration
	changed, waits int
	// block is the block indexed when the pauses began growing.
	block uint64
}

// progressed starts the pauses again from the least once a failing step
// had indexed past the block of the failures before: a step runs to the
// head, so a backfill of hours that fails now and then (a node's hiccup)
// would otherwise wait 30 s after each of its later failures.
func (r *retries) progressed(block uint64) {
	if block > r.block {
		*r = retries{block: block}
	}
}

func (r *retries) next(err error, poll time.Duration) (time.Duration, slog.Level) {
	var backoff *problem.BackoffError
	switch {
	case errors.Is(err, errNoBlock):
		if r.waits++; r.waits > 1 {
			return poll, slog.LevelDebug // said once, shown in Status
		}
		return poll, slog.LevelInfo
	case errors.Is(err, errChanged) && r.changed < 3:
		r.changed++
		return 0, slog.LevelInfo
	}
	r.pause = min(max(2*r.pause, time.Second), 30*time.Second)
	if errors.As(err, &backoff) {
		return max(r.pause, backoff.Wait), slog.LevelWarn
	}
	return r.pause, slog.LevelWarn
}

// errChanged is a chain that changed while a range was read (the logs of
// one branch, the headers of another): the range is read again.
var errChanged = errors.New("the chain changed while it was read (a reorg)")

// errWrongChain is a node that serves another chain than configured.
var errWrongChain = errors.New("the RPC node serves another chain")

// fatal reports a failure that retrying cannot fix.
func fatal(err error) bool {
	var he *mapping.HandlerError
	var pe *prunedError
	return errors.As(err, &he) || errors.As(err, &pe) || errors.Is(err, errWrongChain)
}

// step does one unit of work: checks the chain and the last block indexed
// (a reorg reverts), then indexes up to the head, or waits for a new one.
func (ix *Indexer) step(ctx context.Context) error {
	if ix.Status().State == StateStarting {
		id, batches, err := ix.node.probe(ctx)
		if err != nil {
			return fmt.Errorf("eth_chainId: %w", err)
		}
		if id != ix.opts.ChainID {
			return fmt.Errorf("%w: eth_chainId %d, configured %d", errWrongChain, id, ix.opts.ChainID)
		}
		if !batches {
			ix.log.Warn("the node refuses JSON-RPC batches: its calls are sent one at a time", "chainId", ix.opts.ChainID)
		}
	}
	head, err := ix.node.head(ctx)
	if err != nil {
		return fmt.Errorf("eth_blockNumber: %w", err)
	}
	cur, indexed, err := ix.store.Head(ctx)
	if err != nil {
		return err
	}
	from := ix.start
	if indexed {
		if head < cur.Number {
			// A node behind (a replica still syncing, a provider's backend
			// behind the others): waited for, never reverted to.
			ix.setStatus(func(s *Status) { s.ChainHead, s.Block = head, cur.Number })
			return fmt.Errorf("%w %d: its head is %d, behind the index", errNoBlock, cur.Number, head)
		}
		if moved, err := ix.checkReorg(ctx, cur); err != nil || moved {
			return err
		}
		from = cur.Number + 1
	}
	ix.setStatus(func(s *Status) { s.ChainHead, s.Block = head, cur.Number })
	ix.stats.lagBlocks(head - min(head, cur.Number))
	if from > head {
		caughtUp := false
		ix.setStatus(func(s *Status) { caughtUp, s.State, s.Error = s.State != StateSynced, StateSynced, "" })
		if caughtUp { // said once: a start gave no sign it had finished
			ix.log.Info("caught up: indexed to the chain's head, following it", "chainId", ix.opts.ChainID, "block", cur.Number)
		}
		ix.stats.lagBlocks(0)
		ix.announce(ctx, false) // confirms the head: the chain is quiet, not the feed
		if err := ix.prune(ctx, cur.Number); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(ix.opts.Poll):
		}
		return nil
	}
	// Once at the head, the chain stays synced while it follows: the lag
	// (and /readyz's bound on it) says how far behind it is.
	started := false
	ix.setStatus(func(s *Status) {
		if started = s.State == StateStarting; started {
			s.State = StateIndexing
		}
	})
	if started { // progress from the start, not only every opts.Progress
		ix.log.Info("indexing to the chain's head", "chainId", ix.opts.ChainID, "from", from, "head", head, "blocks", head-from+1)
	}
	prev := common.Hash{}
	if indexed {
		prev = common.HexToHash(cur.Hash)
	}
	return ix.sync(ctx, span{from: from, to: head, final: head - min(head, ix.opts.Confirmations), prev: prev})
}

// span is what one sync indexes: blocks from..to; those up to final are
// read by range (taken as final), those above it block by block with
// their links checked (readNear); prev is the hash of the block indexed
// before from (zero: none).
type span struct {
	from, to, final uint64
	prev            common.Hash
}

// keepBlocks is how many blocks below the head the store keeps every
// block pointer of (what reorgs are checked against, and what `block:
// {hash}` finds besides the blocks with changes); pruneEvery is how many
// idle steps pass between two prunes.
const (
	keepBlocks = 10_000
	pruneEvery = 1_000
)

// prune forgets, once in pruneEvery idle steps, the blocks far below the
// head that changed nothing: following records a pointer block each step.
func (ix *Indexer) prune(ctx context.Context, head uint64) error {
	ix.idle++
	if ix.idle%pruneEvery != 0 || head < keepBlocks {
		return nil
	}
	return ix.store.Prune(ctx, head-keepBlocks)
}

// filter is the data sources' eth_getLogs filter now, with which of their
// logs need a receipt (a snapshot: the fetchers read it while the mappings
// create data sources).
func (ix *Indexer) filter() filter {
	addrs, topics := ix.sg.Filter()
	need := map[common.Address]map[common.Hash]bool{}
	for _, w := range ix.sg.Watching() {
		for _, t := range topics {
			lg := types.Log{Address: w.Address, Topics: []common.Hash{t}}
			if ix.sg.NeedsReceipt(lg) {
				if need[w.Address] == nil {
					need[w.Address] = map[common.Hash]bool{}
				}
				need[w.Address][t] = true
			}
		}
	}
	return filter{addrs: addrs, topics: topics, receipt: func(lg types.Log) bool {
		return len(lg.Topics) > 0 && need[lg.Address][lg.Topics[0]]
	}}
}

// result is one range fetched ahead, with its mappings' calls
// prefetched (calls.go).
type result struct {
	c     *chunk
	err   error
	calls callCache
}

// ahead fetches [from, to] in ranges, up to opts.Ahead at once, and
// delivers them in order. stop ends the ranges' production (queue is
// closed once the ranges already started are in it); the fetches end with
// ctx.
func (ix *Indexer) ahead(ctx context.Context, sp span, f filter, reuse fetched) (queue <-chan chan result, stop func()) {
	out := make(chan chan result, ix.opts.Ahead)
	produce, stop := context.WithCancel(ctx)
	last := reuse.last()
	go func() {
		defer close(out)
		for next := sp.from; next <= sp.to && produce.Err() == nil; {
			end := min(next+ix.size.get()-1, sp.to)
			if next <= sp.final {
				end = min(end, sp.final) // a range is far or near, not both
			}
			near := end > sp.final
			ch := make(chan result, 1)
			select {
			case out <- ch:
			case <-produce.Done():
				return
			}
			if next > last {
				reuse = nil // past them: let them go
			}
			go func(c *chunk, reuse fetched) {
				c, err := ix.fetchRange(ctx, c, f, reuse)
				var calls callCache
				if err == nil {
					calls = ix.prefetch(ctx, c)
				}
				ch <- result{c, err, calls}
			}(&chunk{from: next, to: end, near: near}, reuse)
			next = end + 1
		}
	}()
	return out, stop
}

// sync indexes the span. It returns early, with nil, after a block whose
// mappings created data sources: their logs were not in the filter the
// ranges after it were fetched with, so the caller starts again after it.
// A near range whose first block's parent is not the block indexed before
// it is refused (errChanged): the next step checks for a reorg.
func (ix *Indexer) sync(ctx context.Context, sp span) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer func() {
		// A range's blocks commit together with its last pointer; a
		// failure drops the range's staged blocks, and the next step
		// starts again after the last range committed.
		if err != nil {
			ix.store.Discard()
		}
	}()
	f, reuse := ix.filter(), ix.fetched
	ix.fetched = nil
	queue, stop := ix.ahead(ctx, sp, f, reuse)
	defer stop()
	prev := sp.prev
	flushed := time.Now()
	for ch := range queue {
		r := <-ch
		if r.err != nil {
			return r.err
		}
		if r.c.near && prev != (common.Hash{}) && r.c.parent != prev {
			return fmt.Errorf("%w: block %d's parent %s is not the block indexed before it, %s", errChanged, r.c.from, r.c.parent.Hex(), prev.Hex())
		}
		prev = r.c.end.Hash
		ix.calls = r.calls
		created, err := ix.applyChunk(ctx, r.c)
		ix.calls = nil
		ix.rec.end(&ix.predict)
		if err != nil {
			return err
		}
		if created || r.c.near || time.Since(flushed) >= flushEvery {
			if err := ix.store.Flush(ctx); err != nil {
				return err
			}
			flushed = time.Now()
			ix.announce(ctx, false)
		}
		if created {
			ix.fetched = keepFetched(r.c, stop, queue)
			return nil
		}
		ix.stats.advanced(r.c.to-r.c.from+1, sp.to-r.c.to)
		ix.setStatus(func(s *Status) { s.Block = r.c.to })
		ix.progress(r.c.to, sp.to)
	}
	if err := ix.store.Flush(ctx); err != nil {
		return err
	}
	ix.announce(ctx, false)
	return nil
}

// flushEvery is how long the ranges of a backfill far below the head
// stay in one transaction: a commit a range (tens of events over 10,000
// blocks on a quiet history) cost the write-ahead log a write and a sync
// each, a tenth of the backfill's time; a range near the head commits
// at once (what streams and answers at the head wait for). A failure
// drops what was not committed, and the next step reads it again. At one
// second the commits were still 6 % of a backfill's CPU (at 1/10 of
// Arbitrum's history: each rewrote the same index pages to the log);
// three cut that by a quarter, for at most three seconds of work redone.
const flushEvery = 3 * time.Second

// keepFetched stops fetching ahead and keeps the blocks already fetched
// (c's and those of the ranges in queue, whose fetches it lets finish):
// the next sync, with the created data sources in its filter, asks the
// node for the ranges' logs again but not for these blocks.
func keepFetched(c *chunk, stop func(), queue <-chan chan result) fetched {
	stop()
	out := fetched{}
	keep := func(c *chunk) {
		for _, b := range c.blocks {
			out[b.number()] = b
		}
	}
	keep(c)
	for ch := range queue {
		if r := <-ch; r.err == nil {
			keep(r.c)
		}
	}
	return out
}

// applyChunk stages a fetched range's blocks with the range's last block
// as the pointer (sync commits them). After a block whose mappings
// created data sources it stops there (created).
func (ix *Indexer) applyChunk(ctx context.Context, c *chunk) (created bool, err error) {
	for _, b := range c.blocks {
		made, err := ix.apply(ctx, b)
		if err != nil {
			return false, err
		}
		if len(made) > 0 {
			return true, nil
		}
	}
	if n := len(c.blocks); n == 0 || uint64(c.blocks[n-1].header.Number) < c.to {
		return false, ix.store.StageAdvance(ctx, graphBlock(c.end))
	}
	return false, nil
}

func graphBlock(h header) graphnode.Block {
	return graphnode.Block{Number: uint64(h.Number), Hash: h.Hash.Hex(), Timestamp: uint64(h.Timestamp), ParentHash: h.ParentHash.Hex()}
}

func mappingBlock(h header) mapping.Block {
	return mapping.Block{Number: uint64(h.Number), Hash: h.Hash, Timestamp: uint64(h.Timestamp), ParentHash: h.ParentHash}
}

// apply indexes one block with logs and commits it; it returns the data
// sources its mappings created.
func (ix *Indexer) apply(ctx context.Context, b *blockData) (created []mapping.Watched, err error) {
	w := ix.store.Begin(graphBlock(b.header))
	defer func() {
		if err != nil {
			for _, c := range created {
				ix.sg.Unwatch(c.Address)
			}
			created = nil
		}
	}()
	logs := make([]mapping.BlockLog, len(b.logs))
	for i, lg := range b.logs {
		logs[i] = mapping.BlockLog{Log: lg, Tx: ix.txOf(b, lg)}
	}
	before := ix.sg.Handled()
	created, err = ix.sg.BlockTo(ctx, retryable{w}, mappingBlock(b.header), logs, ix.createdLogs(b))
	if err != nil {
		return nil, err
	}
	for _, c := range created {
		w.Create(sqlstore.DataSource{Address: strings.ToLower(c.Address.Hex()), Name: c.Name, Start: c.Start})
	}
	if err := w.Stage(ctx); err != nil {
		return created, err
	}
	ix.stats.events(int(ix.sg.Handled() - before))
	return created, nil
}

// txOf gives a log's transaction from its block, with the receipt when
// its handler asks (read now if the fetch did not). The mappings ask it
// right before they run the log's handler (mapping.Subgraph's run), so it
// also starts the recording of the calls that handler makes (calls.go).
func (ix *Indexer) txOf(b *blockData, lg types.Log) func(context.Context, bool) (mapping.Tx, error) {
	return func(ctx context.Context, receipt bool) (mapping.Tx, error) {
		if len(lg.Topics) > 0 {
			ix.rec.begin(&ix.predict, trigger{lg.Address, lg.Topics[0]})
		}
		t, ok := b.txs[lg.TxHash]
		if !ok {
			return mapping.Tx{}, fmt.Errorf("block %d has no transaction %s", lg.BlockNumber, lg.TxHash.Hex())
		}
		out := mapping.Tx{Hash: t.Hash, Index: uint64(lg.TxIndex), From: t.From, To: t.To, Input: t.Input}
		if !receipt {
			return out, nil
		}
		rc := b.receipts[lg.TxHash]
		if rc == nil {
			rs, err := ix.node.receipts(ctx, []common.Hash{lg.TxHash})
			if err != nil {
				return out, err
			}
			if b.receipts == nil {
				b.receipts = map[common.Hash]*types.Receipt{}
			}
			rc = rs[lg.TxHash]
			b.receipts[lg.TxHash] = rc
		}
		out.Receipt = rc
		return out, nil
	}
}

// createdLogs reads the block's logs of data sources its mappings just
// created, by the block's hash.
func (ix *Indexer) createdLogs(b *blockData) mapping.Fetch {
	return func(ctx context.Context, addrs []common.Address) ([]mapping.BlockLog, error) {
		_, topics := ix.sg.Filter()
		hash := b.header.Hash
		q := rangeQuery(0, 0, addrs, topics)
		q.FromBlock, q.ToBlock, q.BlockHash = nil, nil, &hash
		lgs, err := ix.node.logs(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("eth_getLogs of block %s: %w", hash.Hex(), err)
		}
		var out []mapping.BlockLog
		for _, lg := range lgs {
			if !lg.Removed {
				out = append(out, mapping.BlockLog{Log: lg, Tx: ix.txOf(b, lg)})
			}
		}
		return out, nil
	}
}

// ethCall answers a mapping's ethereum.call at the trigger's block: from
// the range's answers if one is for this very call at this very block (by
// hash), else from the node (an answer then kept for the range's events
// after it; an error is not).
func (ix *Indexer) ethCall(ctx context.Context, to common.Address, data []byte, at mapping.Block) ([]byte, bool, error) {
	ix.rec.ask(to, data)
	if a, ok := ix.cached(to, data, at.Hash); ok {
		return bytes.Clone(a.ret), a.reverted, nil
	}
	ret, reverted, err := ix.node.ethCall(ctx, to, data, at.Hash, at.Number)
	if err == nil {
		ix.keep(to, data, at.Hash, ret, reverted)
	}
	return ret, reverted, err
}

// progress logs how far indexing is, at most once per opts.Progress.
func (ix *Indexer) progress(block, target uint64) {
	now := time.Now()
	blocks, events, since, ok := ix.stats.sample(now, ix.opts.Progress)
	if !ok {
		return
	}
	secs := max(since.Seconds(), 1e-9)
	c := ix.Counts()
	ix.log.Info("indexing", "chainId", ix.opts.ChainID, "block", block, "target", target,
		"remaining", target-block, "blocksPerSecond", int64(float64(blocks)/secs), "eventsPerSecond", int64(float64(events)/secs),
		"ethCallsPrefetched", c.CallsPrefetched, "ethCallsUsed", c.CallsUsed, "ethCallsWasted", c.CallsPrefetched-c.CallsUsed)
}
