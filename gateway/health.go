package gateway

import (
	"net/http"
)

// handleHealthz says the process is alive and serving, and which release
// (and commit, when the build knows it) serves; it touches no upstream.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	body := map[string]string{"status": "ok", "version": s.opts.Version}
	if s.opts.Commit != "" {
		body["commit"] = s.opts.Commit
	}
	s.writeJSON(w, http.StatusOK, body)
}

// handleReadyz probes each configured chain's subgraph and RPC node and the
// subgraph's lag behind the chain head (the head feed's head where the
// chain has a feed, which is not ready once stalled: service.ReadHeads):
// 200 when every chain is ready, 503
// (with Retry-After) otherwise. Probes are shared and their result reused
// for ReadyTTL (service.ReadinessCache); the answer itself is no-store.
// With a shared cache tier it also reports sharedCache: "ok", or
// "degraded" with the reason, which leaves the gateway ready.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	ready, chains := s.ready.Readiness(r.Context(), s.opts.MaxLagBlocks)
	if s.opts.Metrics != nil {
		for _, c := range chains {
			if c.Configured && c.ChainHead > 0 {
				s.opts.Metrics.SubgraphLag(c.ChainID, c.LagBlocks)
			}
		}
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "5")
	}
	body := map[string]any{"ready": ready, "maxLagBlocks": s.opts.MaxLagBlocks, "chains": chains}
	if s.opts.Shared != nil {
		body["sharedCache"] = s.sharedReadiness(r.Context())
	}
	s.writeJSON(w, status, body)
}

func (s *Server) writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		s.writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
