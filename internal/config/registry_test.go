package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

// The gateway's default handlers are the subgraph registry's
// (subgraph/networks.json, from which the manifests are written): on every
// chain the same addresses, each with the same dex name and deprecation.
// Read as raw JSON on both sides, so the registry stays the one source
// whatever shape the config code takes.
func TestDefaultHandlersAreTheRegistrys(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "subgraph", "networks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var networks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &networks); err != nil {
		t.Fatal(err)
	}
	registry := map[string][]string{} // chain id -> sorted "address name deprecated"
	for name, n := range networks {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var net struct {
			ChainID  int `json:"chainId"`
			Handlers []struct {
				Address    string `json:"address"`
				Dex        string `json:"dex"`
				Deprecated bool   `json:"deprecated"`
			} `json:"handlers"`
		}
		if err := json.Unmarshal(n, &net); err != nil {
			t.Fatal(err)
		}
		id := strconv.Itoa(net.ChainID)
		for _, h := range net.Handlers {
			if h.Dex == "" {
				t.Errorf("%s handler %s has no dex name", name, h.Address)
			}
			registry[id] = append(registry[id], strings.ToLower(h.Address)+" "+h.Dex+" "+strconv.FormatBool(h.Deprecated))
		}
	}
	var defaults struct {
		Chains map[string]struct {
			Handlers map[string]struct {
				Name       string `json:"name"`
				Deprecated bool   `json:"deprecated"`
			} `json:"handlers"`
		} `json:"chains"`
	}
	rawDefaults, err := os.ReadFile("defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rawDefaults, &defaults); err != nil {
		t.Fatal(err)
	}
	if len(defaults.Chains) != len(registry) {
		t.Errorf("defaults name %d chains, the registry %d", len(defaults.Chains), len(registry))
	}
	for id, c := range defaults.Chains {
		var got []string
		for addr, h := range c.Handlers {
			got = append(got, strings.ToLower(addr)+" "+h.Name+" "+strconv.FormatBool(h.Deprecated))
		}
		want := registry[id]
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("chain %s: defaults.json handlers\n%s\nsubgraph/networks.json handlers\n%s", id, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// The gateway's default auto-exerciser and settlers are the registry's
// (subgraph/networks.json autoExerciser, settlers), chain by chain.
func TestDefaultPeripheryIsTheRegistrys(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "subgraph", "networks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var networks map[string]json.RawMessage
	if err := json.Unmarshal(raw, &networks); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Address string `json:"address"`
		From    string `json:"from"`
	}
	want := map[uint64]string{} // chain id -> "autoExerciser | settlers sorted"
	for name, n := range networks {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var net struct {
			ChainID       uint64  `json:"chainId"`
			AutoExerciser *entry  `json:"autoExerciser"`
			Settlers      []entry `json:"settlers"`
		}
		if err := json.Unmarshal(n, &net); err != nil {
			t.Fatal(err)
		}
		ae := ""
		if net.AutoExerciser != nil {
			ae = strings.ToLower(net.AutoExerciser.Address)
			if net.AutoExerciser.From == "" {
				t.Errorf("%s: auto-exerciser without evidence", name)
			}
		}
		var ss []string
		for _, s := range net.Settlers {
			if s.From == "" {
				t.Errorf("%s: settler %s without evidence", name, s.Address)
			}
			ss = append(ss, strings.ToLower(s.Address))
		}
		sort.Strings(ss)
		want[net.ChainID] = ae + " | " + strings.Join(ss, " ")
	}
	for id, ch := range Default().Chains {
		got := ""
		if ch.AutoExerciser != (common.Address{}) {
			got = strings.ToLower(ch.AutoExerciser.Hex())
		}
		var ss []string
		for _, s := range ch.Settlers {
			ss = append(ss, strings.ToLower(s.Hex()))
		}
		sort.Strings(ss)
		got += " | " + strings.Join(ss, " ")
		if got != want[id] {
			t.Errorf("chain %d: defaults.json %q, subgraph/networks.json %q", id, got, want[id])
		}
	}
}
