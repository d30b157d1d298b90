package indexer

import (
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
// caller's to retry).
func (ix *Indexer) fetchLogs(ctx context.Context, from, to uint64, f filter) ([]types.Log, error) {
	lgs, err := ix.node.logs(ctx, rangeQuery(from, to, f.addrs, f.topics))
	if err == nil {
		ix.size.grow(to-from+1, len(lgs))
		return lgs, nil
	}
	if ctx.Err() != nil || from == to {
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

// fetchRange reads [from, to]: the logs, then in one batch the blocks that
// hold some (with their transactions) and the range's last header, then
// the receipts the handlers need.
func (ix *Indexer) fetchRange(ctx context.Context, from, to uint64, f filter, reuse fetched) (*chunk, error) {
	lgs, err := ix.fetchLogs(ctx, from, to, f)
	if err != nil {
		return nil, err
	}
	c := &chunk{from: from, to: to, blocks: group(lgs)}
	calls := make([]rpc.BatchElem, 0, len(c.blocks)+1)
	for _, b := range c.blocks {
		if old := reuse[b.logs[0].BlockNumber]; old != nil && old.header.Hash == b.logs[0].BlockHash {
			b.header, b.txs, b.receipts = old.header, old.txs, maps.Clone(old.receipts)
			continue
		}
		calls = append(calls, headerCall(b.logs[0].BlockNumber, true, &b.header))
	}
	if n := len(c.blocks); n == 0 || c.blocks[n-1].logs[0].BlockNumber != to {
		calls = append(calls, headerCall(to, false, &c.end))
	}
	if err := ix.node.batch(ctx, calls); err != nil {
		return nil, err
	}
	if n := len(c.blocks); n > 0 && c.blocks[n-1].logs[0].BlockNumber == to {
		c.end = c.blocks[n-1].header
	}
	if c.end.Hash == (common.Hash{}) {
		return nil, fmt.Errorf("the node has no block %d", to)
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

// group sorts logs into their blocks, in block and log order, dropping
// logs a reorg removed.
func group(lgs []types.Log) []*blockData {
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
		if n := len(out); n == 0 || out[n-1].logs[0].BlockNumber != lg.BlockNumber {
			out = append(out, &blockData{})
		}
		b := out[len(out)-1]
		b.logs = append(b.logs, lg)
	}
	return out
}

// decode checks the block is the one the logs came from (a reorg between
// the calls makes the range be fetched again) and indexes its
// transactions.
func (b *blockData) decode() error {
	n := b.logs[0].BlockNumber
	if b.header.Hash == (common.Hash{}) {
		return fmt.Errorf("the node has no block %d", n)
	}
	if b.header.Hash != b.logs[0].BlockHash {
		return fmt.Errorf("block %d changed while it was read (a reorg): logs of %s, block %s", n, b.logs[0].BlockHash.Hex(), b.header.Hash.Hex())
	}
	var txs []tx
	if err := jsonUnmarshal(b.header.Txs, &txs); err != nil {
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
		var w []common.Hash
		for _, lg := range b.logs {
			if f.receipt(lg) && !slices.Contains(w, lg.TxHash) && b.receipts[lg.TxHash] == nil {
				w = append(w, lg.TxHash)
			}
		}
		if len(w) > 0 {
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
