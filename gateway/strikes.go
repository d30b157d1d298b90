package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"net/http"
	"strconv"

	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// Reach bounds (domain.md section 2).
const (
	minReach = 1
	maxReach = 1000
)

func (s *Server) parseStrikes(r *http.Request) (service.StrikesRequest, error) {
	p := paramsOf(r)
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
	key := newKey("strikes").uint(req.ChainID).addr(req.Market).int(req.CallsReach).int(req.PutsReach).String()
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

// encode marshals v once, at fill time; hits reuse the bytes.
func encode(v any, block uint64) (entry, error) {
	body, err := marshal(v)
	if err != nil {
		return entry{}, fmt.Errorf("encode response: %w", err)
	}
	sum := sha256.Sum256(body)
	e := entry{body: body, contentLength: []string{strconv.Itoa(len(body))},
		etag: []string{`"` + hex.EncodeToString(sum[:16]) + `"`}}
	if block > 0 {
		e.blockHeader = []string{strconv.FormatUint(block, 10)}
	}
	return e, nil
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
