package service

import (
	"context"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// MarketsList is /clamm/option-markets' answer: the market side's list
// with, on each market, the chain's swappers as the trade side lists them
// for an exercise (Trade.ChainSwappers), read after the markets so that
// they are read at the block the markets' subgraph query fixed. A failed
// read of the learned ones lists the configured ones alone, with the
// reason (swappersUnknown), as the exercise prepare then offers them: the
// markets are served. Composed here, where both sides meet.
func (s *Service) MarketsList(ctx context.Context, chainID uint64) (market.MarketList, uint64, error) {
	res, err := s.OptionMarkets(ctx, chainID)
	if err != nil {
		return nil, 0, err
	}
	choices, err := s.ChainSwappers(ctx, chainID)
	unknown := ""
	if err != nil {
		unknown = "the swappers learned from the chain's exercises were not read: " + problem.As(err).Message
	}
	swappers := make([]market.MarketSwapper, len(choices))
	for i, c := range choices {
		swappers[i] = market.MarketSwapper{ID: c.ID, Kind: c.Kind, Address: c.Address, Source: c.Source,
			FirstExercise: c.FirstExercise, Note: c.Note, Usable: c.Usable, Error: c.Error}
	}
	for i := range res.Markets {
		res.Markets[i].Swappers, res.Markets[i].SwappersUnknown = swappers, unknown
	}
	return market.MarketList(res.Markets), res.Block, nil
}
