package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

// Record runs each path through the real gateway with recorders in front
// of each given chain's upstreams (nil transports: the network) and writes
// dir/<chainId>/{subgraph.json, quote.json, rpc.json}, the formats the demo
// and the tests replay. Each path runs twice, on two gateways sharing one
// service: once with every cache cold and once with the market immutables
// warm, so both RPC paths a live gateway takes are recorded. Cassettes
// carry no request headers (API keys travel there) and no subgraph or RPC
// URL (keys travel there too); check decides whether an answer's status is
// acceptable. getenv reads the 1inch key, if any.
func Record(dir string, cfg *config.Config, chains map[uint64]Transports, getenv func(string) string, paths []string, check func(path string, status int) error) error {
	recorders := map[uint64]Transports{}
	var stops []func() error
	orNet := func(rt http.RoundTripper) http.RoundTripper {
		if rt == nil {
			return http.DefaultTransport
		}
		return rt
	}
	for id, tr := range chains {
		out := filepath.Join(dir, fmt.Sprint(id))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"subgraph.json", "quote.json", "rpc.json"} {
			_ = os.Remove(filepath.Join(out, f)) // a failed recording leaves no stale cassette behind
		}
		gql, err := replay.GraphQLRecorder(filepath.Join(out, "subgraph.json"), orNet(tr.Subgraph), demo.SubgraphURL(id))
		if err != nil {
			return err
		}
		quote, err := replay.HTTPRecorder(filepath.Join(out, "quote.json"), orNet(tr.Quote))
		if err != nil {
			return err
		}
		rpcRec := &replay.RPCRecorder{Real: orNet(tr.RPC)}
		rpcOut := filepath.Join(out, "rpc.json")
		stops = append(stops, gql.Stop, quote.Stop, func() error { return rpcRec.Save(rpcOut) })
		recorders[id] = Transports{Subgraph: gql, RPC: rpcRec, Quote: quote}
	}
	c := *cfg
	c.UpstreamTimeout = config.Duration(20 * time.Second) // a slow live upstream is still worth recording
	o := Options{Config: &c, Getenv: getenv, Transports: recorders, Logger: slog.New(slog.DiscardHandler)}
	svc, _, err := newService(o)
	if err != nil {
		return err
	}
	for pass := 0; pass < 2; pass++ {
		gw, err := newGateway(o, svc, nil) // recordings come from the upstreams, never a shared cache
		if err != nil {
			return err
		}
		for _, p := range paths {
			u, err := url.ParseRequestURI(p)
			if err != nil {
				return fmt.Errorf("record %q: %w", p, err)
			}
			rec := &answer{header: http.Header{}, status: http.StatusOK}
			gw.ServeHTTP(rec, &http.Request{Method: http.MethodGet, URL: u, RequestURI: p, Header: http.Header{},
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "record.invalid", RemoteAddr: "127.0.0.1:1"})
			if err := check(p, rec.status); err != nil {
				return fmt.Errorf("%w: %s", err, rec.body.String())
			}
		}
	}
	for _, stop := range stops {
		if err := stop(); err != nil {
			return err
		}
	}
	return nil
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
