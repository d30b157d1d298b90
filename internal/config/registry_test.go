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
