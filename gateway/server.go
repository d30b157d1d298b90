package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// Options are everything a Server depends on.
type Options struct {
	// Service answers the requests; its ChainIDs and Swappers are the only
	// chainId and swapperId values accepted (any other is a 400).
	Service *service.Service
	// Pins choose the block each answer is read at, by the strategy its
	// endpoint states (package block).
	Pins   *block.Pins
	Logger *slog.Logger
	// AccessLog, if set, receives the one-line-per-request access log as
	// JSON lines (hand-formatted, in slog's JSON shape); nil: no access
	// log. Lines below AccessLevel are skipped: at slog.LevelWarn only
	// requests that failed with a 5xx are written.
	AccessLog   io.Writer
	AccessLevel slog.Level
	// Hints add deployment advice to the message of some codes (how to
	// configure an upstream, say): the error vocabulary itself knows nothing
	// of deployment, the composition root does.
	Hints map[*problem.Code]string
	// RouteHint, if set, gives a code's advice for one route (its
	// template), replacing Hints' for that code when not "": the demo's
	// NOT_RECORDED names the values it holds for the route asked.
	RouteHint func(route string, code *problem.Code) string
	// ServeHint, if set, tells how a chain configured without upstreams
	// would be served; it is added to the 400 refusing such a chain.
	ServeHint func(chainID uint64) string
	// Secrets takes the configured upstream URLs (with their keys) out of
	// logged error text (package secret); nil: only what secret.Scrub finds.
	Secrets *secret.Redactor
	// RequestTimeout bounds how long a client waits for an answer.
	RequestTimeout time.Duration
	// StrikesTTL is how long a strikes-chain response is served from cache.
	StrikesTTL time.Duration
	// HistoryTTL is how long an answer of every route the endpoint table
	// gives ttlHistory (the histories and positions, which move with
	// transactions) is served from cache.
	HistoryTTL time.Duration
	// PrepareTTL is how long a prepared exercise (its quotes) is served
	// from cache: a block or two at most.
	PrepareTTL time.Duration
	// RateLimit is each client's sustained requests per second (0: no
	// limit), RateBurst the requests it may make at once; over it a client
	// gets 429 with Retry-After. TrustForwardedFor names clients by the
	// last X-Forwarded-For entry (the one the proxy appended) instead of the peer address.
	RateLimit         float64
	RateBurst         int
	TrustForwardedFor bool
	// MaxFills bounds upstream fills running at once; a miss that
	// would start one more is answered 503 OVERLOADED with Retry-After.
	MaxFills int
	// Metrics, if set, is served at /metrics and fed by every request.
	Metrics *metrics.Metrics
	// Version is reported by /healthz: the gateway's semantic version.
	Version string
	// Commit is the revision the binary was built from, reported by
	// /healthz beside Version when known.
	Commit string
	// MaxLagBlocks is how far the subgraph may trail the chain head before
	// /readyz reports the chain unready.
	MaxLagBlocks uint64
	// ReadyTTL is how long one readiness probe answers /readyz (0: 1 s);
	// concurrent probes share one.
	ReadyTTL time.Duration
	// CORSOrigins are the browser origins allowed to read answers ("*":
	// any); empty adds no CORS headers.
	CORSOrigins []string
	// CacheMaxEntries and CacheMaxBytes bound the response cache.
	CacheMaxEntries int
	CacheMaxBytes   int64
	// StaleGrace is how long after its TTL a strikes or history answer may
	// still be served while it is refreshed, or while refreshes fail.
	// Prepared exercises are never served stale: their quotes would be.
	StaleGrace time.Duration
	// Shared, if set, is the response cache's second tier, shared with
	// other replicas: read on a local miss, written by fills, and the
	// holder of each key's fleet-wide fill lease. Local hits never touch
	// it.
	Shared SharedTier
	// Subgraphs are the Graph Node query APIs of the chains the gateway
	// indexes itself, served at /subgraphs/<chainId> (PathSubgraphs).
	Subgraphs map[uint64]QueryAPI
	// Streams serves the streamed reads' streams (stream.go): SSE on
	// their paths, WebSocket at PathStream. Off, nothing of the API
	// changes. StreamHeartbeat is a stream's longest silence;
	// StreamsPerClient and StreamsMax bound the streams followed at once.
	Streams          bool
	StreamHeartbeat  time.Duration
	StreamsPerClient int
	StreamsMax       int
	// Orders, if set, is the signed-order book served at /clamm/orders
	// and beside it (orders.go); nil: those routes are 404.
	Orders OrderBook
	// extra endpoints beyond the API's, for tests that show an operation
	// is one table entry (export_test.go).
	extra []endpoint
}

// Server is the gateway's http.Handler.
type Server struct {
	opts      Options
	chains    map[uint64]bool     // configured chains, asked once: true when served
	endpoints []endpoint          // the API: apiEndpoints, and a test's own
	swappers  map[uint64][]string // the service's swapperIds by chain, sorted
	responses *cache.Cache[entry]
	handler   http.Handler
	limiter   *rateLimiter // nil: no rate limit
	ready     *service.ReadinessCache
	// sharedProbed is when /readyz last probed the shared tier (Unix ns).
	sharedProbed atomic.Int64
	fills        *upstream.Admission // bounds the fills running at once
	// direct is the route table (routes.go), each entry with its
	// collectors resolved as the routes are set up; read-only afterwards.
	// unmatched are the collectors of routeUnmatched, which every request
	// starts with.
	direct    []route
	unmatched *metrics.Route
	// streams is the streams' hub (nil: streams off); streamOpeners the
	// streamed routes' parsers by path, for WebSocket subscriptions.
	streams       *streamHub
	streamOpeners map[string]func(*Server, *http.Request) (streamSpec, error)
}

// entry is a cached response: encoded bytes plus what the headers need, so a
// hit does no encoding at all.
type entry struct {
	body        []byte
	blockHeader []string // X-Subgraph-Block, built once at fill time
	// ref is the block the answer is true at; blockNumber, blockHash and
	// blockTime its X-Block-* header values (pinned.go).
	ref                               block.Ref
	blockNumber, blockHash, blockTime []string
	contentLength                     []string // so net/http writes the body as is, not chunked
	etag                              []string // strong validator: hash of the body
	// gz is the body gzipped once at fill time (nil: under compressMin),
	// with its own length and validator, for clients that accept gzip.
	gz       []byte
	gzLength []string
	gzEtag   []string
	// brief: a degraded answer (pinned.go's degraded), kept briefly.
	brief bool
}

// entryOverhead approximates an entry's bookkeeping beyond its body (key,
// go-cache item, list element, map slot), so MaxBytes bounds real memory.
const entryOverhead = 256

// New validates opts and builds the server.
func New(opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	s := &Server{
		opts:      opts,
		chains:    map[uint64]bool{},
		swappers:  map[uint64][]string{},
		endpoints: append(append([]endpoint{}, apiEndpoints...), opts.extra...),
	}
	copts := cache.Options{
		MaxEntries: opts.CacheMaxEntries, MaxBytes: opts.CacheMaxBytes, FillTimeout: opts.RequestTimeout,
		Size:  func(v any) int64 { e := v.(entry); return int64(len(e.body)+len(e.gz)) + entryOverhead },
		Brief: func(v any) (time.Duration, bool) { return opts.PrepareTTL, v.(entry).brief },
		OnRefreshError: func(key string, err error) {
			opts.Logger.Warn("background refresh failed; serving stale", "key", key, "error", opts.Secrets.Text(err.Error()))
		},
	}
	if opts.Shared != nil {
		copts.Shared, copts.Codec = opts.Shared, entryCodec{}
		if opts.Metrics != nil {
			opts.Metrics.SharedCache(s.sharedStats)
		}
	}
	s.responses = cache.New[entry](copts)
	for _, id := range opts.Service.ChainIDs() {
		s.chains[id] = true
		s.swappers[id] = opts.Service.Swappers(id)
	}
	for _, id := range opts.Service.UnservedChainIDs() {
		s.chains[id] = false
	}
	s.fills = upstream.NewAdmission(opts.MaxFills)
	if err := s.startStreams(); err != nil {
		return nil, err
	}
	s.ready = service.NewReadinessCache(opts.Service, opts.ReadyTTL, opts.RequestTimeout)
	if opts.RateLimit > 0 {
		s.limiter = newRateLimiter(opts.RateLimit, opts.RateBurst, opts.TrustForwardedFor)
	}
	s.handler = s.middleware(s.routes())
	return s, nil
}

// validate refuses options a server cannot run with, naming what is
// wrong, and fills the defaults of the optional ones.
func (opts *Options) validate() error {
	if opts.Service == nil {
		return errors.New("gateway: Service is required")
	}
	if opts.Pins == nil {
		return errors.New("gateway: Pins is required")
	}
	if len(opts.Service.ChainIDs())+len(opts.Service.UnservedChainIDs()) == 0 {
		return errors.New("gateway: no chain configured")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Validated configuration supplies these (internal/config); a zero
	// here is a wiring mistake, not a default.
	for name, ok := range map[string]bool{
		"RequestTimeout": opts.RequestTimeout > 0, "StrikesTTL": opts.StrikesTTL > 0,
		"HistoryTTL": opts.HistoryTTL > 0, "PrepareTTL": opts.PrepareTTL > 0,
		"MaxFills": opts.MaxFills > 0, "MaxLagBlocks": opts.MaxLagBlocks > 0,
		"CacheMaxEntries": opts.CacheMaxEntries > 0, "CacheMaxBytes": opts.CacheMaxBytes > 0,
	} {
		if !ok {
			return fmt.Errorf("gateway: %s must be positive", name)
		}
	}
	if opts.ReadyTTL <= 0 {
		opts.ReadyTTL = time.Second
	}
	for _, e := range append(append([]endpoint{}, apiEndpoints...), opts.extra...) {
		if !e.pin.Stated() {
			return fmt.Errorf("gateway: endpoint %s states no pin strategy (package block)", e.path)
		}
		if e.stream == unstatedStream {
			return fmt.Errorf("gateway: endpoint %s states not whether it streams (stream.go)", e.path)
		}
	}
	if opts.Streams && (opts.StreamHeartbeat <= 0 || opts.StreamsPerClient <= 0 || opts.StreamsMax <= 0) {
		return errors.New("gateway: with Streams, StreamHeartbeat, StreamsPerClient and StreamsMax must be positive")
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Drain waits for the response cache's fills and background refreshes
// under way (cache.Drain); call it after the HTTP server has shut down.
func (s *Server) Drain(ctx context.Context) error { return s.responses.Drain(ctx) }

// CacheFills counts response-cache fills (for tests and metrics).
func (s *Server) CacheFills() int64 { return s.responses.Fills() }

// Header values shared by every response: net/http only reads them, so
// one slice serves all, and a hit allocates none.
var (
	jsonContentType = []string{"application/json"}
	xCacheHit       = []string{string(cache.Hit)}
	xCacheMiss      = []string{string(cache.Miss)}
	xCacheStale     = []string{string(cache.Stale)}
	ageValues       = headerValues("", 3600)
	// cacheControl[n] tells clients they may keep an answer n more seconds.
	cacheControl = headerValues("public, max-age=", 3600)
)

// headerValues returns v with v[i] = []string{prefix + i} for i < n, laid
// out in three allocations (v, one array of all the strings, one string of
// all the text) instead of 2n small ones: the garbage collector marks every
// live object on each cycle, and with the two tables built that way the
// idle demo gateway's heap held 15,700 objects after a collection; now 4,200.
func headerValues(prefix string, n int) [][]string {
	var text []byte
	ends := make([]int, n)
	for i := range n {
		text = strconv.AppendInt(append(text, prefix...), int64(i), 10)
		ends[i] = len(text)
	}
	all := string(text)
	strs := make([]string, n)
	v := make([][]string, n)
	start := 0
	for i, end := range ends {
		strs[i] = all[start:end]
		v[i] = strs[i : i+1 : i+1]
		start = end
	}
	return v
}

// serveHit answers a fresh cache hit and reports whether it did. Handlers
// call it before building their fill closure, so a hit allocates neither
// the closure nor a deadline.
func (s *Server) serveHit(w http.ResponseWriter, r *http.Request, key string, p cache.Policy) bool {
	now := exchangeOf(w).start // the clock was read as the request came in
	if now.IsZero() {
		now = time.Now()
	}
	e, age, ok := s.responses.PeekAt(key, now)
	if !ok || age >= p.TTL {
		return false
	}
	s.writeEntry(w, r, e, p, served{cache.Hit, age})
	return true
}

// serveCached answers from the response cache, filling key with fill on a
// miss (stale entries are served while refreshed). Only successful fills are
// stored. The wait for a fill is bounded by the request timeout.
func (s *Server) serveCached(w http.ResponseWriter, r *http.Request, key string, p cache.Policy, fill func(context.Context) (entry, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	bounded := func(ctx context.Context) (entry, error) {
		// Admitted, or 503 OVERLOADED; what the fill's upstream answers
		// charge to the memory budget is held until it is done with them.
		ctx, lease, err := s.fills.Admit(ctx)
		if err != nil {
			return entry{}, err
		}
		defer lease.Release()
		return fill(ctx)
	}
	e, status, age, err := s.responses.Get(ctx, key, p, bounded)
	if err != nil {
		exchangeOf(w).cache = string(status)
		if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
			s.clientClosed(w, err)
			return
		}
		if pe := (*problem.Error)(nil); errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &pe) {
			// The request's deadline, or the fill's it joined (which
			// started earlier, so ends first): a wait on another
			// replica's fill lease ends here too. Never a 500.
			err = problem.New(problem.Timeout, "the request did not complete within the gateway's deadline")
		}
		s.writeError(w, err)
		return
	}
	s.writeEntry(w, r, e, p, served{status, age})
}

// served is how an answer came from the cache: its status and age.
type served struct {
	status cache.Status
	age    time.Duration
}

// connBuffer is net/http's per-connection write buffer (4 KiB): a body this
// long never shares one write with its headers.
const connBuffer = 4 << 10

// writeEntry writes a cached answer with its validators. Cache-Control
// lets a client keep it for what remains of the gateway's own TTL, so a
// client cache never holds an answer longer than the gateway would; an
// If-None-Match naming the current ETag gets 304 without the body.
func (s *Server) writeEntry(w http.ResponseWriter, r *http.Request, e entry, p cache.Policy, how served) {
	status, age := how.status, how.age
	exchangeOf(w).cache = string(status)
	h := w.Header()
	h["Content-Type"] = jsonContentType
	switch status {
	case cache.Hit:
		h["X-Cache"] = xCacheHit
	case cache.Stale:
		h["X-Cache"] = xCacheStale
	default:
		h["X-Cache"] = xCacheMiss
	}
	if sec := int(age / time.Second); sec < len(ageValues) {
		h["Age"] = ageValues[sec]
	} else {
		h["Age"] = []string{strconv.Itoa(sec)}
	}
	left := int((p.TTL - age) / time.Second)
	h["Cache-Control"] = cacheControl[max(0, min(left, len(cacheControl)-1))]
	body, etag, length := e.body, e.etag, e.contentLength
	if e.gz != nil {
		// The representation depends on Accept-Encoding: each has its
		// own bytes, length and ETag, all built at fill time. Added to
		// what is there (CORS's Origin), never in its place: a shared
		// cache must not serve one origin's answer to another.
		h["Vary"] = varyWith(h["Vary"])
		if acceptsGzip(r.Header["Accept-Encoding"]) {
			body, etag, length = e.gz, e.gzEtag, e.gzLength
			h["Content-Encoding"] = gzipEncoding
		}
	}
	inMap := func(name string, v []string) { h[name] = v }
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && etagMatches(inm, etag[0]) {
		entryHeaders(e, etag, inMap)
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = length
	if wc := largeCoalescer(w, r, len(body)); wc != nil {
		writeCoalesced(w, wc, e, etag, body)
		return
	}
	entryHeaders(e, etag, inMap)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if f, ok := exchangeOf(w).ResponseWriter.(http.Flusher); ok && len(body) >= connBuffer {
		// Left to itself net/http copies such a body into its 4 KiB
		// connection buffer behind the headers and writes it in pieces;
		// with the headers flushed first the buffer is empty and the body
		// goes to the socket as is (under load this cut a 6 KB hit's
		// kernel work by a sixth).
		f.Flush()
	}
	_, _ = w.Write(body) // a smaller body shares one write with the headers
}

// entryHeaders gives set the headers an entry fixes: its ETag (of the
// representation chosen) and the block it was read at.
func entryHeaders(e entry, etag []string, set func(name string, v []string)) {
	set("Etag", etag) // the canonical form of ETag
	if e.blockHeader != nil {
		set("X-Subgraph-Block", e.blockHeader)
	}
	if e.blockNumber != nil {
		set("X-Block-Number", e.blockNumber)
		if e.blockHash != nil {
			set("X-Block-Hash", e.blockHash)
		}
		if e.blockTime != nil {
			set("X-Block-Timestamp", e.blockTime)
		}
	}
}

// largeCoalescer is the request's connection when a 200 of n body bytes
// can leave with its header block in one system call (WriteCoalescer):
// a body to send, longer than net/http's connection buffer (one of exactly
// 4 KiB is still copied into it, so its headers would leave alone anyway),
// over HTTP/1 (an HTTP/2 connection's frames are written by its own
// goroutine, not the handler's), through a writer that flushes.
func largeCoalescer(w http.ResponseWriter, r *http.Request, n int) WriteCoalescer {
	if r.Method == http.MethodHead || n <= connBuffer || r.ProtoMajor != 1 {
		return nil
	}
	if _, ok := exchangeOf(w).ResponseWriter.(http.Flusher); !ok {
		return nil
	}
	return coalescerOf(r.Context())
}

// writeCoalesced writes a 200 with e's headers added to the header block
// the connection holds (not to net/http's header map, whose per-answer
// work was a tenth of a hit's CPU) and the body from the stored bytes,
// both in one system call.
func writeCoalesced(w http.ResponseWriter, wc WriteCoalescer, e entry, etag []string, body []byte) {
	wc.HoldNextWrite()
	// Deferred: a panic between the two writes (recovered by the
	// middleware) must not leave the header block held for the next
	// answer's first write to carry.
	defer func() { _ = wc.FlushHeld() }()
	entryHeaders(e, etag, func(name string, v []string) { wc.AddHeader(name, v[0]) })
	w.WriteHeader(http.StatusOK)
	exchangeOf(w).ResponseWriter.(http.Flusher).Flush()
	_, _ = w.Write(body)
}

// etagMatches implements If-None-Match's comparison (weak, RFC 9110
// 13.1.2): "*" or any listed tag equal to ours, W/ prefixes ignored.
func etagMatches(header []string, etag string) bool {
	for _, h := range header {
		for _, t := range strings.Split(h, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == etag {
				return true
			}
		}
	}
	return false
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
