package gateway

import (
	"context"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"net/http"
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// maxSlippage is the largest slippage accepted, in percent: beyond it a
// "minimum" output protects nothing.
const maxSlippage = 50

func (s *Server) parsePrepare(r *http.Request) (service.PrepareRequest, error) {
	var p params
	p.read(r)
	var req service.PrepareRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains); err != nil {
		return req, err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.OptionID, err = p.uint256("optionId"); err != nil {
		return req, err
	}
	if req.SwapperID, err = p.one("swapperId"); err != nil {
		return req, err
	}
	if ids := s.opts.Swappers[req.ChainID]; !contains(ids, req.SwapperID) {
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

func (s *Server) handlePrepare(w http.ResponseWriter, r *http.Request) {
	req, err := s.parsePrepare(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "prepare").uint(req.ChainID).addr(req.Market).big(req.OptionID).str(req.SwapperID).str(req.Slippage.String()).String()
	policy := cache.Policy{TTL: s.opts.PrepareTTL}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.PrepareExercise(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res, 0)
	})
}
