package indexer

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"
)

// filter is what the data sources handle at one moment: their addresses,
// their handlers' topic0s, and which logs' handlers read the receipt.
type filter struct {
	addrs   []common.Address
	topics  []common.Hash
	receipt func(types.Log) bool
}

// chunk is one fetched range: its blocks that hold logs, in order, and
// the header of its last block (the pointer once the range is applied).
type chunk struct {
	from, to uint64
	blocks   []*blockData
	end      header
	// near: the range is within the confirmation depth of the head, so
	// every header of it was read and linked; parent is the parentHash of
	// block from, checked against the block indexed before it.
	near   bool
	parent common.Hash
}

// blockData is a block with logs: its header, its logs in order, its
// transactions and the receipts its handlers need.
type blockData struct {
	header   header
	logs     []types.Log
	txs      map[common.Hash]tx
	receipts map[common.Hash]*types.Receipt
}

// fetched are blocks read for ranges that were not applied (a data source
// created before them changed the filter), by number: read again, a
// range takes their header, transactions and receipts from here when its
// logs name the same block hash. Read-only once built.
type fetched map[uint64]*blockData

// last is the newest block held (0 if none).
func (f fetched) last() uint64 {
	var n uint64
	for k := range f {
		n = max(n, k)
	}
	return n
}

// sizer adapts the eth_getLogs range to the node: halved when a range
// fails (a node's "too many results" or response-size refusal, whatever
// its wording), doubled while answers stay small.
type sizer struct {
	size     atomic.Uint64
	min, max uint64
	// small is a log count under which a range may grow.
	small int
}

func (s *sizer) get() uint64 { return s.size.Load() }

func (s *sizer) shrink(failed uint64) {
	n := max(failed/2, s.min)
	if n < s.size.Load() {
		s.size.Store(n)
	}
}

func (s *sizer) grow(done uint64, logs int) {
	if logs < s.small && done >= s.size.Load() {
		s.size.Store(min(2*done, s.max))
	}
}

// fetchLogs reads the logs of [from, to], splitting a range the node
// refuses into halves until it answers (a one-block range's failure is the
// caller's to retry): whatever its wording, an answer too large (past
// MaxAnswer), a timeout. A rate limit or an unreachable node is not a
// range too large: its range is kept.
func (ix *Indexer) fetchLogs(ctx context.Context, from, to uint64, f filter) ([]types.Log, error) {
	lgs, err := ix.node.logs(ctx, rangeQuery(from, to, f.addrs, f.topics))
	if err == nil {
		ix.size.grow(to-from+1, len(lgs))
		return lgs, nil
	}
	if ctx.Err() != nil || from == to || rateLimited(err) || unreachable(err) {
		// a rate limit or a node unreachable is not a range too large:
		// retried whole, after the pause (and the Retry-After)
		return nil, fmt.Errorf("eth_getLogs [%d, %d]: %w", from, to, err)
	}
	ix.size.shrink(to - from + 1)
	mid := from + (to-from)/2
	a, err := ix.fetchLogs(ctx, from, mid, f)
	if err != nil {
		return nil, err
	}
	b, err := ix.fetchLogs(ctx, mid+1, to, f)
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

// fetchRange reads c's range [from, to]: the logs, then the blocks that hold some
// (with their transactions) and the headers the range is checked with,
// then the receipts the handlers need. A range near the head (within the
// confirmation depth) has every header read and checked (readNear);
// one below it only its last one (readFar): its blocks are taken as final.
func (ix *Indexer) fetchRange(ctx context.Context, c *chunk, f filter, reuse fetched) (*chunk, error) {
	lgs, err := ix.fetchLogs(ctx, c.from, c.to, f)
	if err != nil {
		return nil, err
	}
	if c.blocks, err = group(lgs); err != nil {
		return nil, fmt.Errorf("eth_getLogs [%d, %d]: %w", c.from, c.to, err)
	}
	if c.near {
		err = ix.readNear(ctx, c, f, reuse)
	} else {
		err = ix.readFar(ctx, c, f, reuse)
	}
	if err != nil {
		return nil, err
	}
	for _, b := range c.blocks {
		if b.txs != nil {
			continue // reused, decoded when first read
		}
		if err := b.decode(); err != nil {
			return nil, err
		}
	}
	if err := ix.fetchReceipts(ctx, c.blocks, f); err != nil {
		return nil, err
	}
	return c, nil
}

// blockCalls are the full blocks of the blocks with logs, but those read
// before for the same block hash (reused).
func blockCalls(blocks []*blockData, reuse fetched) []rpc.BatchElem {
	calls := make([]rpc.BatchElem, 0, len(blocks)+1)
	for _, b := range blocks {
		if old := reuse[b.number()]; old != nil && old.header.Hash == b.logs[0].BlockHash {
			b.header, b.txs, b.receipts = old.header, old.txs, maps.Clone(old.receipts)
			continue
		}
		calls = append(calls, headerCall(b.number(), true, &b.header))
	}
	return calls
}

// readFar reads the blocks with logs of a range below the confirmation
// depth, and its last header (the pointer once applied), with the
// receipts its handlers need in the same batch (receiptAsk).
func (ix *Indexer) readFar(ctx context.Context, c *chunk, f filter, reuse fetched) error {
	calls := blockCalls(c.blocks, reuse)
	n := len(c.blocks)
	endsWithLogs := n > 0 && c.blocks[n-1].number() == c.to
	if !endsWithLogs {
		calls = append(calls, headerCall(c.to, false, &c.end))
	}
	ask := ix.receiptAsk(c.blocks, f)
	if err := ix.node.batch(ctx, append(calls, ask.calls()...)); err != nil {
		if len(ask.blocks) == 0 || !methodMissing(err) {
			return err
		}
		// a node without eth_getBlockReceipts: its blocks read alone,
		// the receipts by transaction after (fetchReceipts)
		ix.node.noBlockReceipts.Store(true)
		if err := ix.node.batch(ctx, calls); err != nil {
			return err
		}
	} else {
		ask.keep()
	}
	if endsWithLogs {
		c.end = c.blocks[n-1].header
	}
	return c.end.check(c.to)
}

// receiptAsk is eth_getBlockReceipts of a range's blocks whose handlers
// read receipts, sent in the batch that reads the blocks: one request a
// range for both, where asking after the blocks would be a second one.
// It is sent once the node has answered the method whole (fetchReceipts
// probes it first, a batch at a time); what it cannot give then (an
// answer without a receipt asked) fetchReceipts asks for after it.
type receiptAsk struct {
	blocks []*blockData
	want   [][]common.Hash
	got    [][]*types.Receipt
}

func (ix *Indexer) receiptAsk(blocks []*blockData, f filter) *receiptAsk {
	a := &receiptAsk{}
	if ix.node.noBlockReceipts.Load() || !ix.node.hasBlockReceipts.Load() {
		return a
	}
	for _, b := range blocks {
		if w := neededReceipts(b, f); len(w) > 0 {
			a.blocks, a.want = append(a.blocks, b), append(a.want, w)
		}
	}
	a.got = make([][]*types.Receipt, len(a.blocks))
	return a
}

func (a *receiptAsk) calls() []rpc.BatchElem {
	out := make([]rpc.BatchElem, len(a.blocks))
	for i, b := range a.blocks {
		out[i] = rpc.BatchElem{Method: "eth_getBlockReceipts", Args: []any{blockArg(b.number())}, Result: &a.got[i]}
	}
	return out
}

// keep gives the blocks the receipts answered, when they hold every one
// asked (the answers of another block than the one read are refused as the
// transaction's receipt is used: by hash, from the block's own list).
func (a *receiptAsk) keep() {
	if !complete(a.got, a.want) {
		return
	}
	for i, b := range a.blocks {
		if b.receipts == nil {
			b.receipts = make(map[common.Hash]*types.Receipt, len(a.got[i]))
		}
		for _, r := range a.got[i] {
			if r != nil {
				b.receipts[r.TxHash] = r
			}
		}
	}
}

// neededReceipts are the hashes of b's transactions whose logs' handlers
// read the receipt and whose receipt b does not hold yet.
func neededReceipts(b *blockData, f filter) []common.Hash {
	var w []common.Hash
	for _, lg := range b.logs {
		if f.receipt(lg) && !slices.Contains(w, lg.TxHash) && b.receipts[lg.TxHash] == nil {
			w = append(w, lg.TxHash)
		}
	}
	return w
}

// readNear reads every header of a range near the head and commits it
// only once the headers, their links and the logs agree: each block's
// parentHash is the hash of the block before it (the first one's is
// checked against the block indexed before, when applied), each block
// with logs is the block its logs name, and a block without logs in the
// answer has none: its logsBloom cannot hold a log of the filter, or its
// logs read again by its hash (EIP-234) are none. A short answer (a
// provider whose log index trails its blocks, a reorg between the calls)
// is so read again, never committed past.
func (ix *Indexer) readNear(ctx context.Context, c *chunk, f filter, reuse fetched) error {
	hs := make([]header, c.to-c.from+1)
	withLogs := map[uint64]*blockData{}
	for _, b := range c.blocks {
		withLogs[b.number()] = b
	}
	calls := blockCalls(c.blocks, reuse)
	for n := c.from; n <= c.to; n++ {
		if withLogs[n] == nil {
			calls = append(calls, headerCall(n, false, &hs[n-c.from]))
		}
	}
	if err := ix.node.batch(ctx, calls); err != nil {
		return err
	}
	var short []header
	for i := range hs {
		n := c.from + uint64(i)
		if b := withLogs[n]; b != nil {
			hs[i] = b.header
		} else if hs[i].Bloom != (types.Bloom{}) && f.mayHold(hs[i].Bloom) {
			short = append(short, hs[i])
		}
		if err := hs[i].check(n); err != nil {
			return err
		}
		if i > 0 && hs[i].ParentHash != hs[i-1].Hash {
			return fmt.Errorf("%w: block %d's parent is not block %d read with it", errChanged, n, n-1)
		}
	}
	c.parent, c.end = hs[0].ParentHash, hs[len(hs)-1]
	return ix.readShort(ctx, c, short, f)
}

// mayHold reports whether a block whose logsBloom is b may hold a log the
// filter asks for: one of its addresses and one of its topics are in it.
func (f filter) mayHold(b types.Bloom) bool {
	addr := slices.ContainsFunc(f.addrs, func(a common.Address) bool { return b.Test(a.Bytes()) })
	return addr && slices.ContainsFunc(f.topics, func(t common.Hash) bool { return b.Test(t.Bytes()) })
}

// readShort reads again, by block hash, the logs of the blocks whose bloom
// says the range's answer may have left some out; those that have some
// are read whole (by hash) and join the range. A bloom's false positive
// costs one eth_getLogs, batched with the others.
func (ix *Indexer) readShort(ctx context.Context, c *chunk, short []header, f filter) error {
	if len(short) == 0 {
		return nil
	}
	got := make([][]types.Log, len(short))
	calls := make([]rpc.BatchElem, len(short))
	for i, h := range short {
		q := rangeQuery(0, 0, f.addrs, f.topics)
		q.FromBlock, q.ToBlock, q.BlockHash = nil, nil, &h.Hash
		calls[i] = rpc.BatchElem{Method: "eth_getLogs", Args: []any{filterArg(q)}, Result: &got[i]}
	}
	if err := ix.node.batch(ctx, calls); err != nil {
		return fmt.Errorf("eth_getLogs by block hash: %w", err)
	}
	var more []*blockData
	for i := range short {
		bs, err := group(got[i])
		if err != nil {
			return fmt.Errorf("eth_getLogs of block %s: %w", short[i].Hash.Hex(), err)
		}
		more = append(more, bs...)
	}
	if len(more) == 0 {
		return nil
	}
	ix.log.Info("logs left out of an eth_getLogs answer, read again by block hash", "chainId", ix.opts.ChainID, "blocks", len(more))
	full := make([]rpc.BatchElem, len(more))
	for i, b := range more {
		full[i] = rpc.BatchElem{Method: "eth_getBlockByHash", Args: []any{b.logs[0].BlockHash, true}, Result: &b.header}
	}
	if err := ix.node.batch(ctx, full); err != nil {
		return err
	}
	c.blocks = append(c.blocks, more...)
	slices.SortFunc(c.blocks, func(a, b *blockData) int { return cmp.Compare(a.number(), b.number()) })
	return nil
}

// group sorts logs into their blocks, in block and log order, dropping
// logs a reorg removed. A log given twice (the same block hash and index)
// is kept once; two different logs under one block and index are a
// lying node's answer, refused.
func group(lgs []types.Log) ([]*blockData, error) {
	sort.Slice(lgs, func(i, j int) bool {
		if lgs[i].BlockNumber != lgs[j].BlockNumber {
			return lgs[i].BlockNumber < lgs[j].BlockNumber
		}
		return lgs[i].Index < lgs[j].Index
	})
	var out []*blockData
	for _, lg := range lgs {
		if lg.Removed {
			continue
		}
		if n := len(out); n == 0 || out[n-1].number() != lg.BlockNumber {
			out = append(out, &blockData{})
		}
		b := out[len(out)-1]
		if k := len(b.logs); k > 0 && b.logs[k-1].Index == lg.Index && b.logs[k-1].BlockHash == lg.BlockHash {
			if !sameLog(b.logs[k-1], lg) {
				return nil, fmt.Errorf("two different logs at index %d of block %d", lg.Index, lg.BlockNumber)
			}
			continue
		}
		b.logs = append(b.logs, lg)
	}
	return out, nil
}

func sameLog(a, b types.Log) bool {
	return a.Address == b.Address && slices.Equal(a.Topics, b.Topics) && bytes.Equal(a.Data, b.Data) && a.TxHash == b.TxHash
}

// number is the block's number (its logs').
func (b *blockData) number() uint64 { return b.logs[0].BlockNumber }

// decode checks the block is the one the logs came from (a reorg between
// the calls makes the range be fetched again) and indexes its
// transactions.
func (b *blockData) decode() error {
	n := b.number()
	if err := b.header.check(n); err != nil {
		return err
	}
	if b.header.Hash != b.logs[0].BlockHash {
		return fmt.Errorf("%w: block %d: logs of %s, block %s", errChanged, n, b.logs[0].BlockHash.Hex(), b.header.Hash.Hex())
	}
	txs, err := decodeTxs(b.header.Txs)
	if err != nil {
		return fmt.Errorf("block %d transactions: %w", n, err)
	}
	b.txs = make(map[common.Hash]tx, len(txs))
	for _, t := range txs {
		b.txs[t.Hash] = t
	}
	b.header.Txs = nil
	return nil
}

// fetchReceipts reads the receipts of the blocks whose logs' handlers
// declare `receipt: true`: the blocks' receipts together, in batches.
func (ix *Indexer) fetchReceipts(ctx context.Context, blocks []*blockData, f filter) error {
	var need []*blockData
	var numbers []uint64
	var want [][]common.Hash
	for _, b := range blocks {
		if w := neededReceipts(b, f); len(w) > 0 {
			need, numbers, want = append(need, b), append(numbers, b.logs[0].BlockNumber), append(want, w)
		}
	}
	if len(need) == 0 {
		return nil
	}
	rs, err := ix.node.blockReceipts(ctx, numbers, want)
	if err != nil {
		return err
	}
	for i, b := range need {
		if b.receipts == nil {
			b.receipts = rs[i]
			continue
		}
		maps.Copy(b.receipts, rs[i])
	}
	return nil
}
