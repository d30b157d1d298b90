package mapping

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// registryRow is the part of a networks.json row a manifest is written
// from.
type registryRow struct {
	Name       string `json:"name"`
	Address    string `json:"address"`
	StartBlock uint64 `json:"startBlock"`
	Version    int    `json:"version"`
	From       string `json:"from"`
}

type registryEntry struct {
	ChainID          uint64        `json:"chainId"`
	PositionManagers []registryRow `json:"positionManagers"`
	Markets          []registryRow `json:"markets"`
	Handlers         []registryRow `json:"handlers"`
}

// eventsABI is the ABI whose events a registry row's data source decodes:
// its kind's and generation's. Both generations of position manager share
// the 2024 one's whitelist events, and a V3 handler logs the V2 handler's.
func eventsABI(kind string, version int) string {
	switch {
	case kind == "positionManagers":
		return "DopexV2PositionManager"
	case kind == "markets" && version == 1:
		return "DopexV2OptionMarket"
	case kind == "markets":
		return "DopexV2OptionMarketV2"
	case version == 1:
		return "UniswapV3SingleTickLiquidityHandler"
	}
	return "UniswapV3SingleTickLiquidityHandlerV2"
}

// Every network of the registry is served by the embedded build the
// indexer runs: the manifest of its chain id (ForChain, as the indexer
// finds it) names that network, and its static data sources are exactly
// the registry's position managers, markets and handlers, each at its
// address and start block with its kind's ABI, each with evidence; its
// compiled mappings are in the build; and the templates discovery creates
// are there, able to bind every DEX family's slot0.
func TestEveryRegistryNetworkIsServed(t *testing.T) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(subgraph.Networks, &all); err != nil {
		t.Fatal(err)
	}
	served := 0
	for network, raw := range all {
		if strings.HasPrefix(network, "_") {
			continue
		}
		served++
		var reg registryEntry
		if err := json.Unmarshal(raw, &reg); err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		m, err := ForChain(reg.ChainID)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		if m.Network != network || m.ChainID != reg.ChainID {
			t.Errorf("chain %d: manifest of %s (chain %d), want %s", reg.ChainID, m.Network, m.ChainID, network)
		}
		checkSources(t, network, m, reg)
		checkTemplates(t, network, m)
	}
	if served < 5 {
		t.Errorf("%d networks in the registry, want at least Arbitrum, Mantle, Sonic, Base and Blast", served)
	}
}

func checkSources(t *testing.T, network string, m *Manifest, reg registryEntry) {
	t.Helper()
	want := map[string]registryRow{}
	kinds := map[string]string{}
	for kind, rows := range map[string][]registryRow{"positionManagers": reg.PositionManagers, "markets": reg.Markets, "handlers": reg.Handlers} {
		for _, r := range rows {
			if r.From == "" || !common.IsHexAddress(r.Address) {
				t.Errorf("%s %s: address %q, evidence %q", network, r.Name, r.Address, r.From)
			}
			want[r.Name] = r
			kinds[r.Name] = eventsABI(kind, r.Version)
		}
	}
	if len(m.Sources) != len(want) {
		t.Errorf("%s: %d data sources, the registry has %d rows", network, len(m.Sources), len(want))
	}
	for _, ds := range m.Sources {
		r, ok := want[ds.Name]
		switch {
		case !ok:
			t.Errorf("%s: data source %s is no registry row", network, ds.Name)
		case ds.Address != common.HexToAddress(r.Address) || ds.StartBlock != r.StartBlock || ds.ABI != kinds[ds.Name]:
			t.Errorf("%s %s: %s from %d (%s), registry %s from %d (%s)", network, ds.Name, ds.Address.Hex(), ds.StartBlock, ds.ABI, r.Address, r.StartBlock, kinds[ds.Name])
		}
		if _, err := fs.Stat(subgraph.Build, ds.Wasm); err != nil {
			t.Errorf("%s %s: %v", network, ds.Name, err)
		}
	}
}

func checkTemplates(t *testing.T, network string, m *Manifest) {
	t.Helper()
	// No template follows a pool: a busy pool's swaps outnumber the
	// protocol's events by far, and the records read its price by eth_call.
	if _, ok := m.Templates["Pool"]; ok {
		t.Errorf("%s: a Pool template", network)
	}
	for _, name := range []string{"MarketV2", "MarketV1", "HandlerV2", "HandlerV1"} {
		ds, ok := m.Templates[name]
		if !ok {
			t.Errorf("%s: no template %s", network, name)
			continue
		}
		for _, abiName := range []string{"Slot0UniswapV3", "Slot0PancakeV3", "Slot0AerodromeCL"} {
			if _, ok := ds.ABIs[abiName]; !ok {
				t.Errorf("%s template %s cannot bind %s", network, name, abiName)
			}
		}
	}
}

func TestMissingManifestSaysHowToBuild(t *testing.T) {
	_, err := LoadManifest(subgraph.Build, "build/nowhere/subgraph.yaml")
	if err == nil || !strings.Contains(err.Error(), "npm run --prefix subgraph build") {
		t.Fatalf("err = %v", err)
	}
}
