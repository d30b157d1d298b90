// Command generate rewrites the demo's recordings from its scenarios: run it
// from internal/demo (go generate ./internal/demo). It loads the demo's
// scenarios (demo.Scenarios, in testdata/scenarios) into the fake upstreams,
// runs the demo's requests through the real gateway (app.Record) with
// recorders in front of them, and writes recordings/<chainId>/: the RPC and
// 1inch cassettes a live record mode writes, and the subgraph's entity store
// (store.json), which the demo serves with the Graph Node emulator: what the
// subgraph's compiled mappings (subgraph/build, run on wazero by
// internal/graphnode/mapping) write for the logs of the scenarios' histories
// (internal/testenv/scenario). The fakes live here, in the
// generator, and never in the served binary.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

func main() {
	if err := generate(filepath.Join("..", "..", "testdata", "scenarios"), "recordings"); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// generate writes the demo recordings for the demo's scenarios in
// scenarioDir into dir (dir/<chainId>/...).
func generate(scenarioDir, dir string) error {
	files := make([]string, len(demo.Scenarios))
	for i, f := range demo.Scenarios {
		files[i] = filepath.Join(scenarioDir, f)
	}
	scs, err := scenario.Load(files...)
	if err != nil {
		return err
	}
	byChain := map[uint64][]*scenario.Scenario{}
	for _, s := range scs {
		byChain[s.ChainID] = append(byChain[s.ChainID], s)
	}
	cfg := config.Default()
	chains := map[uint64]upstream.Transports{}
	fakes := map[uint64]*scenario.Fakes{}
	for id, scs := range byChain {
		if cfg.Chains[id] == nil {
			return fmt.Errorf("scenario chain %d is not in the default config", id)
		}
		fakes[id] = scenario.NewFakesForGenerator(scs...)
		chains[id] = fakes[id].Transports()
	}
	recorders, save, err := replay.RecordChains(dir, chains, demo.SubgraphURL)
	if err != nil {
		return err
	}
	paths, err := recorded(cfg)
	if err != nil {
		return err
	}
	err = app.Record(app.RecordOptions{Config: cfg, Chains: recorders, Paths: paths, Check: check})
	if err != nil {
		return err
	}
	if err := save(); err != nil {
		return err
	}
	for id, f := range fakes {
		if err := saveStore(filepath.Join(dir, fmt.Sprint(id)), f); err != nil {
			return err
		}
	}
	return nil
}

// recorded are the paths to record: the demo's requests and the sweep
// over the routes of the gateway's endpoint table.
func recorded(cfg *config.Config) ([]string, error) {
	a, err := app.New(app.Options{Config: cfg})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return demo.Recorded(Routes(a.Server.Operations()))
}

// Routes are the endpoint table's operations as the sweep takes them:
// the cached reads; the order book's routes are left out, as the demo
// keeps no book (docs/orders.md).
func Routes(ops []gateway.Operation) []demo.Route {
	out := make([]demo.Route, 0, len(ops))
	for _, op := range ops {
		if !op.Uncached {
			out = append(out, demo.Route{Path: op.Path, Params: op.Params, Optional: op.Optional})
		}
	}
	return out
}

// saveStore writes the subgraph's store in place of the recorded GraphQL
// exchanges: the emulator answers any query from the store, so the
// exchanges would only be a second, partial copy of it.
func saveStore(dir string, f *scenario.Fakes) error {
	if err := os.Remove(filepath.Join(dir, "subgraph.json")); err != nil && !os.IsNotExist(err) {
		return err
	}
	out, err := os.Create(filepath.Join(dir, demo.StoreFile))
	if err != nil {
		return err
	}
	if err := f.Subgraph.Store.Save(out); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// check holds each demo request to its stated status; no recorded request
// may fail with a 5xx.
func check(path string, status int) error {
	for _, r := range demo.Requests {
		if r.Path == path && status != r.Status() {
			return fmt.Errorf("%s: status %d, want %d", r.Name, status, r.Status())
		}
	}
	if status >= 500 {
		return fmt.Errorf("%s: status %d", path, status)
	}
	return nil
}
