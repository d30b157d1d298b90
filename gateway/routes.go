// Package gateway is the HTTP layer: it lists every route, parses and
// validates query parameters, serves responses from the cache, and turns
// errors into the one JSON error shape. Handlers are thin: parse, call the
// service through the cache, write bytes. Nothing here speaks GraphQL or ABI.
package gateway

import (
	"net/http"

	"github.com/gorilla/mux"
)

// Route paths; test fakes and docs reuse these constants.
const (
	PathStrikesChain    = "/clamm/strikes-chain"
	PathExerciseHistory = "/clamm/exercise/history"
	PathExercisePrepare = "/clamm/exercise/prepare"
)

// routes lists every route of the gateway. Query parameters are validated in
// the handlers, never matched by the router: a missing parameter must be a
// 400 naming it, not a 404.
func (s *Server) routes() http.Handler {
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(s.methodNotAllowed)
	r.Handle(PathStrikesChain, s.route(PathStrikesChain, s.handleStrikesChain)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathExerciseHistory, s.route(PathExerciseHistory, s.handleExerciseHistory)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathExercisePrepare, s.route(PathExercisePrepare, s.handlePrepare)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathHealthz, s.route(PathHealthz, s.handleHealthz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathReadyz, s.route(PathReadyz, s.handleReadyz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathOpenAPI, s.route(PathOpenAPI, serveDoc("docs/openapi.json", "application/json"))).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathDocs, s.route(PathDocs, serveDoc("docs/index.html", "text/html; charset=utf-8"))).Methods(http.MethodGet, http.MethodHead)
	if s.opts.Metrics != nil {
		r.Handle(PathMetrics, s.route(PathMetrics, s.opts.Metrics.Handler().ServeHTTP)).Methods(http.MethodGet, http.MethodHead)
	}
	return r
}
