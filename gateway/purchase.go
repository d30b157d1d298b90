package gateway

import (
	"math/big"
	"strconv"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// Bounds of the purchase parameters.
const (
	maxTTL       = 365 * 24 * 3600 // a year: no pricing table holds longer ttls
	maxChainTTLs = 8               // ttls priced in one options chain
	maxStrikeLen = 64              // the strikes chain's keys are at most ~25 characters
)

// purchaseRequest is a quote request with its amount as canonical digits
// and its strike as given: the fill makes the big.Int and the strike's
// price, so a hit allocates neither.
type purchaseRequest struct {
	trade.PurchaseRequest
	amount, strike string
}

// request is the service's request, built on a miss.
func (r purchaseRequest) request() trade.PurchaseRequest {
	out := r.PurchaseRequest
	out.Amount, _ = new(big.Int).SetString(r.amount, 10) // validated digits
	out.Strike, _ = strconv.ParseFloat(r.strike, 64)     // validated number
	return out
}

func (r purchaseRequest) key(k cacheKey) cacheKey {
	side := "put"
	if r.IsCall {
		side = "call"
	}
	return k.uint(r.ChainID).addr(r.Market).addr(r.User).str(side).str(r.strike).uint(r.TTL).str(r.amount)
}

// parsePurchase validates a quote request. `user` is required, as every
// parameter is; the zero address asks for a quote from nobody in
// particular (no discount a pricing contract gives by tx.origin).
func parsePurchase(s *Server, p *params) (req purchaseRequest, err error) {
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.User, err = p.hostedUser(); err != nil {
		return req, err
	}
	if err = p.markPrice(); err != nil {
		return req, err
	}
	kind, err := p.one("type")
	if err != nil {
		return req, err
	}
	if kind != "call" && kind != "put" {
		return req, problem.InvalidParam("type", "type must be call or put")
	}
	req.IsCall = kind == "call"
	if req.strike, err = p.strike("strike"); err != nil {
		return req, err
	}
	ttl, err := p.intRange("ttl", 1, maxTTL)
	if err != nil {
		return req, err
	}
	req.TTL = uint64(ttl)
	if req.amount, err = p.uint256("amount"); err != nil {
		return req, err
	}
	if req.amount == "0" {
		return req, problem.InvalidParam("amount", "amount must be greater than 0")
	}
	return req, nil
}

// strike reads a positive decimal number (the strikes chain's key for a
// strike, or any spelling of the same float64).
func (p *params) strike(name string) (string, error) {
	s, err := p.one(name)
	if err != nil {
		return "", err
	}
	dot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		case c < '0' || c > '9':
			return "", problem.InvalidParam(name, "%s must be a positive decimal number, as the strikes chain's keys are", name)
		}
	}
	if f, err := strconv.ParseFloat(s, 64); err != nil || f <= 0 || len(s) > maxStrikeLen {
		return "", problem.InvalidParam(name, "%s must be a positive decimal number, as the strikes chain's keys are", name)
	}
	return s, nil
}

type purchasePrepareRequest struct {
	purchaseRequest
	slippage clamm.Slippage
}

func parsePurchasePrepare(s *Server, p *params) (req purchasePrepareRequest, err error) {
	if req.purchaseRequest, err = parsePurchase(s, p); err != nil {
		return req, err
	}
	if req.User == ([20]byte{}) {
		return req, problem.InvalidParam("user", "user must be the buyer's address (the transaction is simulated from it)")
	}
	raw, err := p.one("slippage")
	if err != nil {
		return req, err
	}
	if req.slippage, err = clamm.ParseSlippage(raw, maxSlippage); err != nil {
		return req, problem.InvalidParam("slippage", "slippage (percent) %s", err.Error())
	}
	return req, nil
}

// chainRequest is an options-chain request with its ttls in an array, so a
// hit allocates no slice: sorted, without repeats.
type chainRequest struct {
	market.StrikesRequest
	ttls [maxChainTTLs]uint64
	n    int
}

func (r chainRequest) request() market.OptionsChainRequest {
	return market.OptionsChainRequest{StrikesRequest: r.StrikesRequest, TTLs: append([]uint64(nil), r.ttls[:r.n]...)}
}

func (r chainRequest) key(k cacheKey) cacheKey {
	k = k.uint(r.ChainID).addr(r.Market).int(r.CallsReach).int(r.PutsReach)
	for _, t := range r.ttls[:r.n] {
		k = k.uint(t)
	}
	return k
}

func parseOptionsChain(s *Server, p *params) (req chainRequest, err error) {
	if req.StrikesRequest, err = parseStrikes(s, p); err != nil {
		return req, err
	}
	raw, err := p.one("ttls")
	if err != nil {
		return req, err
	}
	for more := true; more; {
		var part string
		part, raw, more = strings.Cut(raw, ",")
		v, err := strconv.ParseUint(part, 10, 64)
		if err != nil || v < 1 || v > maxTTL || part[0] == '+' || req.n == maxChainTTLs {
			return req, problem.InvalidParam("ttls", "ttls must be 1 to %d comma-separated ttls in seconds, each from 1 to %d", maxChainTTLs, maxTTL)
		}
		req.ttls[req.n] = v
		req.n++
	}
	t := req.ttls[:req.n]
	for i := 1; i < len(t); i++ { // insertion sort: sort.Slice would allocate on every hit
		for j := i; j > 0 && t[j] < t[j-1]; j-- {
			t[j], t[j-1] = t[j-1], t[j]
		}
	}
	n := 1
	for i := 1; i < len(t); i++ {
		if t[i] != t[n-1] {
			t[n] = t[i]
			n++
		}
	}
	req.n = n
	return req, nil
}
