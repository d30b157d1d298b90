package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// RecordOptions are what Record needs.
type RecordOptions struct {
	Config *config.Config
	// Chains are the transports to record through, by chain id: recorders
	// (replay.RecordChains) in front of the upstreams.
	Chains map[uint64]upstream.Transports
	// Getenv reads the 1inch key, if any (nil: none).
	Getenv func(string) string
	// Paths are the requests to run.
	Paths []string
	// Check decides whether an answer's status is acceptable.
	Check func(path string, status int) error
}

// Record runs each path through the real gateway over the given chains'
// transports, so that recorders in front of them see what a live gateway
// asks. Each path runs twice, on two gateways sharing one service and its pins: once
// with every cache cold and once with the market immutables warm, so both
// RPC paths a live gateway takes are recorded.
func Record(ro RecordOptions) error {
	cfg, getenv, paths, check := ro.Config, ro.Getenv, ro.Paths, ro.Check
	recorders := ro.Chains
	c := *cfg
	c.UpstreamTimeout = config.Duration(20 * time.Second) // a slow live upstream is still worth recording
	o := Options{Config: &c, Getenv: getenv, Transports: recorders, Logger: slog.New(slog.DiscardHandler)}
	w, err := newService(o)
	if err != nil {
		return err
	}
	defer closeIndexes(w.indexes)
	for pass := 0; pass < 2; pass++ {
		gw, err := newGateway(o, w, nil, nil) // recordings come from the upstreams, never a shared cache
		if err != nil {
			return err
		}
		for _, p := range paths {
			u, err := url.ParseRequestURI(p)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			g := gw
			if pass == 1 {
				// each path cold as well: the service's own memories (a
				// closed candles window, kept whatever block asked it) kept
				// a pinned request from its upstreams when recorded warm,
				// and a replay asking it first found nothing recorded
				if g, err = coldGateway(o); err != nil {
					return err
				}
			}
			rec := &answer{header: http.Header{}, status: http.StatusOK}
			g.ServeHTTP(rec, &http.Request{Method: http.MethodGet, URL: u, RequestURI: p, Header: http.Header{},
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "record.invalid", RemoteAddr: "127.0.0.1:1"})
			if err := check(p, rec.status); err != nil {
				return fmt.Errorf("%w: %s", err, rec.body.String())
			}
		}
	}
	return nil
}

// coldGateway is a gateway on a service of its own, remembering nothing.
func coldGateway(o Options) (*gateway.Server, error) {
	w, err := newService(o)
	if err != nil {
		return nil, err
	}
	return newGateway(o, w, nil, nil)
}

// answer keeps what the gateway wrote for one recorded path (net/http's
// recorder lives in a test package, which the served binary must not link).
type answer struct {
	header http.Header
	status int
	body   strings.Builder
}

func (a *answer) Header() http.Header         { return a.header }
func (a *answer) WriteHeader(status int)      { a.status = status }
func (a *answer) Write(b []byte) (int, error) { return a.body.Write(b) }
