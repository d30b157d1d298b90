package gateway

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
)

// PathPurchaseHistory is the purchase-history route; its parameters are
// those of exercise history.
const PathPurchaseHistory = "/clamm/purchase/history"

func (s *Server) handlePurchaseHistory(w http.ResponseWriter, r *http.Request) {
	req, err := s.parseHistory(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "purchases").uint(req.ChainID).addr(req.Market).addr(req.User).int(req.First).int(req.Skip).String()
	policy := cache.Policy{TTL: s.opts.HistoryTTL, Grace: s.opts.StaleGrace}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.PurchaseHistory(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Records, res.Block)
	})
}
