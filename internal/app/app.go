// Package app is the composition root: the one place where configuration,
// transports, upstream clients, the service and the HTTP gateway meet. The
// command, record mode, the demo generator and the tests all build the
// gateway through New, so the wiring is written once and every caller gets
// the same server.
//
// Nothing here serves a request. Below app, the service sees only the
// domain, the clients see only their upstream, and the demo package holds
// only recordings and their replaying transports.
package app

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// The modes a chain can be served in (App.Modes): config's rule
// (config.Chain.ServeMode), and the transports tests and the generator give.
const (
	ModeLive          = config.ModeGraphNode
	ModeDemo          = config.ModeDemo
	ModeTransports    = "transports"
	ModeNotConfigured = config.ModeNone
)

// Options are what New needs. Only Config is required.
type Options struct {
	Config *config.Config
	// Queries are the subgraph documents; nil: the embedded ones.
	Queries queries.Set
	// Getenv reads secrets named in configuration (the 1inch key); nil: none.
	Getenv func(string) string
	// Logger receives the gateway's logs; AccessLog, if set, its access
	// lines at AccessLevel and above (nil: no access log).
	Logger      *slog.Logger
	AccessLog   io.Writer
	AccessLevel slog.Level
	// Metrics, if set, is served at /metrics and counts upstream calls.
	Metrics *metrics.Metrics
	// Version is reported by /healthz: the gateway's semantic version.
	Version string
	// Commit is the revision the binary was built from ("" unknown),
	// reported by /healthz beside Version.
	Commit string
	// Demo serves the embedded recordings on chains that have them and no
	// live upstream URLs.
	Demo bool
	// Transports, by chain id, replace the network of that chain's clients.
	// A chain listed here is wired even without URLs (placeholders are used).
	Transports map[uint64]upstream.Transports
	// MaxBody bounds every upstream answer (0: upstream.DefaultMaxBody).
	MaxBody int64
	// Budget bounds the memory all chains' upstream answers hold at once
	// (nil: one of upstream.DefaultBudget, shared by every chain).
	Budget *upstream.Budget
	// Gateway, if set, adjusts the gateway's options before it is built
	// (tests shorten timeouts or add a rate limit this way).
	Gateway func(*gateway.Options)
	// Index opens the embedded index of a chain configured with an RPC URL
	// and no subgraph URL; nil refuses such a chain.
	Index OpenIndex
}

// App is the assembled service.
type App struct {
	Server  *gateway.Server
	Service *service.Service
	// Pins choose the block each answer is read at (package block).
	Pins *block.Pins
	// Modes says how each configured chain is served (ModeLive, ...).
	Modes map[uint64]string
	// Shared is the cache tier replicas share (nil without a Redis URL).
	Shared *redistier.Tier
	// Indexes are the chains the gateway indexes itself (RunIndexes runs
	// them).
	Indexes map[uint64]Index
	// orders is the signed-order book (nil without one: orders.go).
	orders *book

	// streams and headPoll are CLAMM_STREAMS and CLAMM_HEAD_POLL, for
	// RunFeeds.
	streams  bool
	headPoll time.Duration
	// wsURLs are the chains' WebSocket RPC URLs (CLAMM_CHAIN_<id>_RPC_WS_URL).
	wsURLs map[uint64]string
}

// Close releases what New opened beyond memory: the shared tier's
// connections and the indexes' stores. Call it after the server has
// stopped serving and the indexes have stopped running.
func (a *App) Close() error {
	err := closeIndexes(a.Indexes)
	err = errors.Join(err, a.orders.Close())
	if a.Shared != nil {
		err = errors.Join(err, a.Shared.Close())
	}
	return err
}

// New builds every chain's clients, the service over them, and the
// gateway over the service. Nothing is dialled: clients connect on first use.
func New(o Options) (*App, error) {
	if o.Config == nil {
		return nil, errors.New("app: Config is required")
	}
	w, err := newService(o)
	if err != nil {
		return nil, err
	}
	a := &App{Service: w.svc, Pins: w.pins, Modes: w.modes, Indexes: w.indexes,
		streams: o.Config.Streams, headPoll: o.Config.HeadPoll.D(), wsURLs: map[uint64]string{}}
	for id, ch := range o.Config.Chains {
		if ch.RPCWSURL != "" {
			a.wsURLs[id] = ch.RPCWSURL
		}
	}
	var shared gateway.SharedTier // stays a nil interface without Redis
	if redisURL := o.Config.RedisURL; redisURL != "" {
		// Connected lazily: a Redis down at start is a degraded tier, not
		// a failure to start.
		if a.Shared, err = redistier.New(redistier.Options{URL: redisURL, Prefix: o.Config.RedisPrefix, OpTimeout: o.Config.RedisTimeout.D()}); err != nil {
			_ = a.Close()
			return nil, err
		}
		shared = a.Shared
	}
	a.orders = newBook(o.Config, w)
	if a.Server, err = newGateway(o, w, shared, a.orders); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// wired is what newService builds: the service over every chain, the
// pins over the connected ones, how each is served, and the indexes of
// those the gateway indexes itself.
type wired struct {
	svc     *service.Service
	pins    *block.Pins
	modes   map[uint64]string
	indexes map[uint64]Index
	ups     map[uint64]*vocab.Upstreams
}

// newService connects each chain: through the given transports, live when
// both URLs are set, through its own index when only the RPC URL is (or
// the subgraph URL is `embedded`), from the embedded demo recordings when
// the chain has some (and the demo is on), otherwise with no clients (its
// requests answer 503 UPSTREAM_NOT_CONFIGURED). The pins read the
// connected chains.
func newService(o Options) (w wired, err error) {
	cfg := o.Config
	w = wired{modes: map[uint64]string{}, indexes: map[uint64]Index{}}
	defer func() {
		if err != nil {
			_ = closeIndexes(w.indexes)
			w = wired{}
		}
	}()
	ups := map[uint64]*vocab.Upstreams{}
	sources := map[uint64]block.Sources{}
	uo := upstreamOptions(o)
	for _, id := range cfg.ChainIDs() {
		ch, tr, mode, err := w.route(o, cfg.Chains[id])
		if err != nil {
			return w, err
		}
		w.modes[id] = mode
		if mode == ModeNotConfigured {
			ups[id] = &vocab.Upstreams{Config: ch, Mode: mode}
			continue
		}
		u, src, err := connect(ch, tr, connectOptions{
			UpstreamTimeout: cfg.UpstreamTimeout.D(), ImmutablesTTL: cfg.ImmutablesTTL.D(),
			Queries: o.Queries, Getenv: o.Getenv, Upstream: uo,
		})
		if err != nil {
			return w, err
		}
		if idx := w.indexes[id]; idx != nil {
			u.Indexing = indexingOf(idx, Secrets(cfg))
		}
		u.Mode = mode
		if mode == ModeTransports {
			// Given transports stand for a Graph Node and an RPC node
			// (tests, record mode): readiness names the mode they stand for.
			u.Mode = ModeLive
		}
		ups[id], sources[id] = u, src
	}
	if w.pins, err = block.New(sources, headAges(cfg)); err != nil {
		return w, err
	}
	w.feedIndexes()
	w.svc, w.ups = service.New(ups), ups
	w.readHeads(cfg.HeadPoll.D(), cfg.IndexPoll.D())
	if o.Logger != nil {
		w.svc.LogTo(o.Logger)
	}
	return w, nil
}

// route decides how a chain is served (config.Chain.ServeMode: a chain
// with half of a mode's settings stops the start naming the rest) and
// gives the chain as its clients see it with the transports that replace
// the network (opening its index when the gateway indexes it).
func (w *wired) route(o Options, ch *config.Chain) (*config.Chain, upstream.Transports, string, error) {
	id := ch.ID
	if tr, given := o.Transports[id]; given {
		if ch.SubgraphURL == "" || ch.RPCURL == "" {
			c := *ch
			c.SubgraphURL, c.RPCURL = demo.SubgraphURL(id), demo.RPCURL(id)
			ch = &c
		}
		return ch, tr, ModeTransports, nil
	}
	mode, err := ch.ServeMode(o.Demo && slices.Contains(demo.Chains(), id))
	if err != nil {
		return nil, upstream.Transports{}, "", err
	}
	switch mode {
	case ModeLive:
		return ch, upstream.Transports{}, mode, nil
	case ModeIndexed:
		c, tr, idx, err := openIndexed(o, ch)
		if err != nil {
			return nil, tr, "", err
		}
		w.indexes[id] = idx
		return c, tr, mode, nil
	case ModeDemo:
		r, err := demo.Transports(id)
		if err != nil {
			return nil, upstream.Transports{}, "", fmt.Errorf("demo chain %d: %w", id, err)
		}
		c := *ch
		c.SubgraphURL, c.RPCURL = demo.SubgraphURL(id), demo.RPCURL(id)
		return &c, upstream.Transports{Subgraph: r.Subgraph, RPC: r.RPC, Quote: r.Quote}, mode, nil
	}
	return ch, upstream.Transports{}, mode, nil
}

// upstreamOptions are the bounds every chain's upstream transports share.
func upstreamOptions(o Options) upstream.Options {
	uo := upstream.Options{MaxBody: o.MaxBody, Budget: o.Budget, MaxConnsPerHost: o.Config.MaxFills, Metrics: o.Metrics}
	if uo.MaxBody <= 0 {
		uo.MaxBody = upstream.DefaultMaxBody
	}
	if uo.Budget == nil {
		uo.Budget = upstream.NewBudget(upstream.DefaultBudget)
	}
	return uo
}

// headAges are how old a subgraph head an IndexedHead miss (strikes
// chains, quotes) may pin its chain read to without asking `_meta` first:
// half the answer's TTL (a hit of it is then at most one and a half TTLs
// behind the head), refreshed in the background past
// block.DefaultHeadFresh, the refresh cut at the upstream timeout.
func headAges(cfg *config.Config) block.HeadAges {
	return block.HeadAges{Fresh: block.DefaultHeadFresh, Strikes: cfg.StrikesTTL.D() / 2, Quotes: cfg.PrepareTTL.D() / 2,
		RefreshTimeout: cfg.UpstreamTimeout.D()}
}

// newGateway is the HTTP face of the wired service, tuned by the
// configuration, with shared (may be nil) as its cache's second tier and
// the indexes' query APIs.
func newGateway(o Options, w wired, shared gateway.SharedTier, book *book) (*gateway.Server, error) {
	cfg := o.Config
	apis, err := queryAPIs(w.indexes, cfg.IndexMaxQueries, o.Metrics)
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{
		Service:           w.svc,
		Pins:              w.pins,
		AccessLog:         o.AccessLog,
		AccessLevel:       o.AccessLevel,
		Logger:            o.Logger,
		Secrets:           Secrets(cfg),
		Hints:             map[*problem.Code]string{problem.NotRecorded: demo.Holds() + "; " + config.LiveUpstreamsHint(demo.Chains()...), problem.UpstreamNotConfigured: config.LiveUpstreamsHint()},
		ServeHint:         func(id uint64) string { return config.LiveUpstreamsHint(id) },
		RequestTimeout:    cfg.RequestTimeout.D(),
		StrikesTTL:        cfg.StrikesTTL.D(),
		HistoryTTL:        cfg.HistoryTTL.D(),
		PrepareTTL:        cfg.PrepareTTL.D(),
		CacheMaxEntries:   cfg.CacheMaxEntries,
		CacheMaxBytes:     cfg.CacheMaxBytes,
		StaleGrace:        cfg.StaleGrace.D(),
		RateLimit:         cfg.RateLimit,
		RateBurst:         cfg.RateBurst,
		TrustForwardedFor: cfg.TrustForwardedFor,
		MaxFills:          cfg.MaxFills,
		CORSOrigins:       cfg.CORSOrigins,
		MaxLagBlocks:      cfg.MaxLagBlocks,
		Version:           o.Version,
		Commit:            o.Commit,
		Metrics:           o.Metrics,
		Shared:            shared,
		Subgraphs:         apis,
		Streams:           cfg.Streams,
		StreamHeartbeat:   cfg.StreamHeartbeat.D(),
		StreamsPerClient:  cfg.StreamsPerClient,
		StreamsMax:        cfg.StreamsMax,
	}
	if book != nil { // a nil *Orders in the interface would not read as none
		opts.Orders = book
	}
	holds := map[string]string{} // filled below, before any request
	opts.RouteHint = func(route string, c *problem.Code) string {
		if h := holds[route]; c == problem.NotRecorded && h != "" {
			return h + "; " + config.LiveUpstreamsHint(demo.Chains()...)
		}
		return ""
	}
	if o.Gateway != nil {
		o.Gateway(&opts)
	}
	srv, err := gateway.New(opts)
	if err != nil {
		return nil, err
	}
	for _, op := range srv.Operations() {
		holds[op.Path] = demo.HoldsFor(demo.Route{Path: op.Path, Params: op.Params, Optional: op.Optional})
	}
	return srv, nil
}

// Secrets is the redactor of every configured upstream URL (package
// secret): the gateway's logs, the embedded indexer's and readiness's
// indexing errors go through it.
func Secrets(cfg *config.Config) *secret.Redactor {
	urls := []string{cfg.RedisURL, cfg.OrdersDatabaseURL}
	for _, ch := range cfg.Chains {
		urls = append(urls, ch.SubgraphURL, ch.RPCURL, ch.RPCWSURL)
	}
	return secret.NewRedactor(urls...)
}
