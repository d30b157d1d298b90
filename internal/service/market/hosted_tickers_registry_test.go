package market_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// deploymentMarket is one option-market row of the deployments registry
// (subgraph/networks.json): its pair is the call and put symbols its
// evidence names (noPair would say why its evidence names none), and
// supersededBy the market of its network that replaced it.
type deploymentMarket struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Address string `json:"address"`
	Pair    *struct {
		Call string `json:"call"`
		Put  string `json:"put"`
		From string `json:"from"`
	} `json:"pair"`
	NoPair       string `json:"noPair"`
	SupersededBy *struct {
		Market string `json:"market"`
		From   string `json:"from"`
	} `json:"supersededBy"`
}

// deploymentChains reads every served network of the registry (keys not
// starting with _) with its chain id and market rows.
func deploymentChains(t *testing.T) map[string]struct {
	ChainID uint64             `json:"chainId"`
	Markets []deploymentMarket `json:"markets"`
} {
	t.Helper()
	raw, err := os.ReadFile("../../../subgraph/networks.json")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		ChainID uint64             `json:"chainId"`
		Markets []deploymentMarket `json:"markets"`
	}{}
	for name, v := range all {
		if strings.HasPrefix(name, "_") {
			continue
		}
		c := out[name]
		if err := json.Unmarshal(v, &c); err != nil || c.ChainID == 0 || len(c.Markets) == 0 {
			t.Fatalf("network %s: %v (chain %d, %d markets)", name, err, c.ChainID, len(c.Markets))
		}
		out[name] = c
	}
	if len(out) == 0 {
		t.Fatal("the registry serves no network")
	}
	return out
}

// Every market of the deployments registry, on every served chain, states
// its pair with evidence (no row is left with noPair), and its ticker (as
// its tokens spell it, upper- and lower-cased), asked of the registry built
// from all the chain's markets, answers the market itself or, for a market
// the registry says was superseded, its successor, which is a live market
// of the same chain and pair. No ticker of the registry is ambiguous: a
// 400 for any fails. Deprecated is version 1 or superseded, as the gateway
// reads them (the subgraph's version, the defaults' supersededMarkets).
// And a superseded market is still found by its ticker where its
// successor is not listed (the demo lists Arbitrum's 0x501B alone).
func TestTickerRegistryOfDeployments(t *testing.T) {
	markets := 0
	for network, c := range deploymentChains(t) {
		var ms []market.TickerMarket
		rows := map[common.Address]deploymentMarket{}
		for _, row := range c.Markets {
			if row.Pair == nil || row.Pair.Call == "" || row.Pair.Put == "" || row.Pair.From == "" || row.NoPair != "" {
				t.Errorf("%s %s %s: pair %+v, noPair %q: every market states its pair with its evidence", network, row.Name, row.Address, row.Pair, row.NoPair)
				continue
			}
			m := market.TickerMarket{Market: common.HexToAddress(row.Address), Ticker: market.TickerOf(row.Pair.Call, row.Pair.Put), Deprecated: row.Version == 1}
			if s := row.SupersededBy; s != nil {
				m.Deprecated, m.SupersededBy = true, common.HexToAddress(s.Market)
			}
			ms = append(ms, m)
			rows[m.Market] = row
		}
		reg := market.NewTickerRegistry(c.ChainID, ms)
		for _, m := range ms {
			markets++
			want := m.Market
			if m.SupersededBy != (common.Address{}) {
				want = m.SupersededBy
				next, ok := rows[want]
				if !ok || next.SupersededBy != nil || next.Pair.Call != rows[m.Market].Pair.Call || next.Pair.Put != rows[m.Market].Pair.Put {
					t.Errorf("%s %s: superseded by %s, which is no live market of the network with its pair", network, m.Market.Hex(), want.Hex())
				}
			}
			resolvesTo(t, reg, c.ChainID, m.Ticker, want)
			if want != m.Market {
				// the chain without the successor: the superseded market is found
				alone := market.NewTickerRegistry(c.ChainID, slices.DeleteFunc(slices.Clone(ms), func(x market.TickerMarket) bool { return x.Market == want }))
				resolvesTo(t, alone, c.ChainID, m.Ticker, m.Market)
			}
		}
	}
	if markets < 25 {
		t.Errorf("%d markets in the registry, want its 25 at least", markets)
	}
}

// resolvesTo asks reg for ticker in its own, upper and lower case and
// fails unless each answers want.
func resolvesTo(t *testing.T, reg *market.TickerRegistry, chainID uint64, ticker string, want common.Address) {
	t.Helper()
	for _, tk := range []string{ticker, strings.ToUpper(ticker), strings.ToLower(ticker)} {
		got, err := reg.Resolve(tk)
		if err != nil {
			t.Errorf("chain %d ticker %q: %v, want market %s", chainID, tk, err, want.Hex())
			continue
		}
		if got.Market != want {
			t.Errorf("chain %d ticker %q: market %s, want %s", chainID, tk, got.Market.Hex(), want.Hex())
		}
	}
}
