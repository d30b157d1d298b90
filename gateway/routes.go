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

// serveDirect answers GET and HEAD on the three API paths without the
// router and reports whether it did. gorilla/mux costs a cache hit eight
// allocations and a regexp match (it copies the request twice to put route
// and path variables in its context, which these handlers never read);
// these paths are fixed strings, so a switch finds them. Everything else
// (other methods, other paths, 404 and 405) goes through the router, which
// lists the same routes: TestDirectRoutesMatchRouter holds the two
// together.
func (s *Server) serveDirect(x *exchange, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	switch r.URL.Path {
	case PathStrikesChain:
		s.tag(x, PathStrikesChain)
		s.handleStrikesChain(x, r)
	case PathExerciseHistory:
		s.tag(x, PathExerciseHistory)
		s.handleExerciseHistory(x, r)
	case PathExercisePrepare:
		s.tag(x, PathExercisePrepare)
		s.handlePrepare(x, r)
	case PathPurchaseHistory:
		s.tag(x, PathPurchaseHistory)
		s.handlePurchaseHistory(x, r)
	case PathPurchasePositions:
		s.tag(x, PathPurchasePositions)
		s.handlePurchasePositions(x, r)
	default:
		return false
	}
	return true
}

// routes lists every route of the gateway. Query parameters are validated in
// the handlers, never matched by the router: a missing parameter must be a
// 400 naming it, not a 404.
func (s *Server) routes() http.Handler {
	r := mux.NewRouter()
	s.unmatched = s.opts.Metrics.Route(routeUnmatched)
	s.routeMetrics[routeUnmatched] = s.unmatched
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(s.methodNotAllowed)
	r.Handle(PathStrikesChain, s.route(PathStrikesChain, s.handleStrikesChain)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathExerciseHistory, s.route(PathExerciseHistory, s.handleExerciseHistory)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathExercisePrepare, s.route(PathExercisePrepare, s.handlePrepare)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathPurchaseHistory, s.route(PathPurchaseHistory, s.handlePurchaseHistory)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathPurchasePositions, s.route(PathPurchasePositions, s.handlePurchasePositions)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathHealthz, s.route(PathHealthz, s.handleHealthz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathReadyz, s.route(PathReadyz, s.handleReadyz)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathOpenAPI, s.route(PathOpenAPI, serveDoc("docs/openapi.json", "application/json"))).Methods(http.MethodGet, http.MethodHead)
	r.Handle(PathDocs, s.route(PathDocs, serveDoc("docs/index.html", "text/html; charset=utf-8"))).Methods(http.MethodGet, http.MethodHead)
	if s.opts.Metrics != nil {
		r.Handle(PathMetrics, s.route(PathMetrics, s.opts.Metrics.Handler().ServeHTTP)).Methods(http.MethodGet, http.MethodHead)
	}
	return r
}
