package gateway

import (
	"context"
	"math/big"
	"net/http"
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// maxSlippage is the largest slippage accepted, in percent: beyond it a
// "minimum" output protects nothing.
const maxSlippage = 50

// parsePrepare validates a prepare request. The option id comes back as
// its canonical digits, and req.OptionID is left for the fill to set: a
// hit never needs the big.Int.
func (s *Server) parsePrepare(r *http.Request) (req service.PrepareRequest, optionID string, err error) {
	var p params
	if err = p.readOnly(r, prepareParams); err != nil {
		return req, "", err
	}
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, "", err
	}
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, "", err
	}
	if optionID, err = p.uint256("optionId"); err != nil {
		return req, "", err
	}
	if req.SwapperID, err = p.one("swapperId"); err != nil {
		return req, "", err
	}
	if ids := s.swappers[req.ChainID]; !contains(ids, req.SwapperID) {
		return req, "", problem.InvalidParam("swapperId", "swapperId %q is not available on chain %d; available: %s", req.SwapperID, req.ChainID, strings.Join(ids, ", "))
	}
	raw, err := p.one("slippage")
	if err != nil {
		return req, "", err
	}
	if req.Slippage, err = clamm.ParseSlippage(raw, maxSlippage); err != nil {
		return req, "", problem.InvalidParam("slippage", "slippage (percent) %s", err.Error())
	}
	return req, optionID, nil
}

func contains(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}

func (s *Server) handlePrepare(w http.ResponseWriter, r *http.Request) {
	req, optionID, err := s.parsePrepare(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "prepare").uint(req.ChainID).addr(req.Market).str(optionID).str(req.SwapperID).slippage(req.Slippage).String()
	policy := cache.Policy{TTL: s.opts.PrepareTTL}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		req := req                                             // the fill may outlive this request; give it its own copy
		req.OptionID, _ = new(big.Int).SetString(optionID, 10) // validated digits
		res, err := s.opts.Service.PrepareExercise(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res, 0)
	})
}
