package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// runRecord is `clamm-gateway record`: it runs requests against the live
// upstreams of every chain whose URLs are configured and writes fixtures in
// the formats the tests and the demo replay (dir/<chainId>/subgraph.json,
// quote.json, rpc.json), with no request headers and no subgraph or RPC URL
// in them: that is where keys live.
//
//	CLAMM_CHAIN_42161_SUBGRAPH_URL=… CLAMM_CHAIN_42161_RPC_URL=… \
//	  go run ./cmd/clamm-gateway record -out /tmp/rec '/clamm/strikes-chain?…'
//
// With no paths it records the demo's requests.
func runRecord(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("clamm-gateway record", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "recordings", "directory to write <chainId>/ fixtures into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	live := map[uint64]upstream.Transports{} // zero transports: the network
	for _, id := range cfg.ChainIDs() {
		if ch := cfg.Chains[id]; ch.Live() {
			live[id] = upstream.Transports{}
		}
	}
	if len(live) == 0 {
		return errors.New("record: no chain has live upstreams; set CLAMM_CHAIN_<id>_SUBGRAPH_URL and CLAMM_CHAIN_<id>_RPC_URL")
	}
	paths := fs.Args()
	if len(paths) == 0 {
		for _, r := range demo.Requests {
			paths = append(paths, r.Path)
		}
	}
	recorders, save, err := replay.RecordChains(*out, live, demo.SubgraphURL)
	if err != nil {
		return err
	}
	err = app.Record(app.RecordOptions{Config: cfg, Chains: recorders, Getenv: getenv, Paths: paths, Check: func(path string, status int) error {
		if status >= 500 {
			return fmt.Errorf("%s answered %d: an upstream failure is not worth recording", path, status)
		}
		return nil
	}})
	if err != nil {
		return err
	}
	if err := save(); err != nil {
		return err
	}
	for _, id := range cfg.ChainIDs() {
		if _, ok := live[id]; ok {
			fmt.Fprintf(stdout, "recorded chain %d (%s) into %s/%d\n", id, secret.URL(cfg.Chains[id].SubgraphURL), *out, id)
		}
	}
	return nil
}
