// Command generate rewrites the demo's recordings from its scenarios: run it
// from internal/demo (go generate ./internal/demo). It loads each chain's
// scenarios/*.json into the fake upstreams, runs the demo's requests through
// the real gateway (app.Record) with recorders (replay.RecordChains) in front of the fakes, and
// writes recordings/<chainId>/ in the formats a live record mode writes.
// The fakes live here, in the generator, and never in the served binary.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

func main() {
	if err := generate("scenarios", "recordings"); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

// generate writes the demo recordings for every scenario in scenarioDir into
// dir (dir/<chainId>/...), recording the fakes the scenarios describe.
func generate(scenarioDir, dir string) error {
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.json"))
	if err != nil {
		return err
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
	for id, scs := range byChain {
		if cfg.Chains[id] == nil {
			return fmt.Errorf("scenario chain %d is not in the default config", id)
		}
		chains[id] = scenario.NewFakesForGenerator(scs...).Transports()
	}
	recorders, save, err := replay.RecordChains(dir, chains, demo.SubgraphURL)
	if err != nil {
		return err
	}
	err = app.Record(app.RecordOptions{Config: cfg, Chains: recorders, Paths: demo.Recorded(), Check: func(path string, status int) error {
		for _, r := range demo.Requests {
			if r.Path == path && status != r.Status() {
				return fmt.Errorf("%s: status %d, want %d", r.Name, status, r.Status())
			}
		}
		if status >= 500 {
			return fmt.Errorf("%s: status %d", path, status)
		}
		return nil
	}})
	if err != nil {
		return err
	}
	return save()
}
