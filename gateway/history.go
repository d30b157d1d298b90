package gateway

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

func (s *Server) parseHistory(r *http.Request) (service.HistoryRequest, error) {
	var p params
	var req service.HistoryRequest
	err := p.readOnly(r, historyParams)
	if err != nil {
		return req, err
	}
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	if req.User, err = p.address("user"); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	// GraphQL semantics, bounded by Graph Node's own limits so a request the
	// subgraph would refuse is a 400 here, not a 502.
	if req.First, err = p.intRange("first", 1, service.MaxFirst); err != nil {
		return req, err
	}
	if req.Skip, err = p.intRange("skip", 0, service.MaxSkip); err != nil {
		return req, err
	}
	return req, nil
}

func (s *Server) handleExerciseHistory(w http.ResponseWriter, r *http.Request) {
	req, err := s.parseHistory(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "history").uint(req.ChainID).addr(req.Market).addr(req.User).int(req.First).int(req.Skip).String()
	policy := cache.Policy{TTL: s.opts.HistoryTTL, Grace: s.opts.StaleGrace}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.ExerciseHistory(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Records, res.Block)
	})
}
