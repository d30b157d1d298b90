package demo

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// Upstream is one chain's real transports to record from: the fakes when
// generating the demo, the network in record mode.
type Upstream struct {
	Chain                *config.Chain
	Subgraph, RPC, Quote http.RoundTripper
	Getenv               func(string) string // reads the 1inch key, if any
}

// Generate writes the demo recordings for every scenario into dir
// (recordings/<chainId>/...), recording the fakes the scenarios describe.
func Generate(dir string) error {
	files, err := fs.Glob(scenarios, "scenarios/*.json")
	if err != nil {
		return err
	}
	byChain := map[uint64][]*scenario.Scenario{}
	for _, f := range files {
		raw, err := fs.ReadFile(scenarios, f)
		if err != nil {
			return err
		}
		s, err := scenario.Parse(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		byChain[s.ChainID] = append(byChain[s.ChainID], s)
	}
	cfg := config.Default()
	var ups []Upstream
	for id, scs := range byChain {
		ch := cfg.Chains[id]
		if ch == nil {
			return fmt.Errorf("scenario chain %d is not in the default config", id)
		}
		f := scenario.NewFakes(scs...)
		ups = append(ups, Upstream{Chain: ch, Subgraph: replay.HandlerTransport{Handler: f.Subgraph},
			RPC: replay.HandlerTransport{Handler: f.Node}, Quote: replay.HandlerTransport{Handler: f.OneInch}})
	}
	paths := make([]string, len(Requests))
	for i, r := range Requests {
		paths[i] = r.Path
	}
	return Record(dir, cfg, ups, paths, func(path string, status int) error {
		for _, r := range Requests {
			if r.Path == path && status != r.Status() {
				return fmt.Errorf("%s: status %d, want %d", r.Name, status, r.Status())
			}
		}
		return nil
	})
}

// Record runs each path through the real gateway with recorders in front
// of each chain's upstreams and writes dir/<chainId>/{subgraph.yaml,
// quote.yaml, rpc.json}, the formats the demo and the tests replay. Each
// path runs twice, on two gateways sharing one service: once with every
// cache cold and once with the market immutables warm, so both RPC paths a
// live gateway takes are recorded. Cassettes carry no request headers
// (API keys travel there) and no subgraph or RPC URL (keys travel there
// too); check decides whether an answer's status is acceptable.
func Record(dir string, cfg *config.Config, upstreams []Upstream, paths []string, check func(path string, status int) error) error {
	ups := map[uint64]*service.Upstreams{}
	var stops []func() error
	orNet := func(rt http.RoundTripper) http.RoundTripper {
		if rt == nil {
			return http.DefaultTransport
		}
		return rt
	}
	for _, u := range upstreams {
		id := u.Chain.ID
		u.Subgraph, u.RPC, u.Quote = orNet(u.Subgraph), orNet(u.RPC), orNet(u.Quote)
		out := filepath.Join(dir, fmt.Sprint(id))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"subgraph.yaml", "quote.yaml"} {
			_ = os.Remove(filepath.Join(out, f)) // start from nothing: no stale interaction survives
		}
		gql, err := replay.GraphQLRecorder(filepath.Join(out, "subgraph"), u.Subgraph, SubgraphURL(id))
		if err != nil {
			return err
		}
		quote, err := replay.HTTPRecorder(filepath.Join(out, "quote"), u.Quote)
		if err != nil {
			return err
		}
		rpcRec := &replay.RPCRecorder{Real: u.RPC}
		rpcOut := filepath.Join(out, "rpc.json")
		stops = append(stops, gql.Stop, quote.Stop, func() error { return rpcRec.Save(rpcOut) })
		ch := *u.Chain
		if ch.SubgraphURL == "" {
			ch.SubgraphURL, ch.RPCURL = SubgraphURL(id), RPCURL(id)
		}
		svc, err := service.Connect(&ch, service.ConnectOptions{SubgraphTransport: gql, RPCTransport: rpcRec, QuoteTransport: quote,
			UpstreamTimeout: 20 * time.Second, Getenv: u.Getenv})
		if err != nil {
			return err
		}
		ups[id] = svc
	}
	for _, id := range cfg.ChainIDs() {
		if ups[id] == nil {
			ups[id] = &service.Upstreams{Config: cfg.Chains[id]}
		}
	}
	svc := service.New(ups)
	for pass := 0; pass < 2; pass++ {
		gw, err := gateway.New(gateway.Options{Service: svc, ChainIDs: cfg.ChainIDs(), Swappers: cfg.SwapperIDs(), Logger: slog.New(slog.DiscardHandler), CacheMaxEntries: 100})
		if err != nil {
			return err
		}
		for _, p := range paths {
			rec := httptest.NewRecorder()
			gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, p, nil))
			if err := check(p, rec.Code); err != nil {
				return fmt.Errorf("%w: %s", err, rec.Body.String())
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
