package gateway

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// The hosted API's paths that its clients (the protocol's frontends,
// dashboards, bots) call, answered in the shapes they parse
// (docs/api.md, "Hosted API paths"): a self-hosted gateway is then a
// change of base URL for them.
const (
	PathHostedMarkets   = "/v1.1/clamm/option-markets"
	PathTickerMarkPrice = "/uniswap-prices/mark-price"
	PathTickerCandles   = "/uniswap-prices/candles"
	PathTickerLastPrice = "/uniswap-prices/last-price"
)

// HeaderChainsSkipped names the chain ids of a chains= list the gateway
// does not serve: they are skipped, not refused (hostedChains).
const HeaderChainsSkipped = "X-Chains-Skipped"

var (
	hostedMarketsParams   = []string{"chains"}
	tickerParams          = []string{"chainId", "ticker"}
	tickerCandlesParams   = []string{"chainId", "interval", "ticker", "from", "to"}
	tickerLastPriceParams = []string{"ticker", "chainId"}
)

// maxTicker bounds a ticker's length: two symbols and a slash.
const maxTicker = 64

// ticker reads a ticker: printable, without spaces, at most maxTicker
// bytes; which market it names is the service's to say.
func (p *params) ticker() (string, error) {
	t, err := p.one("ticker")
	if err != nil {
		return "", err
	}
	if len(t) > maxTicker || strings.IndexFunc(t, func(r rune) bool { return !unicode.IsPrint(r) || unicode.IsSpace(r) }) >= 0 {
		return "", problem.InvalidParam("ticker", "ticker must be a market's CALL/PUT symbols (at most %d printable characters, no spaces), as /v1.1/clamm/option-markets lists them", maxTicker)
	}
	return t, nil
}

// parseTicker reads chainId and ticker.
func parseTicker(s *Server, p *params) (market.TickerRequest, error) {
	var req market.TickerRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	req.Ticker, err = p.ticker()
	return req, err
}

// parseTickerCandles reads a candles request by ticker: the interval and
// window as /clamm/candles reads them.
func parseTickerCandles(s *Server, p *params) (market.TickerCandlesRequest, error) {
	var req market.TickerCandlesRequest
	var err error
	if req.TickerRequest, err = parseTicker(s, p); err != nil {
		return req, err
	}
	c, err := candleWindow(p)
	req.Interval, req.Seconds, req.From, req.To = c.Interval, c.Seconds, c.From, c.To
	return req, err
}

// lastPriceChain is the chain /uniswap-prices/last-price and
// /clamm/auto-exerciser/delegators answer for when not given a chainId:
// the hosted routes took none (their one client, elvarg before
// 2024-02-27, served Arbitrum only), so Arbitrum One when served, else
// the lowest served id.
func (s *Server) lastPriceChain() (uint64, error) {
	const arbitrum = 42161
	if s.chains[arbitrum] {
		return arbitrum, nil
	}
	var ids []uint64
	for id, served := range s.chains {
		if served {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, problem.InvalidParam("ticker", "the gateway serves no chain")
	}
	return slices.Min(ids), nil
}

// parseLastPrice reads ticker and the optional chainId (absent,
// lastPriceChain's), so a client of another chain can ask it too.
func parseLastPrice(s *Server, p *params) (market.TickerRequest, error) {
	var id uint64
	var err error
	if p.given("chainId") {
		id, err = p.chainID(s.chains, s.opts.ServeHint)
	} else if id, err = s.lastPriceChain(); err == nil {
		p.chain = id
	}
	if err != nil {
		return market.TickerRequest{}, err
	}
	t, err := p.ticker()
	return market.TickerRequest{ChainID: id, Ticker: t}, err
}

// hostedTickerEndpoints are the /uniswap-prices/* routes: each resolves
// its ticker from the chain's markets list (a subgraph read first, so
// pinned SubgraphFirst), then answers as /clamm/mark-price and
// /clamm/candles do at that block, cached as they are.
func tickerKey(k cacheKey, r market.TickerRequest) cacheKey {
	return k.uint(r.ChainID).str(strings.ToUpper(r.Ticker))
}

var hostedTickerEndpoints = []endpoint{
	api[market.TickerRequest]{
		path: PathTickerMarkPrice, name: "tickermark", operation: "tickerMarkPrice", params: tickerParams,
		ttl: ttlPrepare, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseTicker, key: tickerKey,
		call: func(ctx context.Context, svc *service.Service, r market.TickerRequest) (any, uint64, error) {
			res, err := svc.TickerMarkPrice(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
	api[market.TickerCandlesRequest]{
		path: PathTickerCandles, name: "tickercandles", operation: "tickerCandles", params: tickerCandlesParams,
		ttl: ttlStrikes, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseTickerCandles,
		key: func(k cacheKey, r market.TickerCandlesRequest) cacheKey {
			return tickerKey(k, r.TickerRequest).uint(uint64(r.Seconds)).uint(uint64(r.From)).uint(uint64(r.To))
		},
		call: func(ctx context.Context, svc *service.Service, r market.TickerCandlesRequest) (any, uint64, error) {
			res, err := svc.TickerCandles(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
	api[market.TickerRequest]{
		path: PathTickerLastPrice, name: "tickerlast", operation: "tickerLastPrice", params: tickerLastPriceParams, optional: []string{"chainId"},
		ttl: ttlPrepare, pin: block.SubgraphFirst, stream: notStreamed,
		parse: parseLastPrice, key: tickerKey,
		call: func(ctx context.Context, svc *service.Service, r market.TickerRequest) (any, uint64, error) {
			res, err := svc.TickerLastPrice(ctx, r)
			return res, 0, err
		},
	}.endpoint(),
}

// maxChainsListed bounds a chains= list.
const maxChainsListed = 16

// hostedChains reads chains=, a comma list of chain ids, in the order
// given and without repeats. An id the gateway does not serve (stryke-fe
// sends Arbitrum Sepolia, 421614; dashboards Berachain, 80094) is skipped
// and named in the X-Chains-Skipped header, not refused: the hosted API's
// clients send one fixed list to every deployment, and one chain this
// gateway lacks must not take the others' markets away. An id that is
// not a number is a 400.
func (s *Server) hostedChains(p *params) (served, skipped []uint64, err error) {
	list, err := p.one("chains")
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Split(list, ",")
	if len(parts) > maxChainsListed {
		return nil, nil, problem.InvalidParam("chains", "chains lists %d ids; at most %d", len(parts), maxChainsListed)
	}
	for _, part := range parts {
		id, err := strconv.ParseUint(strings.TrimSpace(part), 10, 64)
		if err != nil || strings.TrimSpace(part) != part || strings.HasPrefix(part, "+") {
			return nil, nil, problem.InvalidParam("chains", "chains must be chain ids separated by commas (42161,5000); %q is not one", part)
		}
		switch {
		case slices.Contains(served, id) || slices.Contains(skipped, id):
		case s.chains[id]:
			served = append(served, id)
		default:
			skipped = append(skipped, id)
		}
	}
	return served, skipped, nil
}

// hostedMarketsEndpoint is /v1.1/clamm/option-markets: one chain's
// markets per listed chain, each filled and cached on its own (pinned to
// its chain's subgraph block, cached for the strikes chain's TTL as
// /clamm/option-markets is) and joined into one bare array in the order
// the chains were listed. It takes no block parameter: one block number
// means nothing across chains.
func hostedMarketsEndpoint() endpoint {
	return endpoint{
		path: PathHostedMarkets, operation: "hostedOptionMarkets", params: hostedMarketsParams,
		pin: block.SubgraphFirst, stream: notStreamed,
		handler: func(s *Server) http.HandlerFunc {
			policy := s.policy(ttlStrikes)
			return func(w http.ResponseWriter, r *http.Request) { s.serveHostedMarkets(w, r, policy) }
		},
	}
}

func (s *Server) serveHostedMarkets(w http.ResponseWriter, r *http.Request, pol cache.Policy) {
	var p params
	if err := p.readOnly(r, hostedMarketsParams); err != nil {
		s.writeError(w, err)
		return
	}
	served, skipped, err := s.hostedChains(&p)
	if err != nil {
		s.writeError(w, err)
		return
	}
	if len(skipped) > 0 {
		ids := make([]string, len(skipped))
		for i, id := range skipped {
			ids[i] = strconv.FormatUint(id, 10)
		}
		w.Header().Set(HeaderChainsSkipped, strings.Join(ids, ","))
	}
	e, how, err := s.hostedMarketsOf(r, served, pol)
	if err != nil {
		if r.Context().Err() != nil {
			s.clientClosed(w, err)
			return
		}
		s.writeError(w, err)
		return
	}
	s.writeEntry(w, r, e, pol, how)
}

// hostedMarketsOf gets each chain's part through the cache and joins them;
// the answer is as old as its oldest part, and a miss if any part was.
func (s *Server) hostedMarketsOf(r *http.Request, chains []uint64, pol cache.Policy) (entry, served, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	parts := make([][]byte, len(chains))
	hows := make([]served, len(chains))
	g, gctx := errgroup.WithContext(ctx)
	for i, id := range chains {
		g.Go(func() error {
			e, status, age, err := s.responses.Get(gctx, newKey(nil, "hostedmarkets").uint(id).String(), pol, func(ctx context.Context) (entry, error) {
				ctx, lease, err := s.fills.Admit(ctx)
				if err != nil {
					return entry{}, err
				}
				defer lease.Release()
				return s.fillPinned(ctx, block.Ask{Chain: id}, block.SubgraphFirst, func(ctx context.Context) (any, uint64, error) {
					return s.opts.Service.HostedMarkets(ctx, id)
				})
			})
			parts[i], hows[i] = e.body, served{status, age}
			return timeoutProblem(err)
		})
	}
	if err := g.Wait(); err != nil {
		return entry{}, served{}, err
	}
	body := joinArrays(parts)
	how := served{status: cache.Hit}
	for _, h := range hows {
		if h.status != cache.Hit {
			how.status = h.status
		}
		how.age = max(how.age, h.age)
	}
	return newEntry(body, 0, etagOf(body), gzipBody(body)), how, nil
}

// timeoutProblem turns a deadline that ended a wait into the gateway's
// timeout problem (never a 500), as serveCached does.
func timeoutProblem(err error) error {
	if pe := (*problem.Error)(nil); errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &pe) {
		return problem.New(problem.Timeout, "the request did not complete within the gateway's deadline")
	}
	return err
}

// joinArrays joins JSON arrays into one.
func joinArrays(parts [][]byte) []byte {
	out := []byte{'['}
	for _, p := range parts {
		inner := p[1 : len(p)-1]
		if len(inner) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, inner...)
	}
	return append(out, ']')
}
