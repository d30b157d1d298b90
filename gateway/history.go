package gateway

import (
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// parseHistory reads the parameters every per-user page takes: exercise
// and purchase history, and positions.
func parseHistory(s *Server, p *params) (trade.HistoryRequest, error) {
	var req trade.HistoryRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	req.First, req.Skip, err = p.page()
	return req, err
}

// page reads first and skip: GraphQL semantics, bounded by Graph Node's
// own limits so a request the subgraph would refuse is a 400 here, not a
// 502.
func (p *params) page() (first, skip int, err error) {
	if first, err = p.intRange("first", 1, trade.MaxFirst); err != nil {
		return 0, 0, err
	}
	skip, err = p.intRange("skip", 0, trade.MaxSkip)
	return first, skip, err
}
