package gateway

import (
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// maxSlippage is the largest slippage accepted, in percent: beyond it a
// "minimum" output protects nothing.
const maxSlippage = 50

// prepareRequest is a prepare request with its option id as canonical
// digits: OptionID is left for the fill to set, so a hit never needs the
// big.Int.
type prepareRequest struct {
	trade.PrepareRequest
	optionID string
}

// parsePrepare validates a prepare request.
func parsePrepare(s *Server, p *params) (req prepareRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.optionID, err = p.uint256("optionId"); err != nil {
		return req, err
	}
	if req.SwapperID, err = p.one("swapperId"); err != nil {
		return req, err
	}
	if ids := s.swappers[req.ChainID]; !contains(ids, req.SwapperID) {
		return req, problem.InvalidParam("swapperId", "swapperId %q is not available on chain %d; available: %s", req.SwapperID, req.ChainID, strings.Join(ids, ", "))
	}
	raw, err := p.one("slippage")
	if err != nil {
		return req, err
	}
	if req.Slippage, err = clamm.ParseSlippage(raw, maxSlippage); err != nil {
		return req, problem.InvalidParam("slippage", "slippage (percent) %s", err.Error())
	}
	return req, nil
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
