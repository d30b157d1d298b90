package gateway

import (
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// Reach bounds (domain.md section 2).
const (
	minReach = 1
	maxReach = 1000
)

func parseStrikes(s *Server, p *params) (market.StrikesRequest, error) {
	var req market.StrikesRequest
	var err error
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.CallsReach, err = p.intRange("callsReach", minReach, maxReach); err != nil {
		return req, err
	}
	if req.PutsReach, err = p.intRange("putsReach", minReach, maxReach); err != nil {
		return req, err
	}
	req.FilterDeprecated, err = p.filterDeprecated()
	return req, err
}
