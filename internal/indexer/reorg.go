package indexer

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// checkReorg asks whether the last block indexed is still on the chain;
// if the node names it with another hash, it reverts the store to the
// newest block it holds that the node names with its hash (the common
// ancestor), and reports that it moved. A node that does not have the
// block (null: behind, or a backend of a provider that is) is waited for
// (errNoBlock), and a header of another number is refused: neither is a
// reorg, and neither ever reverts the store.
func (ix *Indexer) checkReorg(ctx context.Context, cur graphnode.Block) (bool, error) {
	var h header
	if err := ix.node.batch(ctx, []rpc.BatchElem{headerCall(cur.Number, false, &h)}); err != nil {
		return false, err
	}
	if err := h.check(cur.Number); err != nil {
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
// node names with the same hash, comparing hashes a batch at a time. Only
// a block the node names with another hash is passed over: a block it
// does not have, or a header of another number, stops the search with an
// error (retried), so that a node behind or lying never empties the store;
// found is false only when the node names every block held otherwise.
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
			if err := hs[i].check(b.Number); err != nil {
				return graphnode.Block{}, false, fmt.Errorf("looking for the reorg's common ancestor: %w", err)
			}
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
