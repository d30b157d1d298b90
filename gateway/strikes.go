package gateway

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"

	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// Reach bounds (domain.md section 2).
const (
	minReach = 1
	maxReach = 1000
)

func (s *Server) parseStrikes(r *http.Request) (service.StrikesRequest, error) {
	var p params
	var req service.StrikesRequest
	err := p.readOnly(r, strikesParams)
	if err != nil {
		return req, err
	}
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
	return req, nil
}

func (s *Server) handleStrikesChain(w http.ResponseWriter, r *http.Request) {
	req, err := s.parseStrikes(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "strikes").uint(req.ChainID).addr(req.Market).int(req.CallsReach).int(req.PutsReach).String()
	policy := cache.Policy{TTL: s.opts.StrikesTTL, Grace: s.opts.StaleGrace}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.StrikesChain(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Entries, res.Block)
	})
}
