// Package service holds the gateway's use cases, one method per endpoint.
// It sees neither HTTP nor GraphQL: it asks small interfaces for market
// state and subgraph entities, runs the pure maths of package clamm, and
// returns response values ready to encode. Its clients are built and handed
// in by the composition root (internal/app); it dials nothing itself.
package service

import (
	"context"
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// MarketReader reads market state from the chain (package chain).
type MarketReader interface {
	Market(ctx context.Context, market common.Address) (*chain.MarketInfo, error)
	MarketSnapshot(ctx context.Context, market common.Address) (*chain.MarketInfo, chain.PoolState, error)
	// PoolStates reads pools' slot0 in one round trip (positions judge a
	// leg at its own pool's price).
	PoolStates(ctx context.Context, pools []common.Address) (map[common.Address]chain.PoolState, error)
}

// StrikesReader reads what the strikes chain needs from the chain (package
// chain): pool prices and which handlers the market can use now.
type StrikesReader interface {
	StrikesView(ctx context.Context, market common.Address, pools, handlers []common.Address) (*chain.StrikesView, error)
	StrikesViews(ctx context.Context, markets, handlers []common.Address) ([]*chain.StrikesView, []error, error)
	// CompleteView adds the pools and handlers a later read named, and
	// approvals not read yet (pools.go).
	CompleteView(ctx context.Context, v *chain.StrikesView, pools, handlers []common.Address) error
}

// HookProber asks hooks whether they would admit a purchase now (package
// chain).
type HookProber interface {
	ProbeHooks(ctx context.Context, qs []chain.HookQuestion) ([]chain.HookAnswer, error)
}

// PricingReader reads what a market would charge and simulates the
// purchase (package chain).
type PricingReader interface {
	ReadPricing(ctx context.Context, market, user common.Address, asks []contracts.PricingAsk) (contracts.PricingHead, []contracts.PricingAnswer, error)
	SimulateAtHead(ctx context.Context, from, to common.Address, data []byte) (block.Ref, error)
}

// Chain is what the use cases and readiness ask of one chain's node: one
// small interface per need, all of them answered by package chain's
// Reader. A chain's upstreams hold one Chain, so a capability is there
// when the app is built or the app does not compile.
type Chain interface {
	MarketReader
	PositionReader
	StrikesReader
	HookProber
	PricingReader
	LPReader
	DelegateReader
	Prober
	ChainChecker
	// Holdings reads liquidity providers' positions (its own cache of the
	// pools' tokens).
	Holdings() *chain.HoldingsReader
}

// Subgraph is the part of the subgraph client the service uses.
type Subgraph interface {
	Strikes(ctx context.Context, q subgraph.StrikesQuery) ([]subgraph.Strike, []common.Address, subgraph.Meta, error)
	ExerciseHistory(ctx context.Context, q subgraph.HistoryQuery) ([]subgraph.Exercise, subgraph.Meta, error)
	PurchaseHistory(ctx context.Context, q subgraph.HistoryQuery) ([]subgraph.Purchase, subgraph.Meta, error)
	// PurchasePositions reads a page of a user's options and, in the same
	// document, the user's enabled delegates (subgraph.HeldPage).
	PurchasePositions(ctx context.Context, q subgraph.HistoryQuery) (subgraph.HeldPage, subgraph.Meta, error)
	OptionMarkets(ctx context.Context) ([]subgraph.Market, subgraph.Meta, error)
	StatsSubgraph
	BoardSubgraph
	HoldingsSubgraph
	ExpirySubgraph
	MetaReader
	// Candles reads a pool's candle records (the candles route).
	Candles(ctx context.Context, q subgraph.CandleQuery) ([]subgraph.Candle, *subgraph.Candle, subgraph.Meta, error)
}

// ExpirySubgraph is what the expiry reads ask the subgraph: settlements,
// options expiring in a window, owners' enabled delegates.
type ExpirySubgraph interface {
	SettlementHistory(ctx context.Context, q subgraph.SettlementQuery) ([]subgraph.Settlement, subgraph.Meta, error)
	ExpiringOptions(ctx context.Context, q subgraph.ExpiringQuery) ([]subgraph.ExpiringOption, subgraph.Meta, error)
	ExerciseDelegates(ctx context.Context, q subgraph.DelegatesQuery) ([]subgraph.ExerciseDelegate, subgraph.Meta, error)
}

// Upstreams are one chain's configuration and clients. Chain and Subgraph
// are nil when the chain has no upstream configured.
type Upstreams struct {
	Config   *config.Chain
	Chain    Chain
	Subgraph Subgraph
	// Quoters maps a swapperId to its quoter.
	Quoters map[string]swap.Quoter
	// Indexing, set on a chain the gateway indexes itself, says where its
	// indexer stands: readiness shows it and stays unready until it has
	// reached the head.
	Indexing func() graphnode.Indexing
	// Mode is how the chain is served (config.ModeDemo, ...): readiness
	// shows it, so an operator sees which data a chain answers from.
	Mode string
}

// Service answers the gateway's operations, one method each. Which block
// an answer is read at is not its concern: the gateway runs each call
// under the pin its endpoint states (package block), and the readers it
// is given read at that block.
type Service struct {
	chains map[uint64]*Upstreams
}

// New returns a service over the given chains.
func New(chains map[uint64]*Upstreams) *Service {
	return &Service{chains: chains}
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

// upstreams returns the chain's clients or the error a client should see.
// Every endpoint reads the chain; needSubgraph says whether it also queries
// the subgraph.
func (s *Service) upstreams(chainID uint64, needSubgraph bool) (*Upstreams, error) {
	u, ok := s.chains[chainID]
	if !ok || u.Chain == nil {
		return nil, problem.InvalidParam("chainId", "chain %d is not served by this gateway", chainID)
	}
	if needSubgraph && u.Subgraph == nil {
		return nil, problem.New(problem.UpstreamNotConfigured, "chain %d has no live upstreams configured", chainID)
	}
	return u, nil
}

// Token is the token object of the responses.
type Token struct {
	Address  string `json:"address"`
	Decimals string `json:"decimals"`
	Symbol   string `json:"symbol"`
}

func tokenJSON(t chain.Token) Token {
	return Token{Address: t.Address.Hex(), Decimals: fmt.Sprint(t.Decimals), Symbol: t.Symbol}
}
