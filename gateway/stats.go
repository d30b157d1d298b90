package gateway

import (
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// maxUnix bounds from and to (unix seconds) at 2^31-1 (2038-01-19): the
// subgraph's day records are keyed by an Int start, and GraphQL's Int is
// 32 bits, so a later bound would be a query Graph Node refuses (a 502)
// rather than the client's 400.
const maxUnix = 1<<31 - 1

// parseStats reads a statistics request: chainId, optionMarket and the
// half-open window [from, to) of unix seconds, at most
// service.MaxStatsWindow long.
func parseStats(s *Server, p *params) (service.StatsRequest, error) {
	var req service.StatsRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	from, err := p.intRange("from", 0, maxUnix)
	if err != nil {
		return req, err
	}
	to, err := p.intRange("to", 0, maxUnix)
	if err != nil {
		return req, err
	}
	req.From, req.To = int64(from), int64(to)
	if req.To <= req.From {
		return req, problem.InvalidParam("to", "to (%d) must be after from (%d): the window is [from, to)", req.To, req.From)
	}
	if req.To-req.From > service.MaxStatsWindow {
		return req, problem.InvalidParam("to", "the window [from, to) is %d seconds long; at most %d (366 days)", req.To-req.From, service.MaxStatsWindow)
	}
	return req, nil
}
