package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// strikesVectors mirrors testdata/vectors/strikes.json, computed by gen.mjs
// from the scenario files with @uniswap/v3-sdk and decimal.js.
type strikesVectors struct {
	StrikesChains []struct {
		Scenario   string `json:"scenario"`
		ChainID    uint64 `json:"chainId"`
		Market     string `json:"market"`
		CallsReach int    `json:"callsReach"`
		PutsReach  int    `json:"putsReach"`
		Entries    []struct {
			Key                     string `json:"key"`
			Type                    string `json:"type"`
			HandlerName             string `json:"handlerName"`
			TickLower               int    `json:"tickLower"`
			TickUpper               int    `json:"tickUpper"`
			Token                   string `json:"token"`
			TotalTokenLiquidity     string `json:"totalTokenLiquidity"`
			AvailableTokenLiquidity string `json:"availableTokenLiquidity"`
			TotalLiquidity          string `json:"totalLiquidity"`
			AvailableLiquidity      string `json:"availableLiquidity"`
			Utilization             string `json:"utilization"`
			APR                     string `json:"apr"`
		} `json:"entries"`
	} `json:"strikesChains"`
}

const root = "../.."

// newService wires the real chain reader and subgraph client to fakes
// loaded with the scenario.
func newService(t *testing.T, sc *scenario.Scenario) (*service.Service, *scenario.Fakes) {
	t.Helper()
	f := scenario.NewFakes(sc)
	cfg := config.Default()
	ch := cfg.Chains[sc.ChainID]
	return service.New(map[uint64]*service.Upstreams{sc.ChainID: {
		Config:   ch,
		Subgraph: subgraph.New("http://fake-subgraph.invalid", subgraph.Options{HTTPClient: f.SubgraphHTTP()}),
		Chain:    chain.NewReader(f.RPC(), chain.Options{Multicall3: ch.Multicall3}),
	}}), f
}

func TestStrikesChainMatchesIndependentVectors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(root, "testdata/vectors/strikes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v strikesVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.StrikesChains) < 4 {
		t.Fatalf("strikes.json has %d cases", len(v.StrikesChains))
	}
	for _, c := range v.StrikesChains {
		scs, err := scenario.Load(filepath.Join(root, c.Scenario))
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := newService(t, scs[0])
		got, err := svc.StrikesChain(context.Background(), service.StrikesRequest{
			ChainID: c.ChainID, Market: scs[0].Market.Address, CallsReach: c.CallsReach, PutsReach: c.PutsReach,
		})
		if err != nil {
			t.Fatalf("%s %d/%d: %v", c.Scenario, c.CallsReach, c.PutsReach, err)
		}
		if len(got.Entries) != len(c.Entries) {
			t.Fatalf("%s %d/%d: %d entries, want %d", c.Scenario, c.CallsReach, c.PutsReach, len(got.Entries), len(c.Entries))
		}
		for i, want := range c.Entries {
			e := got.Entries[i]
			if len(e) != 1 {
				t.Fatalf("entry %d has %d keys", i, len(e))
			}
			s, ok := e[want.Key]
			if !ok {
				t.Errorf("%s entry %d: key %v, want %s", c.Scenario, i, keys(e), want.Key)
				continue
			}
			checks := [][3]string{
				{"type", s.Type, want.Type},
				{"handler.name", s.Handler.Name, want.HandlerName},
				{"token.symbol", s.Token.Symbol, want.Token},
				{"meta.totalTokenLiquidity", s.Meta.TotalTokenLiquidity, want.TotalTokenLiquidity},
				{"meta.availableTokenLiquidity", s.Meta.AvailableTokenLiquidity, want.AvailableTokenLiquidity},
				{"totalLiquidity", s.TotalLiquidity, want.TotalLiquidity},
				{"availableLiquidity", s.AvailableLiquidity, want.AvailableLiquidity},
				{"utilization", s.Utilization, want.Utilization},
				{"apr", s.APR, want.APR},
			}
			for _, ck := range checks {
				if ck[1] != ck[2] {
					t.Errorf("%s %d/%d entry %d (%s, tick %d): %s = %s, want %s", c.Scenario, c.CallsReach, c.PutsReach, i, want.Key, want.TickLower, ck[0], ck[1], ck[2])
				}
			}
			if s.Meta.TickLower != want.TickLower || s.Meta.TickUpper != want.TickUpper {
				t.Errorf("entry %d: ticks [%d,%d], want [%d,%d]", i, s.Meta.TickLower, s.Meta.TickUpper, want.TickLower, want.TickUpper)
			}
		}
	}
}

func keys(e service.StrikeEntry) []string {
	var out []string
	for k := range e {
		out = append(out, k)
	}
	return out
}
