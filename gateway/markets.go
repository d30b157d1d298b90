package gateway

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
)

// PathOptionMarkets is the option-markets route: chainId only.
const PathOptionMarkets = "/clamm/option-markets"

// handleOptionMarkets serves the chain's option markets. It is cached for
// the strikes chain's TTL: it reads the same chain facts (which handlers a
// market can use now), and its sums move with every purchase as strikes'
// liquidity does.
func (s *Server) handleOptionMarkets(w http.ResponseWriter, r *http.Request) {
	var p params
	if err := p.readOnly(r, marketsParams); err != nil {
		s.writeError(w, err)
		return
	}
	chainID, err := p.chainID(s.chains, s.opts.ServeHint)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "markets").uint(chainID).String()
	policy := cache.Policy{TTL: s.opts.StrikesTTL, Grace: s.opts.StaleGrace}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.OptionMarkets(ctx, chainID)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Markets, res.Block)
	})
}
