package gateway

import (
	"slices"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

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
	if err := checkSwapperID(req.SwapperID, req.ChainID, s.swappers[req.ChainID]); err != nil {
		return req, err
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

// checkSwapperID refuses what can be no swapper of the chain: a
// configured id, auto, direct, a per-chain direct name or a contract
// address (a swapper the chain's exercises used) passes on to the
// service, which knows the learned ones.
func checkSwapperID(id string, chainID uint64, configured []string) error {
	if contains(configured, id) || id == trade.SwapperAuto || id == trade.SwapperDirect ||
		slices.Contains(trade.DirectNames, id) || common.IsHexAddress(id) {
		return nil
	}
	// auto and direct choose among configured swappers only: a chain
	// without one takes only a learned swapper's address
	accepted := slices.Clone(configured)
	if len(configured) > 0 {
		accepted = append(accepted, trade.SwapperAuto, trade.SwapperDirect)
		accepted = append(accepted, trade.DirectNames...)
	}
	why := "is not available"
	if slices.Contains(trade.NotOffered, id) {
		why = "names a route this gateway does not offer"
	}
	accepted = append(accepted, "the address of a swapper the chain's exercises used")
	return problem.InvalidParam("swapperId", "swapperId %q %s on chain %d; accepted: %s",
		id, why, chainID, strings.Join(accepted, ", "))
}
