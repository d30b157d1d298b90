package gateway

import (
	"context"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// The hosted API's statistics and PnL shapes (docs/api.md, "Portfolio and
// hosted stats"): the paths and bare answers its dashboards, frontend and
// a reward engine parse, each a figure of the gateway's own statistics
// or leaderboard. Two of them (stats/delta, and the portfolio) cover
// several chains in one answer: each chain's part is read under its own
// pin (perChain), so every chain's figures are true at one block of that
// chain, and the answer says which.

var (
	hostedMarketParams = []string{"chainId", "optionMarket"}
	hostedPoolParams   = []string{"chainId"} // and {pool} in the path
	deltaParams        = []string{"chains", "user", "from", "to"}
	boundedAllParams   = []string{"chainId", "period"}
	boundedUserParams  = []string{"chainId", "period", "user"}
)

// chainsRequest is a parsed chains list: the served chains among those
// listed, ascending, and the server whose pins read each chain's part.
type chainsRequest struct {
	chains []uint64
	// unserved are the ids listed that this gateway does not serve.
	unserved []string
	s        *Server
}

// chainsList reads chains as the hosted markets list does (hostedChains:
// ids this gateway does not serve are left out, since the hosted frontend
// lists every chain it knows, 421614 among them, and a 400 would blank its
// whole chart; a malformed id is a 400), and refuses a list that names no
// served chain. A multi-chain answer is pinned per chain, so `block` (one
// chain's block) is refused.
func (p *params) chainsList(s *Server) (chainsRequest, error) {
	if p.has("block") {
		return chainsRequest{}, problem.InvalidParam("block", "an answer over a chains list is read at one block per chain, each named in the answer; block names one chain's block and is not taken here")
	}
	served, skipped, err := s.hostedChains(p)
	if err != nil {
		return chainsRequest{}, err
	}
	if len(served) == 0 {
		return chainsRequest{}, problem.InvalidParam("chains", "none of the chains listed is served by this gateway")
	}
	req := chainsRequest{s: s, chains: slices.Clone(served)}
	slices.Sort(req.chains)
	for _, id := range skipped {
		req.unserved = append(req.unserved, strconv.FormatUint(id, 10))
	}
	return req, nil
}

func (r chainsRequest) key(k cacheKey) cacheKey {
	for _, id := range r.chains {
		k = k.uint(id)
	}
	k = k.str("unserved")
	for _, id := range r.unserved {
		k = k.str(id)
	}
	return k
}

// ChainBlock is the block one chain's part of a multi-chain answer is
// true at.
type ChainBlock struct {
	ChainID   string `json:"chainId"`
	Number    uint64 `json:"number"`
	Hash      string `json:"hash"`
	Timestamp int64  `json:"timestamp"`
}

// perChain runs read once per chain, each under its own pin chosen by
// strategy (as a single-chain answer's is), at once, and gives each
// chain's block. read returns the subgraph block its part reflects,
// which must be the pin's (as fillPinned holds a single-chain answer to).
// The answer's own pin (its X-Block-* headers) is resolved to the first
// chain's block: headers name one block, the body names each.
func (r chainsRequest) perChain(ctx context.Context, strategy block.Strategy, read func(ctx context.Context, chainID uint64) (uint64, error)) ([]ChainBlock, error) {
	refs := make([]block.Ref, len(r.chains))
	g, gctx := errgroup.WithContext(ctx)
	for i, id := range r.chains {
		g.Go(func() error {
			var sub uint64
			ref, err := r.s.opts.Pins.Run(gctx, block.Ask{Chain: id}, strategy, func(ctx context.Context) (err error) {
				sub, err = read(ctx, id)
				return err
			})
			if err != nil {
				return err
			}
			if sub != 0 && sub != ref.Number {
				return problem.New(problem.SubgraphError, "chain %d: the subgraph answered at block %d, not at the answer's block %d (does every query document declare $block?)", id, sub, ref.Number)
			}
			refs[i] = ref
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if pin := block.From(ctx); pin != nil {
		pin.Resolve(refs[0])
	}
	out := make([]ChainBlock, len(refs))
	for i, ref := range refs {
		out[i] = ChainBlock{ChainID: strconv.FormatUint(r.chains[i], 10), Number: ref.Number, Hash: ref.Hash, Timestamp: ref.Timestamp}
	}
	return out, nil
}

// deltaRequest is a parsed stats/delta request.
type deltaRequest struct {
	chainsRequest
	user     common.Address
	from, to int64
}

func parseDelta(s *Server, p *params) (deltaRequest, error) {
	var req deltaRequest
	var err error
	if req.chainsRequest, err = p.chainsList(s); err != nil {
		return req, err
	}
	if req.user, err = p.address("user"); err != nil {
		return req, err
	}
	req.from, req.to, err = p.statsWindow()
	return req, err
}

// deltas answers stats/delta: every listed chain's deltas, each chain's
// at its own block, merged oldest first (ties by chain id, as read).
func deltas(ctx context.Context, svc *service.Service, r deltaRequest) (any, uint64, error) {
	parts := make([][]market.PnlDelta, len(r.chains))
	_, err := r.perChain(ctx, block.SubgraphFirst, func(ctx context.Context, chainID uint64) (uint64, error) {
		i := indexOf(r.chains, chainID)
		var (
			sub uint64
			err error
		)
		parts[i], sub, err = svc.PnlDeltas(ctx, market.DeltaRequest{ChainID: chainID, User: r.user, From: r.from, To: r.to})
		return sub, err
	})
	if err != nil {
		return nil, 0, err
	}
	out := []market.PnlDelta{}
	for _, p := range parts {
		out = append(out, p...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Timestamp < out[j].Timestamp })
	return out, 0, nil
}

// parseBounded reads delta-bounded-all's and -user's chainId and period
// (1D, 1W, 1M, 6M) and, with withUser, user.
func parseBounded(withUser bool) func(s *Server, p *params) (market.BoundedRequest, error) {
	return func(s *Server, p *params) (market.BoundedRequest, error) {
		var req market.BoundedRequest
		var err error
		if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
			return req, err
		}
		period, err := p.one("period")
		if err != nil {
			return req, err
		}
		var ok bool
		if req.Period, ok = market.Periods[period]; !ok {
			return req, problem.InvalidParam("period", "period %q is not one of 1D, 1W, 1M, 6M", period)
		}
		if withUser {
			user, err := p.address("user")
			req.User = &user
			return req, err
		}
		return req, nil
	}
}

func boundedKey(k cacheKey, r market.BoundedRequest) cacheKey {
	return k.uint(r.ChainID).uint(uint64(r.Period)).optAddr(r.User)
}

// parsePoolTVL reads stats/tvl/{pool}'s chainId and the pool in its path.
func parsePoolTVL(s *Server, p *params) (market.PoolTVLRequest, error) {
	var req market.PoolTVLRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	raw := strings.TrimPrefix(p.path, strings.TrimSuffix(PathHostedPoolTVL, "{pool}"))
	if !common.IsHexAddress(raw) || !strings.HasPrefix(strings.ToLower(raw), "0x") {
		return req, problem.InvalidParam("pool", "the path's pool %q is not a 0x-prefixed 20-byte hex address", raw)
	}
	req.Pool = common.HexToAddress(raw)
	return req, nil
}

// parseChainOnly reads a request of one chain's figure (chainId alone).
func parseChainOnly(s *Server, p *params) (uint64, error) {
	return p.chainID(s.chains, s.opts.ServeHint)
}
