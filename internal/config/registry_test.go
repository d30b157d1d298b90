package config

import (
	"encoding/json"
	"fmt"
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
		Version    int    `json:"version"`
		Slot0      string `json:"slot0"`
	} `json:"handlers"`
	Hooks []struct {
		Address, Name, MaxTTL, From string
	} `json:"hooks"`
	Pools []struct {
		Address, Dex, From string
	} `json:"pools"`
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
		Version    int    `json:"version"`
		Slot0      string `json:"slot0"`
	} `json:"handlers"`
	Hooks map[string]struct {
		Name   string `json:"name"`
		MaxTTL string `json:"maxTtl"`
	} `json:"hooks"`
	PoolDex       map[string]string `json:"poolDex"`
	AutoExerciser string            `json:"autoExerciser"`
	Router        string            `json:"router"`
	LimitOrders   string            `json:"limitOrders"`
	Settlers      []string          `json:"settlers"`
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

// The gateway's default handlers, hooks and pool DEXes are the subgraph
// registry's (subgraph/networks.json, from which the manifests are
// written): on every chain the same addresses, each handler with the same
// dex name, deprecation, version and slot0 layout, each hook with the same
// rules, each pool in the same DEX.
func TestDefaultHandlersAreTheRegistrys(t *testing.T) {
	reg, defaults := registry(t), defaultChains(t)
	if len(defaults) != len(reg) {
		t.Errorf("defaults name %d chains, the registry %d", len(defaults), len(reg))
	}
	for id, c := range defaults {
		var got, want []string
		for addr, h := range c.Handlers {
			got = append(got, fmt.Sprintf("handler %s %s %t v%d %s", strings.ToLower(addr), h.Name, h.Deprecated, h.Version, h.Slot0))
		}
		for addr, h := range c.Hooks {
			got = append(got, fmt.Sprintf("hook %s %s %s", strings.ToLower(addr), h.Name, h.MaxTTL))
		}
		for addr, dex := range c.PoolDex {
			got = append(got, fmt.Sprintf("pool %s %s", strings.ToLower(addr), dex))
		}
		n := reg[id]
		for _, h := range n.Handlers {
			if h.Dex == "" || h.Slot0 == "" || h.Version == 0 {
				t.Errorf("chain %s handler %s lacks its dex name, slot0 layout or version", id, h.Address)
			}
			want = append(want, fmt.Sprintf("handler %s %s %t v%d %s", strings.ToLower(h.Address), h.Dex, h.Deprecated, h.Version, h.Slot0))
		}
		for _, h := range n.Hooks {
			want = append(want, fmt.Sprintf("hook %s %s %s", strings.ToLower(h.Address), h.Name, h.MaxTTL))
		}
		for _, p := range n.Pools {
			want = append(want, fmt.Sprintf("pool %s %s", strings.ToLower(p.Address), p.Dex))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("chain %s: defaults.json\n%s\nsubgraph/networks.json\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, h := range n.Hooks {
			if h.From == "" {
				t.Errorf("chain %s hook %s has no evidence (from)", id, h.Address)
			}
		}
		for _, p := range n.Pools {
			if p.From == "" {
				t.Errorf("chain %s pool %s has no evidence (from)", id, p.Address)
			}
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
