package gateway

import (
	"context"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// The hosted API's older paths (the Dopex dapp before 2024): two still
// answered in their shapes (the pools with their TTL grid, the exercise
// delegates), the others redirected to their successor or gone.
const (
	PathHostedPools      = "/clamm/pools"
	PathHostedDelegators = "/clamm/auto-exerciser/delegators"
)

var (
	hostedPoolsParams      = []string{"chainId"}
	hostedDelegatorsParams = []string{"account", "optionMarket", "chainId"}
)

// parseDelegators reads account and optionMarket, and chainId, which the
// hosted route did not take (its one client served Arbitrum only): absent,
// the chain last-price answers for.
func parseDelegators(s *Server, p *params) (trade.DelegatorsRequest, error) {
	var req trade.DelegatorsRequest
	var err error
	if p.given("chainId") {
		req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint)
	} else if req.ChainID, err = s.lastPriceChain(); err == nil {
		p.chain = req.ChainID
	}
	if err != nil {
		return req, err
	}
	if req.User, err = p.address("account"); err != nil {
		return req, err
	}
	req.Market, err = p.address("optionMarket")
	return req, err
}

var hostedOlderEndpoints = []endpoint{
	// The pools read the markets list first (pinned to the subgraph's
	// block) and move with the pricing's IVs: cached as the markets are.
	api[uint64]{
		path: PathHostedPools, name: "hostedpools", operation: "hostedPools", params: hostedPoolsParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: notStreamed,
		parse: func(s *Server, p *params) (uint64, error) { return p.chainID(s.chains, s.opts.ServeHint) },
		key:   func(k cacheKey, chainID uint64) cacheKey { return k.uint(chainID) },
		call: func(ctx context.Context, svc *service.Service, chainID uint64) (any, uint64, error) {
			return svc.HostedPools(ctx, chainID)
		},
	}.endpoint(),
	// The delegates' transactions are the delegate prepare's: read and
	// simulated at the chain's head, cached as briefly.
	api[trade.DelegatorsRequest]{
		path: PathHostedDelegators, name: "hosteddelegators", operation: "hostedDelegators", params: hostedDelegatorsParams, optional: []string{"chainId"},
		ttl: ttlPrepare, pin: block.ChainHead, stream: notStreamed,
		parse: parseDelegators,
		key: func(k cacheKey, r trade.DelegatorsRequest) cacheKey {
			return k.uint(r.ChainID).addr(r.Market).addr(r.User)
		},
		call: func(ctx context.Context, svc *service.Service, r trade.DelegatorsRequest) (any, uint64, error) {
			res, err := svc.HostedDelegators(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
}

// supersession is an older hosted path and what replaced it. A path whose
// successor means the same (same parameters, same records) is redirected
// there with 308, query kept (a GET stays a GET); any other is 410 Gone
// with a JSON problem naming the successor: a redirect to a route that
// would refuse or misread the request helps nobody.
type supersession struct {
	path, successor string
	same            bool
	methods         []string
}

var getHead = []string{http.MethodGet, http.MethodHead}

// supersededPaths are the hosted API's older routes (elvarg before
// a440605ba, 2024-02-27, and its limit-exercise branch).
var supersededPaths = []supersession{
	{PathSupersededPurchasePositions, PathPurchasePositions, true, getHead},
	{PathSupersededDepositPositions, PathDepositPositions, true, getHead},
	{"/clamm/strikes", PathStrikesChain + " (callsReach and putsReach around the price, not first and skip)", false, getHead},
	{"/clamm/positions/trade-history", PathPurchaseHistory + " and " + PathExerciseHistory, false, getHead},
	{"/clamm/exercise/uni-v3", PathExercisePrepare + "?swapperId=uni-v3 (the answer holds the transaction and the profit)", false, getHead},
	{"/clamm/exercise/1inch", PathExercisePrepare + "?swapperId=1inch (the answer holds the transaction and the profit)", false, getHead},
	{"/clamm/premium", PathPurchaseQuote + " (a market, a strike and a ttl, not the tokens and a tick)", false, getHead},
	{"/uniswap-prices", PathTickerCandles + " (with chainId)", false, getHead},
	{"/token/allowance", "the token's allowance() on chain; the prepares list the approvals they need", false, getHead},
	{"/token/balance", "the token's balanceOf() on chain", false, getHead},
	{"/clamm/addresses/position-manager", PathOptionMarkets + " (each market's handlers and pools)", false, getHead},
	{"/clamm/addresses/handlers", PathOptionMarkets + " (each market's handlers)", false, getHead},
	{"/clamm/exercise/orders", "/clamm/orders (signed orders, docs/orders.md)", false, getHead},
	{"/clamm/exercise/create-limit-order", PathOrdersCreate + " (a signed order, docs/orders.md)", false, []string{http.MethodPost}},
	{"/clamm/exercise/delete-limit-order", PathOrdersDelete, false, []string{http.MethodPost}},
}

// The two superseded paths that redirect.
const (
	PathSupersededPurchasePositions = "/clamm/positions/purchase"
	PathSupersededDepositPositions  = "/clamm/positions/deposit"
)

// supersededRoutes adds the older paths to the router.
func (s *Server) supersededRoutes(r *mux.Router) {
	for _, sp := range supersededPaths {
		r.Handle(sp.path, s.tagged(route{path: sp.path, metrics: s.opts.Metrics.Route(sp.path), handler: s.superseded(sp)})).Methods(sp.methods...)
	}
}

// superseded answers an older path: 308 to its successor with the query
// kept, or 410 naming it.
func (s *Server) superseded(sp supersession) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if sp.same {
			target := sp.successor
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", target)
			w.Header().Set("Cache-Control", "public, max-age=86400")
			w.WriteHeader(http.StatusPermanentRedirect)
			return
		}
		s.writeError(w, problem.New(problem.RouteGone, "%s is a route of the hosted API that was superseded; use %s", sp.path, strings.TrimSpace(sp.successor)))
	}
}
