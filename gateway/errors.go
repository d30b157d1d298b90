package gateway

import (
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// errorBody is the one error shape every client gets.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

// statusOf is the only place error kinds become HTTP statuses.
func statusOf(k problem.Kind) int {
	switch k {
	case problem.KindInvalidArgument:
		return http.StatusBadRequest
	case problem.KindNotFound:
		return http.StatusNotFound
	case problem.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case problem.KindUnprocessable:
		return http.StatusUnprocessableEntity
	case problem.KindRateLimited:
		return http.StatusTooManyRequests
	case problem.KindUpstreamError:
		return http.StatusBadGateway
	case problem.KindUpstreamUnavailable:
		return http.StatusServiceUnavailable
	case problem.KindUpstreamTimeout:
		return http.StatusGatewayTimeout
	case problem.KindHeaderTooLarge:
		return http.StatusRequestHeaderFieldsTooLarge
	case problem.KindBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case problem.KindGone:
		return http.StatusGone
	case problem.KindClientClosed:
		return StatusClientClosed
	default:
		return http.StatusInternalServerError
	}
}

// writeError writes err as the JSON error shape. Unknown errors become a
// generic internal error; the cause goes to the log, never to the client.
func (s *Server) writeError(w http.ResponseWriter, err error) {
	p := problem.As(err)
	exchangeOf(w).err = err
	status := statusOf(p.Kind())
	msg := s.clientMessage(exchangeOf(w).route, p)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		retry := "5"
		if p.RetryAfter > 0 { // the upstream's own, rounded up
			retry = strconv.Itoa(int((p.RetryAfter + time.Second - 1) / time.Second))
		}
		w.Header().Set("Retry-After", retry)
	}
	w.WriteHeader(status)
	body, _ := marshal(errorBody{Error: errorDetail{Code: p.Code.Name(), Message: msg, Param: p.Param}})
	_, _ = w.Write(body)
}

// clientMessage is what a client is told of p on route: its message and
// any hint for its code; an internal error's cause never leaves the log.
func (s *Server) clientMessage(route string, p *problem.Error) string {
	if p.Kind() == problem.KindInternal {
		return "internal error"
	}
	if hint := s.hint(route, p.Code); hint != "" {
		return p.Message + "; " + hint
	}
	return p.Message
}

// errorJSON is err's JSON error body, for a stream's error event.
func (s *Server) errorJSON(route string, err error) []byte {
	p := problem.As(err)
	body, _ := marshal(errorBody{Error: errorDetail{Code: p.Code.Name(), Message: s.clientMessage(route, p), Param: p.Param}})
	return body
}

// hint is the advice added to a code's message on route.
func (s *Server) hint(route string, c *problem.Code) string {
	if s.opts.RouteHint != nil {
		if h := s.opts.RouteHint(route, c); h != "" {
			return h
		}
	}
	return s.opts.Hints[c]
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, problem.New(problem.RouteNotFound, "no such route: the API's paths are listed in /openapi.json"))
}

// methodNotAllowed is the router's 405: the path is a route's, the
// method is not one it takes. Allow and the message name the methods that
// route takes (the API's GET and HEAD, the query API's GET and POST), as
// the router has them, so they cannot drift from the routes.
func (s *Server) methodNotAllowed(router *mux.Router) http.HandlerFunc {
	routes := sync.OnceValue(func() []routeMethods { return routesOf(router) })
	return func(w http.ResponseWriter, r *http.Request) {
		allowed := allowedMethods(routes(), r.URL.Path)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		s.writeError(w, problem.New(problem.MethodNotAllowed, "%s is not supported here: this route takes %s", r.Method, strings.Join(allowed, " and ")))
	}
}

// routeMethods is a route's path pattern and the methods it takes.
type routeMethods struct {
	path    *regexp.Regexp
	methods []string
}

// routesOf lists the router's routes, read once: they are fixed once built.
func routesOf(router *mux.Router) []routeMethods {
	var out []routeMethods
	_ = router.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		re, err := rt.GetPathRegexp()
		methods, merr := rt.GetMethods()
		if err == nil && merr == nil {
			out = append(out, routeMethods{regexp.MustCompile(re), methods})
		}
		return nil
	})
	return out
}

// allowedMethods are the methods of the routes whose path matches path,
// sorted.
func allowedMethods(routes []routeMethods, path string) []string {
	seen := map[string]bool{}
	var out []string
	for _, rt := range routes {
		if !rt.path.MatchString(path) {
			continue
		}
		for _, m := range rt.methods {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	sort.Strings(out)
	return out
}

// StatusClientClosed is what the access log and metrics record for a
// request whose client went away before its answer was ready (nginx's 499):
// not the gateway's failure, so not a 5xx. Nothing is sent: nobody reads.
const StatusClientClosed = 499

// clientClosed records a request the client abandoned (problem.ClientClosed).
func (s *Server) clientClosed(w http.ResponseWriter, err error) {
	x := exchangeOf(w)
	x.err, x.status = problem.Wrap(problem.ClientClosed, err, "the client hung up"), statusOf(problem.ClientClosed.Kind())
}
