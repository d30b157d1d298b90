package gateway

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"
)

// PathSubgraphs is where each chain the gateway indexes itself serves its
// store's Graph Node query API: POST /subgraphs/<chainId> with a GraphQL
// body (or GET with `query`, `variables`, `operationName`), answered as
// Graph Node answers /subgraphs/name/<name>. GraphQL clients, and other
// replicas (their CLAMM_CHAIN_<id>_SUBGRAPH_URL), read the index there.
const PathSubgraphs = "/subgraphs/"

// maxQueryBody bounds a GraphQL request's body: the gateway's own
// documents are a few KiB.
const maxQueryBody = 1 << 20

// subgraphRoutes adds each indexed chain's query API to the router: one
// route template for all, so metrics and the access log carry no id a
// client chose.
func (s *Server) subgraphRoutes(r *mux.Router) {
	if len(s.opts.Subgraphs) == 0 {
		return
	}
	template := PathSubgraphs + "{chainId}"
	m := s.opts.Metrics.Route(template)
	for id, h := range s.opts.Subgraphs {
		h := h
		rt := route{path: template, metrics: m, handler: func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, maxQueryBody)
			w.Header().Set("Cache-Control", "no-store")
			h.ServeHTTP(w, r)
		}}
		r.Handle(PathSubgraphs+strconv.FormatUint(id, 10), s.tagged(rt)).Methods(http.MethodPost, http.MethodGet)
	}
}
