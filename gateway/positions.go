package gateway

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
)

// PathPurchasePositions is the open-positions route; its parameters are
// those of the histories.
const PathPurchasePositions = "/clamm/purchase/positions"

// handlePurchasePositions serves a page of the options a user owns now.
// It is cached like a history page (ownership and liquidity change only
// with transactions; the value moves with the price, and the TTL bounds how
// old a value can be).
func (s *Server) handlePurchasePositions(w http.ResponseWriter, r *http.Request) {
	req, err := s.parseHistory(r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	var kb [keyBuf]byte
	key := newKey(kb[:0], "positions").uint(req.ChainID).addr(req.Market).addr(req.User).int(req.First).int(req.Skip).String()
	policy := cache.Policy{TTL: s.opts.HistoryTTL, Grace: s.opts.StaleGrace}
	if s.serveHit(w, r, key, policy) {
		return
	}
	s.serveCached(w, r, key, policy, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.PurchasePositions(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Records, res.Block)
	})
}
