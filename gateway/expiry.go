package gateway

import (
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// The expiry routes' parameters, in the order their documentation lists
// them.
var (
	delegateParams    = []string{"chainId", "optionMarket", "user", "delegate", "enable"}
	settlementParams  = []string{"chainId", "optionMarket", "user", "first", "skip"}
	expiringParams    = []string{"chainId", "optionMarket", "within", "first", "skip"}
	delegateOptional  = []string{"delegate"}
	settleOptional    = []string{"optionMarket"}
	maxExpiringWithin = 365 * 24 * 3600 // a year: a window past every ttl a market sells
)

// parseDelegate reads the delegate prepare's parameters; delegate may be
// left out (the chain's auto-exerciser).
func parseDelegate(s *Server, p *params) (trade.DelegateRequest, error) {
	var req trade.DelegateRequest
	var err error
	if req.ChainID, req.Market, req.User, err = p.marketUser(s); err != nil {
		return req, err
	}
	if req.Delegate, err = p.optionalAddress("delegate"); err != nil {
		return req, err
	}
	req.Enable, err = p.boolean("enable")
	return req, err
}

// marketUser reads chainId, optionMarket and user, in that order.
func (p *params) marketUser(s *Server) (chainID uint64, market, user common.Address, err error) {
	if chainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return
	}
	if market, err = p.address("optionMarket"); err != nil {
		return
	}
	user, err = p.address("user")
	return
}

// boolean reads "true" or "false", nothing else (no 1/0, no case
// variants): the transaction it builds sets one or the other.
func (p *params) boolean(name string) (bool, error) {
	v, err := p.one(name)
	if err != nil {
		return false, err
	}
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, problem.InvalidParam(name, "%s must be true or false", name)
}

func delegateKey(k cacheKey, r trade.DelegateRequest) cacheKey {
	k = k.uint(r.ChainID).addr(r.Market).addr(r.User)
	if r.Delegate == nil {
		k = k.str("-")
	} else {
		k = k.addr(*r.Delegate)
	}
	if r.Enable {
		return k.str("1")
	}
	return k.str("0")
}

// parseSettlements reads the settlement history's parameters; optionMarket
// may be left out (every market of the chain).
func parseSettlements(s *Server, p *params) (trade.SettlementRequest, error) {
	var req trade.SettlementRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.optionalAddress("optionMarket"); err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	req.First, req.Skip, err = p.page()
	return req, err
}

func settlementKey(k cacheKey, r trade.SettlementRequest) cacheKey {
	return k.uint(r.ChainID).addr(r.User).optAddr(r.Market).int(r.First).int(r.Skip)
}

// parseExpiring reads the expiring options' parameters.
func parseExpiring(s *Server, p *params) (trade.ExpiringRequest, error) {
	var req trade.ExpiringRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	within, err := p.intRange("within", 1, maxExpiringWithin)
	if err != nil {
		return req, err
	}
	req.Within = int64(within)
	req.First, req.Skip, err = p.page()
	return req, err
}

func expiringKey(k cacheKey, r trade.ExpiringRequest) cacheKey {
	return k.uint(r.ChainID).addr(r.Market).uint(uint64(r.Within)).int(r.First).int(r.Skip)
}
