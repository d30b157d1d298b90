package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// registryNetwork is the part of a subgraph/networks.json network the
// gateway's defaults repeat.
type registryNetwork struct {
	ChainID  int `json:"chainId"`
	Handlers []struct {
		Address    string `json:"address"`
		Dex        string `json:"dex"`
		Deprecated bool   `json:"deprecated"`
	} `json:"handlers"`
	Periphery struct {
		AutoExerciser, Router, LimitOrders struct {
			Address string `json:"address"`
			From    string `json:"from"`
		}
		Settlers []struct {
			Address string `json:"address"`
			From    string `json:"from"`
		} `json:"settlers"`
	} `json:"periphery"`
}

// registry reads subgraph/networks.json by chain id, as raw JSON, so the
// registry stays the one source whatever shape the config code takes.
func registry(t *testing.T) map[string]registryNetwork {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "subgraph", "networks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var networks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &networks); err != nil {
		t.Fatal(err)
	}
	out := map[string]registryNetwork{}
	for name, n := range networks {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var net registryNetwork
		if err := json.Unmarshal(n, &net); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[strconv.Itoa(net.ChainID)] = net
	}
	return out
}

// defaultChain is the part of a defaults.json chain the registry holds.
type defaultChain struct {
	Handlers map[string]struct {
		Name       string `json:"name"`
		Deprecated bool   `json:"deprecated"`
	} `json:"handlers"`
	AutoExerciser string   `json:"autoExerciser"`
	Router        string   `json:"router"`
	LimitOrders   string   `json:"limitOrders"`
	Settlers      []string `json:"settlers"`
}

func defaultChains(t *testing.T) map[string]defaultChain {
	t.Helper()
	var defaults struct {
		Chains map[string]defaultChain `json:"chains"`
	}
	raw, err := os.ReadFile("defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &defaults); err != nil {
		t.Fatal(err)
	}
	return defaults.Chains
}

// The gateway's default handlers are the subgraph registry's
// (subgraph/networks.json, from which the manifests are written): on every
// chain the same addresses, each with the same dex name and deprecation.
func TestDefaultHandlersAreTheRegistrys(t *testing.T) {
	reg, defaults := registry(t), defaultChains(t)
	if len(defaults) != len(reg) {
		t.Errorf("defaults name %d chains, the registry %d", len(defaults), len(reg))
	}
	for id, c := range defaults {
		var got, want []string
		for addr, h := range c.Handlers {
			got = append(got, strings.ToLower(addr)+" "+h.Name+" "+strconv.FormatBool(h.Deprecated))
		}
		for _, h := range reg[id].Handlers {
			if h.Dex == "" {
				t.Errorf("chain %s handler %s has no dex name", id, h.Address)
			}
			want = append(want, strings.ToLower(h.Address)+" "+h.Dex+" "+strconv.FormatBool(h.Deprecated))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("chain %s: defaults.json handlers\n%s\nsubgraph/networks.json handlers\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// The auto-exerciser, router and limit orders the defaults serve are the
// registry's periphery, and every one the registry names has its evidence.
func TestDefaultPeripheryIsTheRegistrys(t *testing.T) {
	reg, defaults := registry(t), defaultChains(t)
	for id, c := range defaults {
		p := reg[id].Periphery
		for _, row := range []struct {
			name, got, want, from string
		}{
			{"autoExerciser", c.AutoExerciser, p.AutoExerciser.Address, p.AutoExerciser.From},
			{"router", c.Router, p.Router.Address, p.Router.From},
			{"limitOrders", c.LimitOrders, p.LimitOrders.Address, p.LimitOrders.From},
		} {
			if !strings.EqualFold(row.got, row.want) {
				t.Errorf("chain %s %s: defaults.json %q, subgraph/networks.json %q", id, row.name, row.got, row.want)
			}
			if row.want != "" && row.from == "" {
				t.Errorf("chain %s %s %s has no evidence (from)", id, row.name, row.want)
			}
		}
	}
}

// The settlers the defaults serve (which settlement history marks as
// known) are the registry's, each with its evidence.
func TestDefaultSettlersAreTheRegistrys(t *testing.T) {
	reg, defaults := registry(t), defaultChains(t)
	for id, c := range defaults {
		var got, want []string
		for _, s := range c.Settlers {
			got = append(got, strings.ToLower(s))
		}
		for _, s := range reg[id].Periphery.Settlers {
			if s.From == "" {
				t.Errorf("chain %s settler %s has no evidence (from)", id, s.Address)
			}
			want = append(want, strings.ToLower(s.Address))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("chain %s settlers: defaults.json %v, subgraph/networks.json %v", id, got, want)
		}
	}
}
