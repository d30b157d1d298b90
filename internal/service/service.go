// Package service holds the gateway's use cases, one method per endpoint.
// They see neither HTTP nor GraphQL: they ask small interfaces for market
// state and subgraph entities, run the pure maths of package clamm, and
// return response values ready to encode. Their clients are built and
// handed in by the composition root (internal/app); they dial nothing.
//
// The use cases live in one package per side, named by the routes they
// answer: market (market data and statistics), trade (buying and
// exercising) and liquidity (providing liquidity). The sides share only
// package vocab (the upstreams, the response vocabulary, the typed
// strikes); none imports another, so Go's import rules keep them apart.
// This package composes them into the one Service the gateway calls, and
// answers what concerns every chain at once: which chains are served,
// readiness and the start-up chain-id check. docs/development.md says why.
package service

import (
	"sort"

	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// Service answers the gateway's operations, one method each: its sides'
// methods, promoted. Which block an answer is read at is not its concern:
// the gateway runs each call under the pin its endpoint states (package
// block), and the readers it is given read at that block.
type Service struct {
	*market.Market
	*trade.Trade
	*liquidity.Liquidity
	chains vocab.Chains
	checks contractChecks // CheckContracts' findings, for readiness
	feeds  headFeeds      // ReadHeads: the chains' head feeds, for readiness
}

// New returns a service over the given chains. The trade side reads the
// market side's typed strikes (the quote fills from them) through
// vocab.StrikeReader, wired here, and the start-up checks' verdicts on
// the configured swappers (CheckContracts).
func New(chains map[uint64]*vocab.Upstreams) *Service {
	m := market.New(chains)
	s := &Service{Market: m, Liquidity: liquidity.New(chains), chains: chains}
	// the start-up check's failing swappers are left out of auto
	s.Trade = trade.New(chains, m, &s.checks)
	return s
}

// ChainIDs are the chains the service serves (live, recorded or given
// transports), in ascending order: the one list the gateway checks chainId
// against. A chain that is configured without upstreams is not among them:
// every request about it would fail, so it is a 400 like any other chain
// the gateway cannot answer for, not a 503 that reads like an outage.
func (s *Service) ChainIDs() []uint64 { return s.chainIDs(true) }

// UnservedChainIDs are the chains configured without upstreams, in
// ascending order, so a refusal can say how to serve them.
func (s *Service) UnservedChainIDs() []uint64 { return s.chainIDs(false) }

func (s *Service) chainIDs(served bool) []uint64 {
	ids := make([]uint64, 0, len(s.chains))
	for id, u := range s.chains {
		if (u.Chain != nil) == served {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Swappers are the swapperIds configured on a chain, sorted: the one list
// the gateway checks swapperId against.
func (s *Service) Swappers(chainID uint64) []string {
	u := s.chains[chainID]
	if u == nil || u.Config == nil {
		return nil
	}
	ids := make([]string, 0, len(u.Config.Swappers))
	for id := range u.Config.Swappers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
