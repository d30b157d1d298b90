package gateway

import (
	"context"
	"errors"
	"math/big"
	"net/http"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// Every path the gateway answers. Tests, fakes and docs reuse them.
const (
	PathStrikesChain      = "/clamm/strikes-chain"
	PathExerciseHistory   = "/clamm/exercise/history"
	PathExercisePrepare   = "/clamm/exercise/prepare"
	PathPurchaseHistory   = "/clamm/purchase/history"
	PathPurchasePositions = "/clamm/purchase/positions"
	PathOptionMarkets     = "/clamm/option-markets"
	PathPurchaseQuote     = "/clamm/purchase/quote"
	PathPurchasePrepare   = "/clamm/purchase/prepare"
	PathOptionsChain      = "/clamm/options-chain"
	PathDepositPrepare    = "/clamm/deposit/prepare"
	PathWithdrawPrepare   = "/clamm/withdraw/prepare"
	PathDepositHistory    = "/clamm/deposit/history"
	PathWithdrawHistory   = "/clamm/withdraw/history"
	PathDepositPositions  = "/clamm/deposit/positions"
	PathStats             = "/clamm/stats"
	PathChainStats        = "/clamm/stats/chain"
	PathLeaderboard       = "/clamm/stats/leaderboard"
	PathDelegatePrepare   = "/clamm/exercise/delegate/prepare"
	PathSettlements       = "/clamm/settlements/history"
	PathExpiringOptions   = "/clamm/options/expiring"
	PathMarkPrice         = "/clamm/mark-price"
	PathCandles           = "/clamm/candles"
	PathHealthz           = "/healthz"
	PathReadyz            = "/readyz"
	PathMetrics           = "/metrics"
	PathOpenAPI           = "/openapi.json"
	PathDocs              = "/docs"
	PathDocsLive          = "/docs/live" // with streams on: a market drawn live from its streams
)

// The hosted API's statistics and PnL paths (hosted.go).
const (
	PathHostedTVL          = "/clamm/stats/tvl"
	PathHostedPoolTVL      = "/clamm/stats/tvl/{pool}"
	PathHostedOpenInterest = "/clamm/stats/open-interest"
	PathHostedVolume       = "/clamm/stats/volume"
	PathHostedDAU          = "/clamm/stats/dau"
	PathHostedFees         = "/clamm/stats/fees"
	PathHostedTotalVolume  = "/clamm/stats/total-volume"
	PathPnlDelta           = "/clamm/stats/delta"
	PathBoundedAll         = "/clamm/stats/delta-bounded-all"
	PathBoundedUser        = "/clamm/stats/delta-bounded-user"
)

// apiEndpoints is the API: one entry per operation, from which the router,
// the hit path, the route metrics and the contract test are derived.
// Adding an operation is one entry here and one service method. Each entry
// states, beside how long its answers are cached (ttl), how the block they
// are true at is chosen (pin: package block's Strategy, by which upstream
// the answer reads first); an entry that states none fails
// TestEveryEndpointStatesItsPin. Each states too whether its answers are
// streamed (stream: stream.go), which TestEveryEndpointStatesItsStream
// holds it to.
var apiEndpoints = []endpoint{
	api[market.StrikesRequest]{
		path: PathStrikesChain, name: "strikes", operation: "strikesChain", params: strikesParams, optional: []string{"filterDeprecated"},
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: streams,
		parse: parseStrikes,
		key: func(k cacheKey, r market.StrikesRequest) cacheKey {
			k = k.uint(r.ChainID).addr(r.Market).int(r.CallsReach).int(r.PutsReach)
			if r.FilterDeprecated {
				k = k.str("nodeprecated")
			}
			return k
		},
		call: func(ctx context.Context, svc *service.Service, r market.StrikesRequest) (any, uint64, error) {
			res, err := svc.StrikesChain(ctx, r)
			return res.Entries, res.Block, err
		},
	}.endpoint(),
	api[trade.HistoryRequest]{
		path: PathExerciseHistory, name: "history", operation: "exerciseHistory", params: historyParams,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseHistory, key: historyKey,
		call: func(ctx context.Context, svc *service.Service, r trade.HistoryRequest) (any, uint64, error) {
			res, err := svc.ExerciseHistory(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	api[prepareRequest]{
		path: PathExercisePrepare, name: "prepare", operation: "prepareExercise", params: prepareParams,
		ttl: ttlPrepare, pin: block.ChainHead, stream: notStreamed,
		parse: parsePrepare,
		key: func(k cacheKey, r prepareRequest) cacheKey {
			return k.uint(r.ChainID).addr(r.Market).str(r.optionID).str(r.SwapperID).slippage(r.Slippage)
		},
		call: func(ctx context.Context, svc *service.Service, r prepareRequest) (any, uint64, error) {
			r.OptionID, _ = new(big.Int).SetString(r.optionID, 10) // validated digits
			res, err := svc.ExercisePrepare(ctx, r.PrepareRequest)
			return res, 0, err
		},
	}.endpoint(),
	// Positions are cached like a history page: ownership and liquidity
	// change only with transactions; the value moves with the price, and the
	// TTL bounds how old a value can be.
	api[trade.HistoryRequest]{
		path: PathPurchaseHistory, name: "purchases", operation: "purchaseHistory", params: historyParams,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseHistory, key: historyKey,
		call: func(ctx context.Context, svc *service.Service, r trade.HistoryRequest) (any, uint64, error) {
			res, err := svc.PurchaseHistory(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	api[trade.HistoryRequest]{
		path: PathPurchasePositions, name: "positions", operation: "purchasePositions", params: historyParams,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseHistory, key: historyKey,
		call: func(ctx context.Context, svc *service.Service, r trade.HistoryRequest) (any, uint64, error) {
			res, err := svc.PurchasePositions(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	// Option markets are cached for the strikes chain's TTL: they read the
	// same chain facts (which handlers a market can use now), and their sums
	// move with every purchase as strikes' liquidity does.
	api[uint64]{
		path: PathOptionMarkets, name: "markets", operation: "optionMarkets", params: marketsParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: streams,
		parse: func(s *Server, p *params) (uint64, error) { return p.chainID(s.chains, s.opts.ServeHint) },
		key:   func(k cacheKey, chainID uint64) cacheKey { return k.uint(chainID) },
		call: func(ctx context.Context, svc *service.Service, chainID uint64) (any, uint64, error) {
			return svc.MarketsList(ctx, chainID)
		},
	}.endpoint(),
	// A quote moves with every block (price, IVs): cached like a prepared
	// exercise, briefly and never served stale.
	api[purchaseRequest]{
		path: PathPurchaseQuote, name: "quote", operation: "purchaseQuote", params: quoteParams, optional: []string{"user", "markPrice"},
		ttl: ttlPrepare, pin: block.IndexedHead(block.StaleQuotes), stream: notStreamed,
		parse: parsePurchase,
		key:   func(k cacheKey, r purchaseRequest) cacheKey { return r.key(k) },
		call: func(ctx context.Context, svc *service.Service, r purchaseRequest) (any, uint64, error) {
			res, err := svc.PurchaseQuote(ctx, r.request())
			return res, 0, err
		},
	}.endpoint(),
	api[purchasePrepareRequest]{
		path: PathPurchasePrepare, name: "purchase", operation: "preparePurchase", params: purchaseParams,
		ttl: ttlPrepare, pin: block.IndexedHead(block.StaleQuotes), stream: notStreamed,
		parse: parsePurchasePrepare,
		key: func(k cacheKey, r purchasePrepareRequest) cacheKey {
			return r.key(k).slippage(r.slippage)
		},
		call: func(ctx context.Context, svc *service.Service, r purchasePrepareRequest) (any, uint64, error) {
			res, err := svc.PurchasePrepare(ctx, trade.PurchasePrepareRequest{PurchaseRequest: r.request(), Slippage: r.slippage})
			return res, 0, err
		},
	}.endpoint(),
	// The options chain is the strikes chain priced: cached with its TTL.
	api[chainRequest]{
		path: PathOptionsChain, name: "chain", operation: "optionsChain", params: chainParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: streams,
		parse: parseOptionsChain,
		key:   func(k cacheKey, r chainRequest) cacheKey { return r.key(k) },
		call: func(ctx context.Context, svc *service.Service, r chainRequest) (any, uint64, error) {
			res, err := svc.OptionsChain(ctx, r.request())
			return res, res.SubgraphBlock(), err
		},
	}.endpoint(),
	// A deposit or withdrawal moves with every block (price, what options
	// hold, the cooldown): cached like a prepared exercise, briefly and
	// never served stale.
	api[depositRequest]{
		path: PathDepositPrepare, name: "deposit", operation: "prepareDeposit", params: depositParams,
		ttl: ttlPrepare, pin: block.SubgraphFirst, stream: notStreamed,
		optional: []string{"minStrike", "maxStrike", "tickLower", "tickUpper"}, // a range is given one way or the other
		parse:    parseDeposit,
		key:      func(k cacheKey, r depositRequest) cacheKey { return r.key(k) },
		call: func(ctx context.Context, svc *service.Service, r depositRequest) (any, uint64, error) {
			res, err := svc.DepositPrepare(ctx, r.request())
			return res, 0, err
		},
	}.endpoint(),
	api[withdrawRequest]{
		path: PathWithdrawPrepare, name: "withdraw", operation: "prepareWithdraw", params: withdrawParams,
		ttl: ttlPrepare, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseWithdraw,
		key:   func(k cacheKey, r withdrawRequest) cacheKey { return r.key(k) },
		call: func(ctx context.Context, svc *service.Service, r withdrawRequest) (any, uint64, error) {
			res, err := svc.WithdrawPrepare(ctx, r.request())
			return res, 0, err
		},
	}.endpoint(),
	// Statistics: flows over a window and the liquidity now (open interest
	// and TVL move with the price), so cached with the strikes chain's TTL.
	// One route for every figure: they share their reads and one answer is
	// true at one block; the hosted API's five stats routes returned bare
	// USD numbers, which lose the tokens and base units.
	api[market.StatsRequest]{
		path: PathStats, name: "stats", operation: "marketStats", params: statsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: streams,
		parse: parseStats,
		key: func(k cacheKey, r market.StatsRequest) cacheKey {
			return k.uint(r.ChainID).addr(r.Market).uint(uint64(r.From)).uint(uint64(r.To))
		},
		call: func(ctx context.Context, svc *service.Service, r market.StatsRequest) (any, uint64, error) {
			res, err := svc.MarketStats(ctx, r)
			return res, res.Block(), err
		},
	}.endpoint(),
	// Chain-wide statistics are every market's, at one block, summed:
	// pinned and cached as one market's.
	api[market.ChainStatsRequest]{
		path: PathChainStats, name: "chainstats", operation: "chainStats", params: chainStatsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: streams,
		parse: parseChainStats,
		key: func(k cacheKey, r market.ChainStatsRequest) cacheKey {
			return k.uint(r.ChainID).uint(uint64(r.From)).uint(uint64(r.To))
		},
		call: func(ctx context.Context, svc *service.Service, r market.ChainStatsRequest) (any, uint64, error) {
			res, err := svc.ChainStats(ctx, r)
			return res, res.Block(), err
		},
	}.endpoint(),
	// The traders' leaderboard: flows over a window, as the statistics'
	// are, and cached as long; every figure is the subgraph's, so the
	// answer is pinned to the subgraph's block.
	api[market.LeaderboardRequest]{
		path: PathLeaderboard, name: "leaderboard", operation: "leaderboard", params: leaderboardParams, optional: leaderboardOptional,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: streams,
		parse: parseLeaderboard, key: leaderboardKey,
		call: func(ctx context.Context, svc *service.Service, r market.LeaderboardRequest) (any, uint64, error) {
			res, err := svc.Leaderboard(ctx, r)
			return res, res.Block(), err
		},
	}.endpoint(),
	// The liquidity provider's reads move with transactions: cached with the
	// history TTL, as purchase positions are (the positions' value moves
	// with the price and the donation lock; the TTL bounds how old it is).
	api[liquidity.LPRequest]{
		path: PathDepositHistory, name: "lpdeposits", operation: "depositHistory", params: lpParams, optional: lpOptional,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseLP, key: lpKey,
		call: func(ctx context.Context, svc *service.Service, r liquidity.LPRequest) (any, uint64, error) {
			res, err := svc.DepositHistory(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	api[liquidity.LPRequest]{
		path: PathWithdrawHistory, name: "lpwithdrawals", operation: "withdrawHistory", params: lpParams, optional: lpOptional,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseLP, key: lpKey,
		call: func(ctx context.Context, svc *service.Service, r liquidity.LPRequest) (any, uint64, error) {
			res, err := svc.WithdrawHistory(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	api[liquidity.LPRequest]{
		path: PathDepositPositions, name: "lppositions", operation: "depositPositions", params: lpParams, optional: lpOptional,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseLP, key: lpKey,
		call: func(ctx context.Context, svc *service.Service, r liquidity.LPRequest) (any, uint64, error) {
			res, err := svc.DepositPositions(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	// The delegate transaction reads and simulates at the chain's head, as
	// a prepared exercise does, and is cached as briefly.
	api[trade.DelegateRequest]{
		path: PathDelegatePrepare, name: "delegate", operation: "prepareDelegate", params: delegateParams, optional: delegateOptional,
		ttl: ttlPrepare, pin: block.ChainHead, stream: notStreamed,
		parse: parseDelegate, key: delegateKey,
		call: func(ctx context.Context, svc *service.Service, r trade.DelegateRequest) (any, uint64, error) {
			res, err := svc.DelegatePrepare(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
	api[trade.SettlementRequest]{
		path: PathSettlements, name: "settlements", operation: "settlementHistory", params: settlementParams, optional: settleOptional,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: streams,
		parse: parseSettlements, key: settlementKey,
		call: func(ctx context.Context, svc *service.Service, r trade.SettlementRequest) (any, uint64, error) {
			res, err := svc.SettlementHistory(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	// Expiring options are a keeper's to-do list, whose values move with
	// every block and whose window runs out by the second: cached like a
	// quote, briefly and never served stale, and pinned as one (the
	// block's time opens the window before the subgraph is asked).
	api[trade.ExpiringRequest]{
		path: PathExpiringOptions, name: "expiring", operation: "expiringOptions", params: expiringParams,
		ttl: ttlPrepare, pin: block.IndexedHead(block.StaleQuotes), stream: streams,
		parse: parseExpiring, key: expiringKey,
		call: func(ctx context.Context, svc *service.Service, r trade.ExpiringRequest) (any, uint64, error) {
			res, err := svc.ExpiringOptions(ctx, r)
			return res.Records, res.Block, err
		},
	}.endpoint(),
	// The mark price reads the chain only (the market's prime pool's slot0)
	// at its head, and moves with every swap: cached like a quote, briefly
	// and never served stale.
	api[market.MarketRequest]{
		path: PathMarkPrice, name: "markprice", operation: "markPrice", params: markPriceParams,
		ttl: ttlPrepare, pin: block.ChainHead, stream: streams,
		parse: parseMarket,
		key:   func(k cacheKey, r market.MarketRequest) cacheKey { return k.uint(r.ChainID).addr(r.Market) },
		call: func(ctx context.Context, svc *service.Service, r market.MarketRequest) (any, uint64, error) {
			res, err := svc.MarkPrice(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
	// Candles are read from the prime pool's Swap logs at the chain's head
	// (no index holds the swaps): past intervals never change, the last
	// one moves with each swap, so cached with the strikes chain's TTL as
	// statistics are; a window closed for good the service keeps.
	api[market.CandlesRequest]{
		path: PathCandles, name: "candles", operation: "candles", params: candlesParams,
		ttl: ttlStrikes, pin: block.ChainHead, stream: streams,
		parse: parseCandles,
		key: func(k cacheKey, r market.CandlesRequest) cacheKey {
			return k.uint(r.ChainID).addr(r.Market).uint(uint64(r.Seconds)).uint(uint64(r.From)).uint(uint64(r.To))
		},
		call: func(ctx context.Context, svc *service.Service, r market.CandlesRequest) (any, uint64, error) {
			res, err := svc.Candles(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
	// The hosted API's paths (hosted.go): the markets of several chains,
	// and prices by ticker.
	hostedMarketsEndpoint(),
	hostedTickerEndpoints[0], hostedTickerEndpoints[1], hostedTickerEndpoints[2],
	// The order book (orders.go): never cached (each order is judged at
	// the chain's head on every read, and a POST changes the book at
	// once); the writes take POST. Without a book, 404.
	orderEndpoints[0], orderEndpoints[1], orderEndpoints[2], orderEndpoints[3],
	orderEndpoints[4], orderEndpoints[5], orderEndpoints[6],
	// The hosted API's bare statistics (hosted.go): each a figure of
	// /clamm/stats or /clamm/stats/chain, read as those are read, pinned
	// and cached as they are.
	api[market.MarketRequest]{
		path: PathHostedTVL, name: "hostedtvl", operation: "hostedTVL", params: hostedMarketParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseMarket,
		key:   func(k cacheKey, r market.MarketRequest) cacheKey { return k.uint(r.ChainID).addr(r.Market) },
		call: func(ctx context.Context, svc *service.Service, r market.MarketRequest) (any, uint64, error) {
			return svc.HostedTVL(ctx, r)
		},
	}.endpoint(),
	api[market.PoolTVLRequest]{
		path: PathHostedPoolTVL, name: "hostedpooltvl", operation: "hostedPoolTVL", params: hostedPoolParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parsePoolTVL,
		key:   func(k cacheKey, r market.PoolTVLRequest) cacheKey { return k.uint(r.ChainID).addr(r.Pool) },
		call: func(ctx context.Context, svc *service.Service, r market.PoolTVLRequest) (any, uint64, error) {
			return svc.HostedPoolTVL(ctx, r)
		},
	}.endpoint(),
	api[market.MarketRequest]{
		path: PathHostedOpenInterest, name: "hostedoi", operation: "hostedOpenInterest", params: hostedMarketParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseMarket,
		key:   func(k cacheKey, r market.MarketRequest) cacheKey { return k.uint(r.ChainID).addr(r.Market) },
		call: func(ctx context.Context, svc *service.Service, r market.MarketRequest) (any, uint64, error) {
			return svc.HostedOpenInterest(ctx, r)
		},
	}.endpoint(),
	api[market.StatsRequest]{
		path: PathHostedVolume, name: "hostedvolume", operation: "hostedVolume", params: statsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseStats, key: statsKey,
		call: func(ctx context.Context, svc *service.Service, r market.StatsRequest) (any, uint64, error) {
			return svc.HostedVolume(ctx, r)
		},
	}.endpoint(),
	api[market.StatsRequest]{
		path: PathHostedDAU, name: "hosteddau", operation: "hostedDAU", params: statsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseStats, key: statsKey,
		call: func(ctx context.Context, svc *service.Service, r market.StatsRequest) (any, uint64, error) {
			return svc.HostedDAU(ctx, r)
		},
	}.endpoint(),
	api[market.StatsRequest]{
		path: PathHostedFees, name: "hostedfees", operation: "hostedFees", params: statsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseStats, key: statsKey,
		call: func(ctx context.Context, svc *service.Service, r market.StatsRequest) (any, uint64, error) {
			return svc.HostedFees(ctx, r)
		},
	}.endpoint(),
	api[uint64]{
		path: PathHostedTotalVolume, name: "hostedtotalvolume", operation: "hostedTotalVolume", params: marketsParams,
		ttl: ttlStrikes, pin: block.IndexedHead(block.StaleStrikes), stream: notStreamed,
		parse: parseChainOnly,
		key:   func(k cacheKey, chainID uint64) cacheKey { return k.uint(chainID) },
		call: func(ctx context.Context, svc *service.Service, chainID uint64) (any, uint64, error) {
			return svc.HostedTotalVolume(ctx, chainID)
		},
	}.endpoint(),
	// The portfolio reads each listed chain under its own pin, as a
	// position's page is pinned (the subgraph's block), and is cached as
	// one: ownership moves with transactions, value with the price.
	api[portfolioRequest]{
		path: PathPortfolio, name: "portfolio", operation: "portfolio", params: portfolioParams,
		ttl: ttlHistory, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parsePortfolio,
		key:   func(k cacheKey, r portfolioRequest) cacheKey { return r.key(k).addr(r.user) },
		call:  portfolio,
	}.endpoint(),
	// The hosted PnL shapes: the leaderboard's reads and definition, so
	// pinned to the subgraph's block and cached as it is. stats/delta
	// reads each listed chain under its own pin (hosted.go perChain).
	api[deltaRequest]{
		path: PathPnlDelta, name: "pnldelta", operation: "pnlDelta", params: deltaParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseDelta,
		key: func(k cacheKey, r deltaRequest) cacheKey {
			return r.key(k).addr(r.user).uint(uint64(r.from)).uint(uint64(r.to))
		},
		call: deltas,
	}.endpoint(),
	api[market.BoundedRequest]{
		path: PathBoundedAll, name: "boundedall", operation: "deltaBoundedAll", params: boundedAllParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseBounded(false), key: boundedKey,
		call: func(ctx context.Context, svc *service.Service, r market.BoundedRequest) (any, uint64, error) {
			return svc.Bounded(ctx, r)
		},
	}.endpoint(),
	api[market.BoundedRequest]{
		path: PathBoundedUser, name: "boundeduser", operation: "deltaBoundedUser", params: boundedUserParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseBounded(true), key: boundedKey,
		call: func(ctx context.Context, svc *service.Service, r market.BoundedRequest) (any, uint64, error) {
			rows, b, err := svc.Bounded(ctx, r)
			if err != nil {
				return nil, 0, err
			}
			return rows[0], b, nil
		},
	}.endpoint(),
	hostedOlderEndpoints[0], hostedOlderEndpoints[1],
}

// Operation is what the contract test checks of each endpoint against the
// OpenAPI document: its path, method (GET, or POST for a write),
// operationId and query parameters, and which of them may be left out
// (every other one is required); Uncached says its answers are never
// cached (no ETag, no 304).
type Operation struct {
	Path, ID string
	Method   string
	Params   []string
	Optional []string
	Uncached bool
}

// Operations lists the server's endpoints, in table order.
func (s *Server) Operations() []Operation {
	out := make([]Operation, len(s.endpoints))
	for i, e := range s.endpoints {
		method := http.MethodGet
		if e.methods != nil {
			method = e.methods[0]
		}
		out[i] = Operation{Path: e.path, ID: e.operation, Method: method, Params: append([]string(nil), e.params...),
			Optional: append([]string(nil), e.optional...), Uncached: e.uncached}
	}
	return out
}

func statsKey(k cacheKey, r market.StatsRequest) cacheKey {
	return k.uint(r.ChainID).addr(r.Market).uint(uint64(r.From)).uint(uint64(r.To))
}

func historyKey(k cacheKey, r trade.HistoryRequest) cacheKey {
	return k.uint(r.ChainID).addr(r.Market).addr(r.User).int(r.First).int(r.Skip)
}

// ttlClass names which configured TTL caches an operation's answers.
type ttlClass int

const (
	ttlStrikes ttlClass = iota // chain state that moves every block: StrikesTTL, served stale within grace
	ttlHistory                 // pages that move with transactions: HistoryTTL, served stale within grace
	ttlPrepare                 // quotes: PrepareTTL, never served stale
)

// policy is the cache policy of a TTL class under s's configuration.
func (s *Server) policy(c ttlClass) cache.Policy {
	switch c {
	case ttlStrikes:
		return cache.Policy{TTL: s.opts.StrikesTTL, Grace: s.opts.StaleGrace}
	case ttlHistory:
		return cache.Policy{TTL: s.opts.HistoryTTL, Grace: s.opts.StaleGrace}
	default:
		return cache.Policy{TTL: s.opts.PrepareTTL}
	}
}

// endpoint is one API operation as the server needs it: its path, the
// OpenAPI operation it implements, the parameters it takes and its
// handler. api builds one from a typed description.
type endpoint struct {
	path      string
	operation string
	params    []string
	optional  []string
	pin       block.Strategy
	stream    streamed
	handler   func(s *Server) http.HandlerFunc
	// methods the route takes (nil: GET and HEAD); uncached: its answers
	// are never cached (the order book's).
	methods  []string
	uncached bool
	// open parses a stream's request (stream: streams; nil otherwise).
	open func(s *Server, r *http.Request) (streamSpec, error)
}

// api describes an operation over a request type Req: how the query
// parses into a Req (after readOnly has refused parameters not in params),
// the cache key a Req names (after the operation's own name), and the
// service call that answers it with a body and the block it is true at.
type api[Req any] struct {
	path, name, operation string // name: the cache key's first field
	params                []string
	optional              []string // of params, those that may be left out (the parser decides)
	ttl                   ttlClass
	pin                   block.Strategy // how the answer's block is chosen
	stream                streamed       // whether its answers are streamed
	parse                 func(s *Server, p *params) (Req, error)
	key                   func(k cacheKey, r Req) cacheKey
	call                  func(ctx context.Context, svc *service.Service, r Req) (any, uint64, error)
}

// scratch is a request's parsing state: the parameters and the key's
// buffer. It is pooled rather than on the stack because the parse and key
// functions are called through the table, which escape analysis cannot
// see through; a pool keeps a hit at its one allocation, the key string.
type scratch struct {
	p  params
	kb [keyBuf]byte
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// endpoint builds the operation's handler: parse, key, hit, else fill
// through the cache. The fill closure is built only on a miss. Every
// operation takes the optional block parameter, handled alike whatever its
// pin strategy, and pins its answer (pinned.go): the parameter is a
// property of the table, the strategy a column of each entry.
func (a api[Req]) endpoint() endpoint {
	a.params = append(append([]string(nil), a.params...), "block")
	a.optional = append(append([]string(nil), a.optional...), "block")
	e := endpoint{path: a.path, operation: a.operation, params: a.params, optional: a.optional, pin: a.pin, stream: a.stream}
	if a.stream == streams {
		e.open = a.openStream
	}
	e.handler = func(s *Server) http.HandlerFunc {
		policy := s.policy(a.ttl)
		streamed := s.streams != nil && a.stream == streams
		return func(w http.ResponseWriter, r *http.Request) {
			if streamed && wantsEventStream(r) {
				s.streams.serveSSE(w, r, a.openStream)
				return
			}
			pol := policy
			sc := scratchPool.Get().(*scratch)
			sc.p = params{}
			req, at, err := a.parseRequest(s, r, &sc.p)
			var key string
			if err == nil {
				k := a.key(newKey(sc.kb[:0], a.name), req)
				if at.Want != 0 {
					// Asked at a block: keyed by its number and its hash
					// now, so an answer cached before a reorg replaced
					// the block is never served after it.
					at.At, err = s.blockAt(r, at)
					k = k.uint(at.Want).str(at.At.Hash)
				}
				if at.Want != 0 && streamed {
					// What a block (and its hash) keys never changes:
					// kept as long as memory allows, the key a stream's
					// event at that block shares.
					pol = cache.Policy{TTL: blockKeyedTTL}
				}
				key = k.String()
			}
			scratchPool.Put(sc)
			if err != nil {
				if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
					s.clientClosed(w, err) // hung up while its block was read
					return
				}
				s.writeError(w, err)
				return
			}
			if s.serveHit(w, r, key, pol) {
				return
			}
			s.serveCached(w, r, key, pol, func(ctx context.Context) (entry, error) {
				return s.fillPinned(ctx, at, a.pin, func(ctx context.Context) (any, uint64, error) {
					return a.call(ctx, s.opts.Service, req)
				})
			})
		}
	}
	return e
}

// openStream parses a stream's request as the endpoint's GET (without
// its block) and gives its topic (the GET's key) and the fill of its
// answer at a block.
func (a api[Req]) openStream(s *Server, r *http.Request) (streamSpec, error) {
	var p params
	req, at, err := a.parseRequest(s, r, &p)
	if err != nil {
		return streamSpec{}, err
	}
	var kb [keyBuf]byte
	return streamSpec{topic: a.key(newKey(kb[:0], a.name), req).String(), route: a.path, chain: at.Chain,
		fill: func(ctx context.Context, at block.Ask) (entry, error) {
			return s.fillPinned(ctx, at, a.pin, func(ctx context.Context) (any, uint64, error) {
				return a.call(ctx, s.opts.Service, req)
			})
		}}, nil
}

func (a api[Req]) parseRequest(s *Server, r *http.Request, p *params) (Req, block.Ask, error) {
	var zero Req
	if err := p.readOnly(r, a.params); err != nil {
		return zero, block.Ask{}, err
	}
	p.path = r.URL.Path
	req, err := a.parse(s, p)
	if err != nil {
		return zero, block.Ask{}, err
	}
	want, err := p.blockNumber()
	return req, block.Ask{Chain: p.chain, Want: want}, err
}
