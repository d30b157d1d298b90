package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// Reach bounds (domain.md section 2).
const (
	minReach = 1
	maxReach = 1000
)

func (s *Server) parseStrikes(r *http.Request) (service.StrikesRequest, error) {
	p := params{r.URL.Query()}
	var req service.StrikesRequest
	var err error
	if req.Market, err = p.address("optionMarket"); err != nil {
		return req, err
	}
	if req.ChainID, err = p.chainID(s.chains); err != nil {
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
		s.writeError(w, r, err)
		return
	}
	key := fmt.Sprintf("strikes|%d|%s|%d|%d", req.ChainID, req.Market.Hex(), req.CallsReach, req.PutsReach)
	s.serveCached(w, r, key, cache.Policy{TTL: s.opts.StrikesTTL, Grace: s.opts.StaleGrace}, func(ctx context.Context) (entry, error) {
		res, err := s.opts.Service.StrikesChain(ctx, req)
		if err != nil {
			return entry{}, err
		}
		return encode(res.Entries, res.Block)
	})
}

// encode marshals v once, at fill time; hits reuse the bytes.
func encode(v any, block uint64) (entry, error) {
	body, err := marshal(v)
	if err != nil {
		return entry{}, fmt.Errorf("encode response: %w", err)
	}
	return entry{body: body, block: block}, nil
}

// marshal is json.Marshal without HTML escaping: responses are JSON for
// programs, and "<" in a message should read as "<".
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
