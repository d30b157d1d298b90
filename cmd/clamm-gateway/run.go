package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/gctune"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// run builds everything from flags and environment, serves until ctx ends,
// then shuts down within a bound. It never calls os.Exit or log.Fatal.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "record" {
		return runRecord(ctx, args[1:], getenv, stdout, stderr)
	}
	listen, showVersion, err := parseFlags(args, stderr)
	if err != nil || listen == nil {
		return err // nil after -h
	}
	if *showVersion {
		fmt.Fprintln(stdout, versionLine())
		return nil
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	logw := newLogWriter(stderr, 200*time.Millisecond)
	defer logw.Close()
	a, logger, err := build(ctx, cfg, getenv, logw)
	if err != nil {
		return err
	}
	defer a.Close() // after the server below has shut down and the indexes have stopped
	indexCtx, stopIndexes := context.WithCancel(context.WithoutCancel(ctx))
	waitIndexes := a.RunIndexes(indexCtx)
	// With streams on, each chain's head feed (app.RunFeeds); off, nothing.
	waitFeeds := a.RunFeeds(indexCtx)
	defer func() { stopIndexes(); waitIndexes(); waitFeeds() }()
	rawLn, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	// net/http's own answers (unparseable request, HTTP version, Host,
	// oversized headers) leave in the JSON error shape too.
	var ln net.Listener = jsonErrorListener{rawLn, a.Server.LogRefused}
	handler, stopTracing, err := withTracing(ctx, getenv, a.Server, logger)
	if err != nil {
		ln.Close()
		return err
	}
	// The last spans are flushed after the server has shut down, within
	// the shutdown's bound (serveUntil); on the early returns below, now.
	defer stopTracing(expired())
	hs := httpServer(handler, cfg.RequestTimeout.D())
	hs.RegisterOnShutdown(a.Server.CloseStreams) // a stream is never idle: shutdown ends it
	printBanner(stdout, ln.Addr().String(), a.Modes)
	logStart(logger, cfg, a.Modes, getenv)
	defer nudgeNetpoll(ctx)() // through the shutdown's drain, ended on every return
	if addr := cfg.PprofListen; addr != "" {
		// Operators' profiling endpoint, off by default; bind it to
		// loopback. Bound here, before serving: an address that cannot be
		// bound stops the start with an error naming the variable.
		pln, err := net.Listen("tcp", addr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("CLAMM_PPROF_LISTEN %q: %w", addr, err)
		}
		defer pln.Close()
		go func() { _ = http.Serve(pln, pprofMux()) }()
	}
	return serveUntil(ctx, hs, ln, func(ctx context.Context) error {
		err := a.Server.Drain(ctx)
		stopTracing(ctx)
		return err
	}, logger)
}

// nudgeNetpoll starts gctune.NudgeNetpoll, which keeps a process with one P
// polling the network while the collector sweeps (else unpolled for up to
// 10 ms after every collection), and returns what stops it. Its context
// outlives ctx, so it goes on through the shutdown's drain.
func nudgeNetpoll(ctx context.Context) context.CancelFunc {
	nudgeCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	go gctune.NudgeNetpoll(nudgeCtx)
	return stop
}

// parseFlags reads the serving flags; -h prints the usage, naming the
// record subcommand, and answers nil flags with no error (asked for, not
// a mistake).
func parseFlags(args []string, stderr io.Writer) (listen *string, showVersion *bool, err error) {
	fs := flag.NewFlagSet("clamm-gateway", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen = fs.String("listen", "", "listen address (default from CLAMM_LISTEN or :8080)")
	showVersion = fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clamm-gateway [-listen addr] [-version]\n       clamm-gateway record [-out dir]   (record live upstreams as fixtures: docs/development.md)\nflags:")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "settings: CLAMM_ environment variables (docs/configuration.md)")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return listen, showVersion, nil
}

// expired is a context already done: what is left to flush goes if it
// can at once, and nothing waits on a collector.
func expired() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// build assembles the gateway from cfg, logging to logw, and checks each
// chain's RPC node: one of another network stops the start; one that
// cannot be reached now is a warning (readiness keeps asking).
func build(ctx context.Context, cfg *config.Config, getenv func(string) string, logw *logWriter) (*app.App, *slog.Logger, error) {
	logger := slog.New(slog.NewJSONHandler(logw, &slog.HandlerOptions{Level: cfg.LogLevel}))
	docs, err := queries.Load(cfg.QueriesDir)
	if err != nil {
		return nil, nil, err
	}
	m := metrics.New()
	m.BuildInfo(version, commit())
	a, err := app.New(app.Options{
		Config: cfg, Queries: docs, Getenv: getenv, Logger: logger, AccessLog: logw, AccessLevel: cfg.LogLevel,
		Metrics: m, Version: version, Commit: commit(), Demo: cfg.Demo, Index: openIndex(cfg, logger),
	})
	if err != nil {
		return nil, nil, err
	}
	checkCtx, cancelCheck := context.WithTimeout(ctx, cfg.UpstreamTimeout.D())
	unreachable, err := a.Service.CheckChainIDs(checkCtx)
	cancelCheck()
	if err != nil {
		_ = a.Close()
		return nil, nil, err
	}
	for id, cerr := range unreachable {
		logger.Warn("could not confirm the rpc node's chain id at start", "chainId", id, "error", secret.Scrub(cerr.Error()))
	}
	// The configured contracts, each asked as its kind, beside the start
	// and again later (a node behind the swappers' deploy block answers no
	// code): a new mismatch is logged once and shown in /readyz.
	recheck := service.DefaultRecheck
	recheck.Timeout = cfg.UpstreamTimeout.D()
	go a.Service.KeepChecking(ctx, logger, recheck)
	// Each chain's subgraph head, read beside binding the listener, so the
	// first strikes-chain miss pins without asking (block.Pins.SeedHeads).
	go func() {
		seedCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.UpstreamTimeout.D())
		defer cancel()
		a.Pins.SeedHeads(seedCtx)
	}()
	return a, logger, nil
}

// logStart tunes the garbage collector, logs how each chain is served and
// warns of CLAMM_ variables in the process's environment that set nothing.
func logStart(logger *slog.Logger, cfg *config.Config, modes map[uint64]string, getenv func(string) string) {
	if t, ok := tuneGC(getenv, cfg.CacheMaxBytes, os.ReadFile); ok {
		logGC(logger, t)
	}
	for _, id := range cfg.ChainIDs() {
		ch := cfg.Chains[id]
		logger.Info("chain", "chainId", id, "mode", modes[id], "subgraph", secret.URL(ch.SubgraphURL), "rpc", secret.URL(ch.RPCURL))
	}
	if cfg.RedisURL != "" {
		logger.Info("shared cache tier", "redis", secret.URL(cfg.RedisURL), "prefix", cfg.RedisPrefix)
	}
	// Names only: a value may be a secret. The names are the process's,
	// kept when getenv (what the configuration was read through) sees them.
	var environ []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); getenv(name) != "" {
			environ = append(environ, kv)
		}
	}
	for _, name := range cfg.UnknownVariables(environ) {
		logger.Warn("a CLAMM_ variable that sets nothing ("+config.UnknownHint(name)+")", "variable", name)
	}
}

// shutdownBound is how long a shutdown may take in all (docs/operations.md):
// in-flight requests, then background refreshes and the last spans.
var shutdownBound = 10 * time.Second

// serveUntil serves on ln until ctx ends, then shuts down within
// shutdownBound, draining the background refreshes and the tracing
// (drain) after the requests.
func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener, drain func(context.Context) error, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownBound)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Background refreshes outlive the requests that started them: let
	// them finish (and give their fleet leases up) before Redis is closed.
	if err := drain(shutdownCtx); err != nil {
		logger.Warn("background refreshes still running at shutdown", "error", err)
	}
	return nil
}

func printBanner(w io.Writer, addr string, modes map[uint64]string) {
	host := addr
	if strings.HasPrefix(addr, "[::]:") || strings.HasPrefix(addr, "0.0.0.0:") {
		host = "localhost:" + addr[strings.LastIndex(addr, ":")+1:]
	}
	fmt.Fprintf(w, "clamm-gateway %s listening on %s\n", version, addr)
	ids := slices.Sorted(maps.Keys(modes))
	for _, id := range ids {
		fmt.Fprintf(w, "chain %d: %s\n", id, modeLine(id, modes[id]))
	}
	fmt.Fprintln(w, "try:")
	if modes[demoChain] != app.ModeDemo {
		// The demo's requests name the demo's markets and users, which a
		// live chain does not hold: start from what every chain answers.
		fmt.Fprintf(w, "  curl 'http://%s/readyz'\n", host)
		for _, id := range ids {
			if m := modes[id]; m == app.ModeLive || m == app.ModeIndexed {
				fmt.Fprintf(w, "  curl 'http://%s/clamm/option-markets?chainId=%d'\n", host, id)
			}
		}
		return
	}
	for _, r := range demo.Requests {
		if r.Status() != http.StatusOK { // a refusal, shown on purpose: say so
			fmt.Fprintf(w, "  curl '%s%s'   # %d, a refusal: %s\n", "http://"+host, r.Path, r.Status(), r.Name)
			continue
		}
		fmt.Fprintf(w, "  curl '%s%s'\n", "http://"+host, r.Path)
	}
}

// demoChain is the chain the embedded demo's requests ask.
const demoChain = 42161

// modeLine says how a chain is served, for the banner: every chain's
// mode is printed, so a chain served otherwise than meant shows at start.
func modeLine(id uint64, mode string) string {
	switch mode {
	case app.ModeDemo:
		return fmt.Sprintf("mode demo: the embedded recordings (no network); to serve live set CLAMM_CHAIN_%d_RPC_URL (an archive node: the gateway indexes it), or with it CLAMM_CHAIN_%d_SUBGRAPH_URL (a Graph Node)", id, id)
	case app.ModeLive:
		return "mode graph-node: live, the subgraph from its Graph Node, the chain from its RPC node"
	case app.ModeIndexed:
		return "mode indexed: live, indexed by the gateway itself from its RPC node (ready once caught up, see /readyz)"
	case app.ModeNotConfigured:
		return fmt.Sprintf("not served (set CLAMM_CHAIN_%d_RPC_URL, an archive node, to serve it indexed by the gateway; docs/configuration.md tells the other modes)", id)
	}
	return "mode " + mode
}

// httpServer bounds what a slow or idle client can hold: headers must
// arrive within 5 s, a request within 10 s, the answer may take the request
// timeout plus 5 s to write, idle keep-alives close after 2 minutes.
func httpServer(h http.Handler, requestTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		// Large hits leave in one write on the listener's connections
		// (gateway.WriteCoalescer).
		ConnContext:  gateway.ConnContext,
		WriteTimeout: requestTimeout + 5*time.Second,
		IdleTimeout:  2 * time.Minute,
		// Above the gateway's own bound, which it answers in the JSON
		// shape (gateway.MaxHeaderBytes); past this net/http answers 431
		// before any handler runs, made JSON by jsonErrorListener.
		MaxHeaderBytes: 4 * gateway.MaxHeaderBytes,
		// OPTIONS * reaches the gateway (a JSON 404) instead of net/http's
		// empty 200.
		DisableGeneralOptionsHandler: true,
	}
}
