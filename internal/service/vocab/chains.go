package vocab

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Prober is what readiness asks of a chain's RPC node: its head block.
type Prober interface {
	BlockNumber(ctx context.Context) (uint64, error)
}

// ChainChecker confirms the node serves the configured chain.
type ChainChecker interface {
	CheckChainID(ctx context.Context, want uint64) error
}

// MetaReader is the subgraph's _meta query.
type MetaReader interface {
	Meta(ctx context.Context) (subgraph.Meta, error)
}

// StatsSubgraph is the part of the subgraph client only the statistics
// read (Subgraph embeds it).
type StatsSubgraph interface {
	StatsDays(ctx context.Context, q subgraph.StatsQuery) ([]subgraph.StatsDay, subgraph.Meta, error)
	StatsDayBuyers(ctx context.Context, q subgraph.StatsQuery) ([]subgraph.StatsBuyer, subgraph.Meta, error)
	StatsPurchases(ctx context.Context, q subgraph.StatsQuery) ([]subgraph.StatsPurchase, subgraph.Meta, error)
	StatsExercises(ctx context.Context, q subgraph.StatsQuery) ([]subgraph.StatsExercise, subgraph.Meta, error)
	StatsRanges(ctx context.Context, market common.Address, pools []common.Address) ([]subgraph.StatsRange, []common.Address, subgraph.Meta, error)
	OpenOptions(ctx context.Context, market common.Address) ([]subgraph.OpenOption, subgraph.Meta, error)
}

// BoardSubgraph is what the leaderboard asks the subgraph: the window's
// purchases and exercises of the markets counted.
type BoardSubgraph interface {
	BoardPurchases(ctx context.Context, q subgraph.BoardQuery) ([]subgraph.BoardPurchase, subgraph.Meta, error)
	BoardExercises(ctx context.Context, q subgraph.BoardQuery) ([]subgraph.BoardExercise, subgraph.Meta, error)
}

// MarketReader reads market state from the chain (package chain).
type MarketReader interface {
	Market(ctx context.Context, market common.Address) (*chain.MarketInfo, error)
	MarketSnapshot(ctx context.Context, market common.Address) (*chain.MarketInfo, chain.PoolState, error)
	// PoolStates reads pools' slot0 in one round trip (positions judge a
	// leg at its own pool's price).
	PoolStates(ctx context.Context, pools []common.Address) (map[common.Address]chain.PoolState, error)
	// MarketsPeriphery reads markets' fee strategy, option pricing and
	// token URI fetcher in one round trip (the hosted markets list).
	MarketsPeriphery(ctx context.Context, markets []common.Address) ([]chain.Periphery, error)
}

// StrikesReader reads what the strikes chain needs from the chain (package
// chain): pool prices and which handlers the market can use now.
type StrikesReader interface {
	StrikesView(ctx context.Context, market common.Address, pools, handlers []common.Address) (*chain.StrikesView, error)
	StrikesViews(ctx context.Context, markets, handlers []common.Address) ([]*chain.StrikesView, []error, error)
	// CompleteView adds the pools and handlers a later read named, and
	// approvals not read yet (markets_pools.go).
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

// SwapReader reads a pool's swaps over a window of time from the node's
// logs (package chain): the candles.
type SwapReader interface {
	PoolSwaps(ctx context.Context, pool common.Address, from, to int64) (chain.SwapWindow, error)
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
	SwapReader
	Prober
	ChainChecker
	OrderReader
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
	// Learned builds the quoters of the swappers the chain's own
	// exercises used (read from the subgraph); nil: none are offered.
	Learned *swap.Learned
	// Indexing, set on a chain the gateway indexes itself, says where its
	// indexer stands: readiness shows it and stays unready until it has
	// reached the head.
	Indexing func() Indexing
	// Mode is how the chain is served (config.ModeDemo, ...): readiness
	// shows it, so an operator sees which data a chain answers from.
	Mode string
	// SellOrders, set on a chain with an order book, gives the book's
	// take-profits of positions (their sellOrder); nil: none is given.
	SellOrders SellOrderReader
}

// SellOrderReader finds, in the order book (package orders), the
// take-profit each of an owner's options on a market is offered with.
type SellOrderReader interface {
	// SellOrders maps each token id (decimal) that has one to its order.
	SellOrders(ctx context.Context, chainID uint64, market, owner common.Address, tokenIDs []string) (map[string]*SellOrder, error)
}

// SellOrder is a take-profit as the hosted API gave it on a position
// (stryke-fe reads payment, createdAt, deadline, flags, validator, data,
// v, r and s to rebuild the order and cancel it): the signed order, with
// payment its minProfit in base units of the profit token.
type SellOrder struct {
	Hash      string `json:"hash"`
	CreatedAt string `json:"createdAt"`
	Deadline  string `json:"deadline"`
	Maker     string `json:"maker"`
	Validator string `json:"validator"`
	Flags     uint32 `json:"flags"`
	Data      string `json:"data"`
	Payment   string `json:"payment"`
	Signature string `json:"signature"`
	V         uint8  `json:"v"`
	R         string `json:"r"`
	S         string `json:"s"`
}

// DelegateReader reads who may exercise for whom, simulates the delegate
// transaction and reads the answer's block time (package chain).
type DelegateReader interface {
	DelegateView(ctx context.Context, market, autoExerciser common.Address, qs []chain.Delegation) (*chain.AutoExerciser, []bool, error)
	SimulateDelegate(ctx context.Context, user, market, delegate common.Address, status bool) ([]byte, error)
	BlockTime(ctx context.Context) (int64, error)
}

// LPReader reads what a liquidity provider's prepared transactions need
// and runs them from the provider (package chain).
type LPReader interface {
	// LPState reads the pool, handler and user at the answer's block
	// (and, asked, the chain's head).
	LPState(ctx context.Context, q chain.LPQuery) (*chain.LPState, error)
	// ReadHead reads the chain's head, where prepared transactions are
	// simulated.
	ReadHead(ctx context.Context) (chain.Head, error)
	// TokensToPull is the handler's tokensToPullForMint of each payload
	// at the answer's block.
	TokensToPull(ctx context.Context, handler common.Address, payloads [][]byte) ([][2]*big.Int, error)
	// SimulateLP runs transactions from the user at the head, as its next
	// block.
	SimulateLP(ctx context.Context, head chain.Head, sim chain.LPSimulation) (*chain.LPSimulated, error)
}

// HoldingsSubgraph is the part of the subgraph client the LP reads use.
type HoldingsSubgraph interface {
	LPDepositHistory(ctx context.Context, q subgraph.LPQuery) ([]subgraph.LPRecord, subgraph.Meta, error)
	LPWithdrawHistory(ctx context.Context, q subgraph.LPQuery) ([]subgraph.LPRecord, subgraph.Meta, error)
	LPPositions(ctx context.Context, q subgraph.LPQuery) ([]subgraph.LPHolding, subgraph.Meta, error)
}

// PositionReader reads an option and simulates its exercise (package chain).
type PositionReader interface {
	Position(ctx context.Context, market common.Address, optionID *big.Int) (*chain.Position, error)
	// Positions reads a page of options in one round trip (positions).
	Positions(ctx context.Context, market common.Address, ids []*big.Int) ([]chain.PositionResult, error)
	SimulateSequence(ctx context.Context, owner, market common.Address, p clamm.ExerciseParams) ([]chain.LegOutcome, error)
	SimulateExercise(ctx context.Context, from, market common.Address, data []byte) (*big.Int, error)
}

// OrderReader reads what decides a signed limit order's fate: the
// contract's used mark, the option's owner and expiry, the maker's
// delegation or allowance (one aggregate3), and the contract's fill and
// cancel events (package chain).
type OrderReader interface {
	OrderStates(ctx context.Context, qs []chain.OrderQuery) (int64, []chain.OrderState, error)
	OrderEvents(ctx context.Context, contract common.Address, from, to uint64, enough func([]chain.OrderEvent) bool) ([]chain.OrderEvent, uint64, error)
	// OrderLogReach is the lowest block any OrderEvents read down from to
	// can reach, however the node answers it.
	OrderLogReach(to uint64) uint64
	// SimulateCall runs a call from an account at the answer's block and
	// returns its output (a fill's commission); a revert is a *chain.RevertError.
	SimulateCall(ctx context.Context, from, to common.Address, data []byte) ([]byte, error)
}

// Chains are the served chains' upstreams by chain id: every side looks
// a request's chain up here, so a chain that is not served is refused the
// same way on every route.
type Chains map[uint64]*Upstreams

// Of returns the chain's clients or the error a client should see.
// Every endpoint reads the chain; needSubgraph says whether it also queries
// the subgraph.
func (cs Chains) Of(chainID uint64, needSubgraph bool) (*Upstreams, error) {
	u, ok := cs[chainID]
	if !ok || u.Chain == nil {
		return nil, problem.InvalidParam("chainId", "chain %d is not served by this gateway", chainID)
	}
	if needSubgraph && u.Subgraph == nil {
		return nil, problem.New(problem.UpstreamNotConfigured, "chain %d has no live upstreams configured", chainID)
	}
	return u, nil
}
