// Package gateway is the HTTP layer: it lists every route, parses and
// validates query parameters, serves responses from the cache, and turns
// errors into the one JSON error shape. Handlers are thin: parse, call the
// service through the cache, write bytes. Nothing here speaks GraphQL or ABI.
package gateway

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
)

// route is one entry of the route table: a fixed path answering GET and
// HEAD, or the methods it names. The table is the only list of routes;
// the router and the fast path are both built from it.
type route struct {
	path    string
	handler http.HandlerFunc
	metrics *metrics.Route // the path's collectors (nil without metrics)
	methods []string       // nil: GET and HEAD
}

// methodsOf are the methods a route takes.
func (rt *route) methodsOf() []string {
	if rt.methods == nil {
		return []string{http.MethodGet, http.MethodHead}
	}
	return rt.methods
}

// table lists every route: the API's endpoints first (they are the ones
// under load, and serveDirect tries entries in order), then the
// operational ones. Query parameters are validated in the handlers, never
// matched by the router: a missing parameter must be a 400 naming it, not
// a 404.
func (s *Server) table() []route {
	t := make([]route, 0, len(s.endpoints)+5)
	for _, e := range s.endpoints {
		t = append(t, route{path: e.path, handler: e.handler(s), methods: e.methods})
	}
	t = append(t,
		route{path: PathHealthz, handler: s.handleHealthz},
		route{path: PathReadyz, handler: s.handleReadyz},
		route{path: PathOpenAPI, handler: serveDoc("docs/openapi.json", "application/json")},
		route{path: PathDocs, handler: serveDoc("docs/index.html", "text/html; charset=utf-8")},
	)
	if s.streams != nil {
		t = append(t, route{path: PathStream, handler: s.serveStreamSocket},
			route{path: PathDocsLive, handler: serveDoc("docs/live.html", "text/html; charset=utf-8")})
	}
	if s.opts.Metrics != nil {
		t = append(t, route{path: PathMetrics, handler: s.opts.Metrics.Handler().ServeHTTP})
	}
	return t
}

// serveDirect answers GET and HEAD on the table's paths (those that take
// GET and HEAD alone: the order book's routes go through the router)
// without the router
// and reports whether it did. gorilla/mux costs a cache hit eight
// allocations and a regexp match (it copies the request twice to put route
// and path variables in its context, which these handlers never read);
// the paths are fixed strings, so comparing them finds the route. Everything
// else (other methods, other paths, 404, 405 and unclean paths) goes
// through the router, which is built from the same table.
func (s *Server) serveDirect(x *exchange, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	for i := range s.direct {
		if rt := &s.direct[i]; rt.path == r.URL.Path && rt.methods == nil {
			x.route, x.metrics = rt.path, rt.metrics
			rt.handler(x, r)
			return true
		}
	}
	return false
}

// routes builds the table and the router over it: the router answers
// what the fast path leaves (404, 405, path cleaning), and routes the
// table's requests the same way should they reach it.
func (s *Server) routes() http.Handler {
	r := mux.NewRouter()
	s.unmatched = s.opts.Metrics.Route(routeUnmatched)
	r.NotFoundHandler = http.HandlerFunc(s.notFound)
	r.MethodNotAllowedHandler = s.methodNotAllowed(r)
	s.direct = s.table()
	for i := range s.direct {
		rt := &s.direct[i]
		rt.metrics = s.opts.Metrics.Route(rt.path)
		r.Handle(rt.path, s.tagged(*rt)).Methods(rt.methodsOf()...)
	}
	s.subgraphRoutes(r)
	s.supersededRoutes(r)
	return r
}
