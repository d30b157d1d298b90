package mapping

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"gopkg.in/yaml.v2"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Manifest is one network's built manifest: its static data sources, with
// their addresses and start blocks, and its templates.
type Manifest struct {
	Network   string
	ChainID   uint64
	Sources   []*DataSource
	Templates map[string]*DataSource
}

// DataSource is one data source or template of a built manifest: its
// compiled mapping, its ABIs and which handler each event topic runs, as
// Graph Node routes a log. A template has no Address.
type DataSource struct {
	Name       string
	Address    common.Address
	StartBlock uint64
	Wasm       string             // the compiled mapping's path in the build
	ABI        string             // source.abi: the events' ABI
	ABIs       map[string]abi.ABI // mapping.abis: what ethereum.call may bind
	Handlers   map[common.Hash]EventHandler
}

// EventHandler is one eventHandlers entry with the ABI event it decodes.
type EventHandler struct {
	Handler string
	Event   abi.Event
	Receipt bool // `receipt: true`: Graph Node passes the transaction receipt
}

// Source returns the static data source or template called name.
func (m *Manifest) Source(name string) (*DataSource, bool) {
	for _, ds := range m.Sources {
		if ds.Name == name {
			return ds, true
		}
	}
	ds, ok := m.Templates[name]
	return ds, ok
}

// ManifestPath is where the build keeps a network's manifest:
// subgraph.yaml for arbitrum-one (the manifest `graph build` reads by
// default), <network>/subgraph.yaml for the others (package.json's build
// script writes them there).
func ManifestPath(network string) string {
	if network == "arbitrum-one" {
		return "build/subgraph.yaml"
	}
	return "build/" + network + "/subgraph.yaml"
}

// yamlManifest is the part of a built manifest the indexer reads.
type yamlManifest struct {
	DataSources []yamlSource `yaml:"dataSources"`
	Templates   []yamlSource `yaml:"templates"`
}

type yamlSource struct {
	Name    string `yaml:"name"`
	Network string `yaml:"network"`
	Source  struct {
		Address    string `yaml:"address"`
		ABI        string `yaml:"abi"`
		StartBlock uint64 `yaml:"startBlock"`
	} `yaml:"source"`
	Mapping struct {
		File string `yaml:"file"`
		ABIs []struct {
			Name string `yaml:"name"`
			File string `yaml:"file"`
		} `yaml:"abis"`
		EventHandlers []struct {
			Event   string `yaml:"event"`
			Handler string `yaml:"handler"`
			Receipt bool   `yaml:"receipt"`
		} `yaml:"eventHandlers"`
	} `yaml:"mapping"`
}

// manifests caches each network's parsed manifest: the build is embedded
// and never changes while the process runs.
var manifests sync.Map // network -> *Manifest

// Network returns the embedded build's manifest of a Graph Node network
// (a key of subgraph/networks.json).
func Network(network string) (*Manifest, error) {
	if m, ok := manifests.Load(network); ok {
		return m.(*Manifest), nil
	}
	m, err := LoadManifest(subgraph.Build, ManifestPath(network))
	if err != nil {
		return nil, err
	}
	if m.ChainID, err = chainOf(network); err != nil {
		return nil, err
	}
	got, _ := manifests.LoadOrStore(network, m)
	return got.(*Manifest), nil
}

// ForChain returns the manifest of the network subgraph/networks.json
// gives chain id.
func ForChain(chainID uint64) (*Manifest, error) {
	networks, err := registry()
	if err != nil {
		return nil, err
	}
	for name, n := range networks {
		if n.ChainID == chainID {
			return Network(name)
		}
	}
	return nil, fmt.Errorf("subgraph/networks.json has no network of chain %d: name what to index with CLAMM_CHAIN_%d_INDEX_SOURCES=<data source>:<0x address>@<start block> (a local chain or a fork: docs/configuration.md)", chainID, chainID)
}

type registryNetwork struct {
	ChainID uint64 `json:"chainId"`
}

func registry() (map[string]registryNetwork, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(subgraph.Networks, &all); err != nil {
		return nil, fmt.Errorf("subgraph/networks.json: %w", err)
	}
	out := map[string]registryNetwork{}
	for name, raw := range all {
		var n registryNetwork
		if strings.HasPrefix(name, "_") || json.Unmarshal(raw, &n) != nil || n.ChainID == 0 {
			continue
		}
		out[name] = n
	}
	return out, nil
}

func chainOf(network string) (uint64, error) {
	networks, err := registry()
	if err != nil {
		return 0, err
	}
	if n, ok := networks[network]; ok {
		return n.ChainID, nil
	}
	return 0, fmt.Errorf("subgraph/networks.json has no network %s", network)
}

// LoadManifest reads a built manifest from fsys: the paths it names
// (mappings, ABIs) are relative to its folder, as graph build writes them.
func LoadManifest(fsys fs.FS, file string) (*Manifest, error) {
	raw, err := fs.ReadFile(fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the subgraph build has no %s: build the subgraph (npm run --prefix subgraph build)", file)
	}
	if err != nil {
		return nil, err
	}
	var y yamlManifest
	if err := yaml.Unmarshal(raw, &y); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	m := &Manifest{Templates: map[string]*DataSource{}}
	abis := abiCache{fsys: fsys, dir: path.Dir(file), parsed: map[string]abi.ABI{}}
	for i, ys := range append(append([]yamlSource{}, y.DataSources...), y.Templates...) {
		ds, err := ys.dataSource(&abis, path.Dir(file))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if m.Network == "" {
			m.Network = ys.Network
		}
		if i < len(y.DataSources) {
			if ds.Address == (common.Address{}) {
				return nil, fmt.Errorf("%s: data source %s has no address", file, ds.Name)
			}
			m.Sources = append(m.Sources, ds)
		} else {
			m.Templates[ds.Name] = ds
		}
	}
	return m, nil
}

func (ys yamlSource) dataSource(abis *abiCache, dir string) (*DataSource, error) {
	ds := &DataSource{Name: ys.Name, StartBlock: ys.Source.StartBlock, ABI: ys.Source.ABI, ABIs: map[string]abi.ABI{},
		Handlers: map[common.Hash]EventHandler{}, Wasm: path.Join(dir, ys.Mapping.File)}
	if a := ys.Source.Address; a != "" {
		if !common.IsHexAddress(a) {
			return nil, fmt.Errorf("data source %s: address %q", ys.Name, a)
		}
		ds.Address = common.HexToAddress(a)
	}
	for _, a := range ys.Mapping.ABIs {
		parsed, err := abis.load(a.File)
		if err != nil {
			return nil, fmt.Errorf("data source %s: %w", ys.Name, err)
		}
		ds.ABIs[a.Name] = parsed
	}
	events, ok := ds.ABIs[ds.ABI]
	if !ok || ys.Mapping.File == "" {
		return nil, fmt.Errorf("data source %s: no mapping file or no ABI %s among its abis", ys.Name, ds.ABI)
	}
	for _, eh := range ys.Mapping.EventHandlers {
		plain := strings.ReplaceAll(eh.Event, "indexed ", "")
		found := false
		for _, ev := range events.Events {
			if ev.Sig == plain {
				ds.Handlers[ev.ID] = EventHandler{Handler: eh.Handler, Event: ev, Receipt: eh.Receipt}
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("data source %s: event %s is not in ABI %s", ys.Name, eh.Event, ds.ABI)
		}
	}
	return ds, nil
}

// abiCache parses each ABI file of a build once.
type abiCache struct {
	fsys   fs.FS
	dir    string
	parsed map[string]abi.ABI
}

func (c *abiCache) load(file string) (abi.ABI, error) {
	p := path.Join(c.dir, file)
	if a, ok := c.parsed[p]; ok {
		return a, nil
	}
	raw, err := fs.ReadFile(c.fsys, p)
	if err != nil {
		return abi.ABI{}, err
	}
	a, err := abi.JSON(strings.NewReader(string(raw)))
	if err != nil {
		return abi.ABI{}, fmt.Errorf("%s: %w", p, err)
	}
	c.parsed[p] = a
	return a, nil
}

// ABI returns one of the subgraph's ABIs (subgraph/abis) by name.
func ABI(name string) (abi.ABI, error) {
	raw, err := fs.ReadFile(subgraph.ABIs, "abis/"+name+".json")
	if err != nil {
		return abi.ABI{}, fmt.Errorf("no ABI %s in subgraph/abis", name)
	}
	return abi.JSON(strings.NewReader(string(raw)))
}
