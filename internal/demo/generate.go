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

// Generate writes the recordings for every scenario into dir
// (recordings/<chainId>/...). Each demo request is run twice, on two
// gateways sharing one service: once with every cache cold and once with the
// chain reader's immutables warm, so both RPC paths the live gateway takes
// are recorded.
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
	ups := map[uint64]*service.Upstreams{}
	type recorders struct {
		stops []func() error
		rpc   *replay.RPCRecorder
	}
	recs := map[uint64]recorders{}
	for id, scs := range byChain {
		ch := cfg.Chains[id]
		if ch == nil {
			return fmt.Errorf("scenario chain %d is not in the default config", id)
		}
		fakes := scenario.NewFakes(scs...)
		out := filepath.Join(dir, fmt.Sprint(id))
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, f := range []string{"subgraph.yaml", "quote.yaml"} {
			_ = os.Remove(filepath.Join(out, f)) // start from nothing: no stale interaction survives
		}
		gql, err := replay.GraphQLRecorder(filepath.Join(out, "subgraph"), replay.HandlerTransport{Handler: fakes.Subgraph}, SubgraphURL(id))
		if err != nil {
			return err
		}
		quote, err := replay.HTTPRecorder(filepath.Join(out, "quote"), replay.HandlerTransport{Handler: fakes.OneInch})
		if err != nil {
			return err
		}
		rpcRec := &replay.RPCRecorder{Real: replay.HandlerTransport{Handler: fakes.Node}}
		recs[id] = recorders{stops: []func() error{gql.Stop, quote.Stop}, rpc: rpcRec}
		chCopy := *ch
		chCopy.SubgraphURL, chCopy.RPCURL = SubgraphURL(id), RPCURL(id)
		u, err := service.Connect(&chCopy, service.ConnectOptions{SubgraphTransport: gql, RPCTransport: rpcRec, QuoteTransport: quote, UpstreamTimeout: 10 * time.Second})
		if err != nil {
			return err
		}
		ups[id] = u
	}
	svc := service.New(ups)
	for pass := 0; pass < 2; pass++ {
		gw, err := gateway.New(gateway.Options{Service: svc, ChainIDs: cfg.ChainIDs(), Swappers: cfg.SwapperIDs(), Logger: slog.New(slog.DiscardHandler), CacheMaxEntries: 100})
		if err != nil {
			return err
		}
		for _, r := range Requests {
			rec := httptest.NewRecorder()
			gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, r.Path, nil))
			if rec.Code != r.Status() {
				return fmt.Errorf("%s: status %d, want %d: %s", r.Name, rec.Code, r.Status(), rec.Body.String())
			}
		}
	}
	for id, r := range recs {
		for _, stop := range r.stops {
			if err := stop(); err != nil {
				return err
			}
		}
		if err := r.rpc.Save(filepath.Join(dir, fmt.Sprint(id), "rpc.json")); err != nil {
			return err
		}
	}
	return nil
}
