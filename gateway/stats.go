package gateway

import (
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// maxUnix bounds from and to (unix seconds) at 2^31-1 (2038-01-19): the
// subgraph's day records are keyed by an Int start, and GraphQL's Int is
// 32 bits, so a later bound would be a query Graph Node refuses (a 502)
// rather than the client's 400.
const maxUnix = 1<<31 - 1

// parseStats reads a statistics request: chainId, optionMarket and the
// half-open window [from, to) of unix seconds, at most
// service.MaxStatsWindow long.
func parseStats(s *Server, p *params) (market.StatsRequest, error) {
	var req market.StatsRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	req.From, req.To, err = p.statsWindow()
	return req, err
}

// parseChainStats reads a chain-wide statistics request: chainId and the
// window, as for one market's.
func parseChainStats(s *Server, p *params) (market.ChainStatsRequest, error) {
	var req market.ChainStatsRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	req.From, req.To, err = p.statsWindow()
	return req, err
}

// statsWindow reads the window [from, to) (window), at most
// service.MaxStatsWindow long.
func (p *params) statsWindow() (from, to int64, err error) {
	if from, to, err = p.window(); err != nil {
		return 0, 0, err
	}
	if to-from > market.MaxStatsWindow {
		return 0, 0, problem.InvalidParam("to", "the window [from, to) is %d seconds long; at most %d (366 days)", to-from, market.MaxStatsWindow)
	}
	return from, to, nil
}

// window reads from and to: a half-open window [from, to) of unix
// seconds, to after from.
func (p *params) window() (from, to int64, err error) {
	f, err := p.intRange("from", 0, maxUnix)
	if err != nil {
		return 0, 0, err
	}
	t, err := p.intRange("to", 0, maxUnix)
	if err != nil {
		return 0, 0, err
	}
	from, to = int64(f), int64(t)
	if to <= from {
		return 0, 0, problem.InvalidParam("to", "to (%d) must be after from (%d): the window is [from, to)", to, from)
	}
	return from, to, nil
}

var (
	leaderboardParams   = []string{"chainId", "optionMarket", "from", "to", "first", "skip"}
	leaderboardOptional = []string{"optionMarket"}
)

// parseLeaderboard reads a leaderboard request: chainId, optionally
// optionMarket (every market of the chain without it), the window as for
// statistics, and the page of the ranking (first, skip).
func parseLeaderboard(s *Server, p *params) (market.LeaderboardRequest, error) {
	var req market.LeaderboardRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.optionalAddress("optionMarket"); err != nil {
		return req, err
	}
	if req.From, req.To, err = p.statsWindow(); err != nil {
		return req, err
	}
	req.First, req.Skip, err = p.page()
	return req, err
}

func leaderboardKey(k cacheKey, r market.LeaderboardRequest) cacheKey {
	return k.uint(r.ChainID).optAddr(r.Market).uint(uint64(r.From)).uint(uint64(r.To)).int(r.First).int(r.Skip)
}
