package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// exchange is one request as it travels: the response writer that records
// the status, and what the access log line reports. It rides in the
// ResponseWriter rather than the context so a cache hit allocates no
// context: handlers reach it with exchangeOf(w).
type exchange struct {
	http.ResponseWriter
	status int
	start  time.Time // when the middleware took the request
	// id is the client's X-Request-Id; when it sent none, seq numbers the
	// request and the id is formatted only where it is written (the log
	// line), so a hit builds no id string.
	id    string
	seq   uint64
	route string
	// metrics are route's collectors (nil without metrics).
	metrics *metrics.Route
	cache   string
	err     error
	// errText is err's text with secrets redacted, set when logged.
	errText string
	// method and latency are set when the line is logged.
	method  string
	latency time.Duration
}

func (x *exchange) WriteHeader(code int) {
	if x.status == 0 {
		x.status = code
	}
	x.ResponseWriter.WriteHeader(code)
}

func (x *exchange) Write(b []byte) (int, error) {
	if x.status == 0 {
		x.status = http.StatusOK
	}
	return x.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (x *exchange) Unwrap() http.ResponseWriter { return x.ResponseWriter }

// exchangeOf returns the request's exchange; outside the middleware (unit
// tests of a handler) a throwaway one.
func exchangeOf(w http.ResponseWriter) *exchange {
	if x, ok := w.(*exchange); ok {
		return x
	}
	return &exchange{ResponseWriter: w}
}

// requestIDs numbers requests; the process start time keeps ids unique
// across restarts without a random read per request.
var (
	requestSeq    atomic.Uint64
	requestPrefix = strconv.FormatInt(time.Now().UnixNano()%1e9, 36) + "-"
)

var (
	nosniff         = []string{"nosniff"}
	connectionClose = []string{"close"}
)

// middleware wraps the whole router (mux's own Use skips 404 and 405):
// request id, recover, and one access-log line per request. Deadlines are
// set where a request waits on upstreams (serveCached's fill, the pinned
// reads, the query route), not here: a cache hit
// waits on nothing.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		x := exchanges.Get().(*exchange)
		*x = exchange{ResponseWriter: w, start: start, route: routeUnmatched, metrics: s.unmatched}
		// Every answer is JSON (or the docs' HTML, typed as such): a
		// browser must not guess another type from the bytes.
		w.Header()["X-Content-Type-Options"] = nosniff
		if r.ContentLength != 0 || r.TransferEncoding != nil {
			// A GET or HEAD with a body: the API reads none, and with both
			// Content-Length and Transfer-Encoding (which net/http merges
			// into a chunked body, dropping the length) it may be a
			// smuggling attempt. RFC 9112 6.1: answer, then close the
			// connection, so nothing after the body is read as a request.
			w.Header()["Connection"] = connectionClose
		}
		if ids := r.Header["X-Request-Id"]; len(ids) == 1 && len(ids[0]) <= 64 && ids[0] != "" && isToken(ids[0]) {
			// A client's id is echoed so it can match the answer to its logs.
			x.id = ids[0]
			w.Header()["X-Request-Id"] = ids
		} else {
			x.seq = requestSeq.Add(1)
		}
		defer func() {
			if p := recover(); p != nil {
				x.err = panicError{fmt.Sprintf("panic: %v\n%s", p, debug.Stack())}
				if x.status == 0 {
					s.writeError(x, problem.New(problem.InternalError, "internal error"))
				}
			}
			s.logRequest(r, x, start, time.Since(start))
			if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
				annotate(span, r, x)
			}
			*x = exchange{}
			exchanges.Put(x)
		}()
		if s.refuseRaw(x, r) {
			return
		}
		if s.cors(x, r) {
			return
		}
		if s.limiter != nil {
			if ok, wait := s.limiter.allow(s.limiter.client(r), start); !ok {
				secs := int(wait/time.Second) + 1
				x.Header().Set("Retry-After", strconv.Itoa(secs))
				s.writeError(x, problem.New(problem.RateLimited, "too many requests from this client; retry after %ds", secs))
				return
			}
		}
		if !s.serveDirect(x, r) {
			next.ServeHTTP(x, r)
		}
	})
}

// panicError is a recovered panic with its stack.
type panicError struct{ text string }

func (p panicError) Error() string { return p.text }

// MaxHeaderBytes bounds a request's header fields. The gateway checks it
// itself so the answer is the JSON error shape: the HTTP server's own
// limit (set above this, cmd/clamm-gateway) answers 431 in plain text,
// which the command's listener rewrites and reports (LogRefused).
const MaxHeaderBytes = 16 << 10

// refuseRaw answers, in the JSON error shape, what the router or net/http
// would otherwise answer in their own way: header fields over
// MaxHeaderBytes (431), a path with a trailing slash (a 404 that says so:
// a redirect would hide the client's mistake and cost a round trip on
// every call), a path not in clean form such as //clamm/... or
// /clamm/./... (gorilla/mux redirected those with an empty 301: a 404 here,
// the path is not one of the API's), and a request target that is not a
// path (OPTIONS *, answered 200 by net/http unless its server disables
// that). It reports whether it answered.
func (s *Server) refuseRaw(x *exchange, r *http.Request) bool {
	n := 0
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4 // "k: v\r\n"
		}
	}
	if n > MaxHeaderBytes {
		s.writeError(x, problem.New(problem.HeadersTooLarge, "request header fields of %d bytes; at most %d are read", n, MaxHeaderBytes))
		return true
	}
	p := r.URL.Path
	if len(p) > 1 && p[len(p)-1] == '/' && path.Clean(p)+"/" == p {
		s.writeError(x, problem.New(problem.RouteNotFound, "no such route: paths take no trailing slash (drop the final /); the API's paths are listed in /openapi.json"))
		return true
	}
	if p == "" || p[0] != '/' || (p != "/" && path.Clean(p) != p) {
		s.writeError(x, problem.New(problem.RouteNotFound, "no such route: a path is matched as written, in clean form (no //, /./ or /../); the API's paths are listed in /openapi.json"))
		return true
	}
	return false
}

// routeUnmatched is the route of requests no route matched (404, 405).
const routeUnmatched = "unmatched"

// tagged tags the request with its route for logs and metrics (never the
// raw path, which holds user input), then serves it.
func (s *Server) tagged(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := exchangeOf(w)
		x.route, x.metrics = rt.path, rt.metrics
		rt.handler(w, r)
	})
}

// LogRefused records a request net/http refused before any handler saw it
// (a request line, version, Host or header it cannot parse, answered on
// the connection: cmd/clamm-gateway's jsonErrorListener): counted under
// the unmatched route and written to the access log like any other
// request, with an id of its own and no method (it was never parsed).
func (s *Server) LogRefused(status int, code *problem.Code, msg string) {
	x := &exchange{status: status, route: routeUnmatched, metrics: s.unmatched, err: problem.New(code, "%s", msg), seq: requestSeq.Add(1)}
	s.logRequest(&http.Request{}, x, time.Now(), 0)
}

// logRequest counts the request and writes its access line: one writer,
// one format (accesslog.go), lines below AccessLevel skipped.
func (s *Server) logRequest(r *http.Request, x *exchange, start time.Time, d time.Duration) {
	x.metrics.Request(x.status, d, x.cache)
	if s.opts.AccessLog == nil || x.level() < s.opts.AccessLevel {
		return
	}
	if x.err != nil {
		// Transport errors quote the upstream URL, which may hold an API
		// key: the text goes through package secret before it reaches the
		// log. An upstream may echo a key or answer megabytes of error
		// text: Text drops URLs and key-like tokens and bounds the text. A
		// panic's stack is the gateway's own text, kept whole (Known).
		if _, ok := x.err.(panicError); ok {
			x.errText = s.opts.Secrets.Known(x.err.Error())
		} else {
			x.errText = s.opts.Secrets.Text(x.err.Error())
		}
	}
	accessLog{s.opts.AccessLog}.write(r, x, start, d)
}

// level is the access line's level: a failure of ours or an upstream's is
// a warning, anything else (client errors included) information.
func (x *exchange) level() slog.Level {
	if x.err != nil && x.status >= 500 {
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// appendID appends the request's id: the client's, or the process prefix
// and the sequence number in base 36.
func (x *exchange) appendID(b []byte) []byte {
	if x.id != "" {
		return append(b, x.id...)
	}
	return strconv.AppendUint(append(b, requestPrefix...), x.seq, 36)
}

// exchanges recycles the per-request exchange: one allocation less per hit.
var exchanges = sync.Pool{New: func() any { return new(exchange) }}

func isToken(s string) bool {
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// annotate names a request's server span by its route and records what
// the gateway did: route, chain, cache outcome, status. Only with tracing
// on (the span records); a hit without it reads one context value. What
// the client chose (the method, the chainId) is recorded bounded and
// copied: a span outlives its request in the exporter's queue, and a
// substring would hold the whole request line.
func annotate(span trace.Span, r *http.Request, x *exchange) {
	span.SetName(MethodName(r.Method) + " " + x.route)
	span.SetAttributes(
		attribute.String("http.route", x.route),
		attribute.String("clamm.chain_id", spanChainID(r)),
		attribute.String("clamm.cache", x.cache),
		attribute.Int("http.response.status_code", x.status),
	)
	if x.status >= http.StatusInternalServerError {
		span.SetStatus(codes.Error, "")
	}
}

// MethodName is m when it is one of HTTP's methods, as a constant, and
// "_OTHER" otherwise, as OpenTelemetry's conventions name it: a method is
// any token of any length the client chooses, and r.Method is a substring
// of the request line.
func MethodName(m string) string {
	for _, k := range [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete,
		http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch} {
		if m == k {
			return k
		}
	}
	return "_OTHER"
}

// spanChainID is the request's chainId when it can be one (a uint64 has at
// most 20 digits), copied out of the query; "" otherwise.
func spanChainID(r *http.Request) string {
	id := r.URL.Query().Get("chainId")
	if id == "" || len(id) > 20 || strings.Trim(id, "0123456789") != "" {
		return ""
	}
	return strings.Clone(id)
}
