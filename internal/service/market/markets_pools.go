package market

import (
	"context"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// A market buys from every pool it approves (approvedPools, set by
// updateAddress) and no other. The candidates are the prime pool, the
// pools configured for the market (marketPools) and those the subgraph
// has the market approving (MarketPool), which the documents that list a
// market's ranges (strikes, stats_ranges) select beside them, at the same
// block: no query of their own. The chain has the last word: the market's
// approvedPools of each, read in the round trip of the pool prices.

// marketView is the market's view before any subgraph read: the prime
// pool, the configured pools and those remembered from earlier answers,
// with their prices and approvals, and the handlers (chain.StrikesView).
func marketView(ctx context.Context, up *vocab.Upstreams, market common.Address) (*chain.StrikesView, error) {
	return up.Chain.StrikesView(ctx, market, up.Config.MarketPools[market], registryHandlers(up.Config))
}

// completeView reads, in one round trip and only when there is something
// to read, what a subgraph answer named that view lacks: the pools it has
// the market approving, the approvals view has not read (the prime pool of
// a market read for the first time) and the handlers of its ranges. It
// returns the pools the market approves that the answer did not cover
// (asked): their ranges are still to be read.
func completeView(ctx context.Context, up *vocab.Upstreams, view *chain.StrikesView, asked []common.Address, named namedBy) ([]common.Address, error) {
	if err := up.Chain.CompleteView(ctx, view, named.pools, named.handlers); err != nil {
		return nil, err
	}
	var fresh []common.Address
	for _, p := range view.ApprovedPools() {
		if !slices.Contains(asked, p) {
			fresh = append(fresh, p)
		}
	}
	return fresh, nil
}

// namedBy is what a subgraph answer named: the pools it has the market
// approving, and the handlers of its ranges.
type namedBy struct {
	pools, handlers []common.Address
}
