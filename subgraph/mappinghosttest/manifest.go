package mappinghosttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// DataSource is one data source or template of the built manifest
// (subgraph/build/subgraph.yaml): its compiled mapping, its ABI and which
// handler each event topic runs, as Graph Node routes a log.
type DataSource struct {
	Name     string
	Wasm     string
	ABI      string   // source.abi: the events' ABI
	ABIs     []string // mapping.abis: what ethereum.call may bind
	Handlers map[common.Hash]EventHandler
}

// EventHandler is one eventHandlers entry with the ABI event it decodes.
type EventHandler struct {
	Handler string
	Event   abi.Event
	Receipt bool // `receipt: true`: Graph Node passes the transaction receipt
}

// LoadDataSource reads one data source or template from the build manifest
// of arbitrum-one (subgraph/build/subgraph.yaml).
func LoadDataSource(name string) (*DataSource, error) {
	return LoadNetworkDataSource("arbitrum-one", name)
}

// BuildManifest is the built manifest of a Graph Node network:
// subgraph/build/subgraph.yaml for arbitrum-one (the manifest `graph build`
// reads by default), subgraph/build/<network>/subgraph.yaml for the others
// (package.json's build script writes them there).
func BuildManifest(network string) string {
	if network == "arbitrum-one" {
		return filepath.Join(Dir(), "build", "subgraph.yaml")
	}
	return filepath.Join(Dir(), "build", network, "subgraph.yaml")
}

// LoadNetworkDataSource reads one data source or template from the build
// manifest of network.
func LoadNetworkDataSource(network, name string) (*DataSource, error) {
	manifest := BuildManifest(network)
	raw, err := os.ReadFile(manifest)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s is missing: %s", manifest, BuildHint)
	}
	if err != nil {
		return nil, err
	}
	var ds *DataSource
	var sigs, handlers []string
	receipts := map[int]bool{} // index of the handler declared with receipt: true
	inEvent := false           // a long event signature folds onto the next lines (YAML plain scalar)
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if inEvent && strings.HasPrefix(line, "            ") {
			sigs[len(sigs)-1] += " " + trimmed
			continue
		}
		inEvent = false
		if strings.HasPrefix(line, "    name: ") {
			if ds != nil {
				break
			}
			if strings.TrimSpace(strings.TrimPrefix(line, "    name: ")) == name {
				ds = &DataSource{Name: name, Handlers: map[common.Hash]EventHandler{}}
			}
			continue
		}
		if ds == nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, "        - name: "):
			ds.ABIs = append(ds.ABIs, strings.TrimPrefix(line, "        - name: "))
		case strings.HasPrefix(line, "      abi: "):
			ds.ABI = strings.TrimPrefix(line, "      abi: ")
		case strings.HasPrefix(trimmed, "file: ") && strings.HasSuffix(trimmed, ".wasm"):
			ds.Wasm = filepath.Join(filepath.Dir(manifest), strings.TrimPrefix(trimmed, "file: "))
		case strings.HasPrefix(trimmed, "- event: "):
			sigs = append(sigs, strings.TrimPrefix(trimmed, "- event: "))
			inEvent = true
		case strings.HasPrefix(trimmed, "handler: "):
			handlers = append(handlers, strings.TrimPrefix(trimmed, "handler: "))
		case trimmed == "receipt: true":
			receipts[len(handlers)-1] = true
		}
	}
	if ds == nil || ds.Wasm == "" || ds.ABI == "" || len(sigs) != len(handlers) {
		return nil, fmt.Errorf("%s names no complete data source or template %s", manifest, name)
	}
	a, err := ABI(ds.ABI)
	if err != nil {
		return nil, err
	}
	for i, sig := range sigs {
		plain := strings.ReplaceAll(sig, "indexed ", "")
		var found bool
		for _, ev := range a.Events {
			if ev.Sig == plain {
				ds.Handlers[ev.ID] = EventHandler{Handler: handlers[i], Event: ev, Receipt: receipts[i]}
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s: event %s is not in ABI %s", name, sig, ds.ABI)
		}
	}
	return ds, nil
}
