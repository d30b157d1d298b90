package service

import (
	"context"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// MarketsList is /clamm/option-markets' answer: the chain's option markets
// and, chain-wide, the swappers an exercise on them can go through, both
// at one subgraph block. It composes two sides (market's markets, trade's
// swappers), so it is answered here.
type MarketsList struct {
	Markets []market.OptionMarket `json:"markets"`
	// Swappers are the chain's configured swappers and those its own
	// exercises used, as the exercise prepare offers them
	// (trade.ChainSwappers); null when the learned ones could not be
	// read (Unknown.swappers says why): an add-on never fails the list.
	Swappers []trade.SwapperChoice `json:"swappers"`
	// Unknown names each field left null because its read failed, and
	// why; absent when every read answered.
	Unknown map[string]string `json:"unknown,omitempty"`
	Block   uint64            `json:"-"`
}

// Degraded: an add-on was left unknown; the gateway caches such an
// answer only briefly, so it heals when the subgraph answers again.
func (l MarketsList) Degraded() bool { return len(l.Unknown) > 0 }

// OptionMarketsList is the markets list with the chain's swappers, read
// after the markets so that they are read at the block the markets'
// subgraph query fixed (the endpoint's pin).
func (s *Service) OptionMarketsList(ctx context.Context, chainID uint64) (MarketsList, error) {
	res, err := s.OptionMarkets(ctx, chainID)
	if err != nil {
		return MarketsList{}, err
	}
	out := MarketsList{Markets: res.Markets, Block: res.Block}
	out.Swappers, err = s.ChainSwappers(ctx, chainID)
	if err != nil {
		out.Swappers = nil
		out.Unknown = map[string]string{"swappers": "swappers not read: " + problem.As(err).Message}
	} else if out.Swappers == nil {
		out.Swappers = []trade.SwapperChoice{}
	}
	return out, nil
}
