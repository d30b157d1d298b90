package indexer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
)

// Run indexes until ctx ends (then it returns nil) or indexing stops for
// good: a mapping's error, a node of another chain, a node without the
// history's state. Failures of the node or the disk are retried with
// growing pauses, each logged and shown in Status.
func (ix *Indexer) Run(ctx context.Context) error {
	pause := time.Second
	for {
		err := ix.step(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err == nil {
			pause = time.Second
			continue
		}
		msg := ix.opts.Redact(err.Error())
		if fatal(err) {
			ix.setStatus(func(s *Status) { s.State, s.Error = StateFailed, msg })
			ix.log.Error("indexing stopped", "chainId", ix.opts.ChainID, "err", msg)
			return err
		}
		ix.setStatus(func(s *Status) { s.Error = msg })
		ix.log.Warn("indexing failed, retrying", "chainId", ix.opts.ChainID, "in", pause, "err", msg)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

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
		id, err := ix.node.chainID(ctx)
		if err != nil {
			return fmt.Errorf("eth_chainId: %w", err)
		}
		if id != ix.opts.ChainID {
			return fmt.Errorf("%w: eth_chainId %d, configured %d", errWrongChain, id, ix.opts.ChainID)
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
		if moved, err := ix.checkReorg(ctx, cur); err != nil || moved {
			return err
		}
		from = cur.Number + 1
	}
	ix.setStatus(func(s *Status) { s.ChainHead, s.Block = head, cur.Number })
	ix.stats.lagBlocks(head - min(head, cur.Number))
	if from > head {
		ix.setStatus(func(s *Status) { s.State, s.Error = StateSynced, "" })
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
	ix.setStatus(func(s *Status) {
		if s.State == StateStarting {
			s.State = StateIndexing
		}
	})
	return ix.sync(ctx, from, head)
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

// result is one range fetched ahead.
type result struct {
	c   *chunk
	err error
}

// ahead fetches [from, to] in ranges, up to opts.Ahead at once, and
// delivers them in order. stop ends the ranges' production (queue is
// closed once the ranges already started are in it); the fetches end with
// ctx.
func (ix *Indexer) ahead(ctx context.Context, from, to uint64, f filter, reuse fetched) (queue <-chan chan result, stop func()) {
	out := make(chan chan result, ix.opts.Ahead)
	produce, stop := context.WithCancel(ctx)
	last := reuse.last()
	go func() {
		defer close(out)
		for next := from; next <= to && produce.Err() == nil; {
			end := min(next+ix.size.get()-1, to)
			ch := make(chan result, 1)
			select {
			case out <- ch:
			case <-produce.Done():
				return
			}
			if next > last {
				reuse = nil // past them: let them go
			}
			go func(a, b uint64, reuse fetched) {
				c, err := ix.fetchRange(ctx, a, b, f, reuse)
				ch <- result{c, err}
			}(next, end, reuse)
			next = end + 1
		}
	}()
	return out, stop
}

// sync indexes [from, to]. It returns early, with nil, after a block whose
// mappings created data sources: their logs were not in the filter the
// ranges after it were fetched with, so the caller starts again after it.
func (ix *Indexer) sync(ctx context.Context, from, to uint64) (err error) {
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
	queue, stop := ix.ahead(ctx, from, to, f, reuse)
	defer stop()
	for ch := range queue {
		r := <-ch
		if r.err != nil {
			return r.err
		}
		created, err := ix.applyChunk(ctx, r.c)
		if err != nil {
			return err
		}
		ix.announce(ctx, false)
		if created {
			ix.fetched = keepFetched(r.c, stop, queue)
			return nil
		}
		ix.stats.advanced(r.c.to-r.c.from+1, to-r.c.to)
		ix.setStatus(func(s *Status) { s.Block = r.c.to })
		ix.progress(r.c.to, to)
	}
	return nil
}

// keepFetched stops fetching ahead and keeps the blocks already fetched
// (c's and those of the ranges in queue, whose fetches it lets finish):
// the next sync, with the created data sources in its filter, asks the
// node for the ranges' logs again but not for these blocks.
func keepFetched(c *chunk, stop func(), queue <-chan chan result) fetched {
	stop()
	out := fetched{}
	keep := func(c *chunk) {
		for _, b := range c.blocks {
			out[b.logs[0].BlockNumber] = b
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

// applyChunk indexes a fetched range's blocks and commits them with the
// range's last block as the pointer. After a block whose mappings created
// data sources it commits up to that block and stops (created).
func (ix *Indexer) applyChunk(ctx context.Context, c *chunk) (created bool, err error) {
	for _, b := range c.blocks {
		made, err := ix.apply(ctx, b)
		if err != nil {
			return false, err
		}
		if len(made) > 0 {
			return true, ix.store.Flush(ctx)
		}
	}
	if n := len(c.blocks); n == 0 || uint64(c.blocks[n-1].header.Number) < c.to {
		return false, ix.store.Advance(ctx, graphBlock(c.end))
	}
	return false, ix.store.Flush(ctx)
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
	ix.w.w = w
	defer func() {
		ix.w.w = nil
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
	created, err = ix.sg.Block(ctx, mappingBlock(b.header), logs, ix.createdLogs(b))
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
// its handler asks (read now if the fetch did not).
func (ix *Indexer) txOf(b *blockData, lg types.Log) func(context.Context, bool) (mapping.Tx, error) {
	return func(ctx context.Context, receipt bool) (mapping.Tx, error) {
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

// ethCall answers a mapping's ethereum.call at the trigger's block.
func (ix *Indexer) ethCall(ctx context.Context, to common.Address, data []byte, at mapping.Block) ([]byte, bool, error) {
	return ix.node.ethCall(ctx, to, data, at.Hash, at.Number)
}

// checkReorg asks whether the last block indexed is still on the chain;
// if not, it reverts the store to the newest block it holds that is (the
// common ancestor), and reports that it moved.
func (ix *Indexer) checkReorg(ctx context.Context, cur graphnode.Block) (bool, error) {
	var h header
	if err := ix.node.batch(ctx, []rpc.BatchElem{headerCall(cur.Number, false, &h)}); err != nil {
		return false, err
	}
	if h.Hash.Hex() == cur.Hash {
		return false, nil
	}
	ancestor, found, err := ix.ancestor(ctx, cur.Number)
	if err != nil {
		return false, err
	}
	created, err := ix.store.Sources(ctx)
	if err != nil {
		return false, err
	}
	for _, d := range created {
		if !found || d.Start > ancestor.Number {
			ix.sg.Unwatch(common.HexToAddress(d.Address))
		}
	}
	if !found {
		ix.log.Warn("reorg deeper than the store: indexing again from the start", "chainId", ix.opts.ChainID, "block", cur.Number)
		err = ix.store.Reset(ctx)
	} else {
		ix.log.Warn("reorg: reverting", "chainId", ix.opts.ChainID, "from", cur.Number, "to", ancestor.Number)
		if err = ix.store.Revert(ctx, ancestor.Number); err == nil {
			ix.announce(ctx, true)
		}
	}
	ix.stats.reorg()
	return true, err
}

// ancestor finds the newest block the store holds at or below n that the
// node still has, comparing hashes a batch at a time.
func (ix *Indexer) ancestor(ctx context.Context, n uint64) (graphnode.Block, bool, error) {
	const batch = 32
	for {
		held, err := ix.store.Blocks(ctx, n, batch)
		if err != nil || len(held) == 0 {
			return graphnode.Block{}, false, err
		}
		hs := make([]header, len(held))
		calls := make([]rpc.BatchElem, len(held))
		for i, b := range held {
			calls[i] = headerCall(b.Number, false, &hs[i])
		}
		if err := ix.node.batch(ctx, calls); err != nil {
			return graphnode.Block{}, false, err
		}
		for i, b := range held {
			if hs[i].Hash.Hex() == b.Hash {
				return b, true, nil
			}
		}
		last := held[len(held)-1].Number
		if last == 0 {
			return graphnode.Block{}, false, nil
		}
		n = last - 1
	}
}

// progress logs how far indexing is, at most once per opts.Progress.
func (ix *Indexer) progress(block, target uint64) {
	now := time.Now()
	blocks, events, since, ok := ix.stats.sample(now, ix.opts.Progress)
	if !ok {
		return
	}
	secs := max(since.Seconds(), 1e-9)
	ix.log.Info("indexing", "chainId", ix.opts.ChainID, "block", block, "target", target,
		"remaining", target-block, "blocksPerSecond", int64(float64(blocks)/secs), "eventsPerSecond", int64(float64(events)/secs))
}
