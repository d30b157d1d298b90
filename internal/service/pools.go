package service

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// PoolsSubgraph names the pools a market approved as the subgraph last
// read them (MarketPool): the candidates whose approval the chain confirms.
type PoolsSubgraph interface {
	MarketPools(ctx context.Context, market common.Address) ([]common.Address, subgraph.Meta, error)
}

// marketView is the market's strikes view over every pool it may buy
// from: the chain's StrikesView, which reads the prime pool, the pools
// configured for the market (marketPools) and those remembered from
// earlier answers, each with the market's approvedPools at the answer's
// block, at the same time as the subgraph's approved pools of the market;
// then, only when the subgraph names a pool the view lacks (the first time
// it does) or an approval is still unread (a market read for the first
// time), one more round trip for them (chain.Reader.PoolViews). Which of
// them the market buys from is view.ApprovedPools(): a configured pool the
// market does not approve is left out like any other.
func marketView(ctx context.Context, up *Upstreams, market common.Address) (*chain.StrikesView, error) {
	type named struct {
		pools []common.Address
		err   error
	}
	sg := make(chan named, 1)
	go func() {
		pools, _, err := up.Subgraph.MarketPools(ctx, market)
		sg <- named{pools, err}
	}()
	// The chain's read runs on the request's goroutine, so a panic in it
	// reaches the gateway's recovery as any other fill's does.
	view, err := up.Strikes.StrikesView(ctx, market, up.Config.MarketPools[market], registryHandlers(up.Config))
	n := <-sg
	// The chain's verdict on the market (not one, unsupported) comes first:
	// it says more about the request than a subgraph failure beside it.
	if err != nil {
		return nil, err
	}
	if n.err != nil {
		return nil, n.err
	}
	if err := up.Strikes.PoolViews(ctx, view, n.pools); err != nil {
		return nil, err
	}
	return view, nil
}
