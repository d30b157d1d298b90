package service_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
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
			HookName                string `json:"hookName"`
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

// testQuoter stands in for a QuoterV2 on chains whose defaults have none
// (Mantle): the fake node serves it.
var testQuoter = common.HexToAddress("0x000000000000000000000000000000000000b001")

// newService wires the real chain reader, subgraph client and quoters to
// fakes loaded with the scenario.
// newService serves sc (and more scenarios of the same chain) from fakes,
// the market's other pools also configured (marketPools).
func newService(t *testing.T, sc *scenario.Scenario, more ...*scenario.Scenario) (*service.Service, *scenario.Fakes) {
	t.Helper()
	return newServiceConfigured(t, func(ch *config.Chain) {
		if len(sc.Market.OtherPools) > 0 {
			ch.MarketPools = map[common.Address][]common.Address{sc.Market.Address: sc.Market.OtherPools}
		}
	}, sc, more...)
}

// newServiceConfigured is newService with the chain's configuration as
// configure leaves it.
func newServiceConfigured(t *testing.T, configure func(*config.Chain), sc *scenario.Scenario, more ...*scenario.Scenario) (*service.Service, *scenario.Fakes) {
	t.Helper()
	cfg := config.Default()
	ch := cfg.Chains[sc.ChainID]
	if uni := ch.Swappers["uni-v3"]; uni != nil && uni.Quoter == (common.Address{}) {
		uni.Quoter = testQuoter
	}
	f := scenario.NewFakesFor(t, ch, append([]*scenario.Scenario{sc}, more...)...)
	configure(ch)
	cfg.Chains = map[uint64]*config.Chain{sc.ChainID: ch}
	a, err := app.New(app.Options{Config: cfg, Transports: map[uint64]upstream.Transports{sc.ChainID: f.Transports()}})
	if err != nil {
		t.Fatal(err)
	}
	return a.Service, f
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
	if len(v.StrikesChains) < 6 {
		t.Fatalf("strikes.json has %d cases", len(v.StrikesChains))
	}
	for _, c := range v.StrikesChains {
		scs, err := scenario.Load(filepath.Join(root, c.Scenario))
		if err != nil {
			t.Fatal(err)
		}
		svc, _ := newService(t, scs[0])
		got, err := svc.StrikesChain(context.Background(), market.StrikesRequest{
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
				{"meta.hookRules.name", s.Meta.HookRules.Name, want.HookName},
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

func keys(e market.StrikeEntry) []string {
	var out []string
	for k := range e {
		out = append(out, k)
	}
	return out
}
