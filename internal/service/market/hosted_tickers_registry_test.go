package market_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// deploymentMarket is one option-market row of the deployments registry
// (subgraph/networks.json): its pair is the call and put symbols its
// evidence names, or noPair says why its evidence names none.
type deploymentMarket struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	Address string `json:"address"`
	Pair    *struct {
		Call string `json:"call"`
		Put  string `json:"put"`
	} `json:"pair"`
	NoPair string `json:"noPair"`
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

// The tickers two live markets of one chain share, as the deployments
// registry states their pairs: by ticker they answer a 400 naming both,
// and each is reached by its address (/clamm/mark-price, /clamm/candles
// with optionMarket=). Arbitrum's 2024 V2 markets (the broadcasts') and
// its 2025 ones (fe's) are on the same pools, and both are version 2;
// Sonic's two wS/USDC.e markets are on a Sushi and an Equalizer pool.
var ambiguousTickers = map[string][]string{
	"42161 WETH/USDC": {"0x501B03BdB431154b8Df17BF1c00756E3a8F21744", "0xcd697b919aa000378fe429b47eb0ff0d17d3d435"},
	"42161 WBTC/USDC": {"0x550e7E236912DaA302F7d5D0d6e5D7b6EF191f04", "0x502751c59feb16959526f1f8aa767d84b028bfbd"},
	"42161 ARB/USDC":  {"0x4eed3A2b797Bf5630517EcCe2e31C1438A76bb92", "0x20b2431557bb90954744a6d404f45ad1ad8719f4"},
	"42161 BOOP/WETH": {"0xE9e1310d3E6401DFa1f5A3544CC6B0fced68c189", "0xa23233775ed58669cb0c2c7a6fa0380b6ccc1094"},
	"146 wS/USDC.e":   {"0xaFd9352aF9A75E52Ba2889ba9Fa3b2a960ABef61", "0x342e4068bA07bbCcBDDE503b2451FAa3D3C0278B"},
}

// The market rows whose evidence names no pair (Arbitrum's V1 markets:
// their broadcasts give the tokens' addresses, no source their symbols),
// so the registry test cannot state their tickers. Each is reported.
var unpairedMarkets = []string{
	"42161 0x764fA09d0B3de61EeD242099BD9352C1C61D3d27",
	"42161 0xf272182658A0bbeE6D6a48D8816a0Fc76B8eB158",
	"42161 0xBb1cF6f913DE129900faefb7FBDa2e247A7f22aF",
	"42161 0x3808E8C983023a125fFE2714E2A703A3BF02bE0d",
	"42161 0x77b6f45a3Dcf0493f1B9Ac9874e5982AB526AA9e",
}

// Every market of the deployments registry, on every served chain, is
// found by its ticker (as its tokens spell it, upper- and lower-cased)
// in the registry built from the chain's markets, deprecated being
// version 1 as the subgraph reports it; except the tickers two live
// markets share, which answer a 400 on ticker naming both, and are
// exactly ambiguousTickers. A market unreachable for any other reason,
// a new shared ticker, or a row with neither pair nor noPair fails.
func TestTickerRegistryOfDeployments(t *testing.T) {
	var unpaired []string
	ambiguous := map[string][]string{}
	messages := map[string]string{} // the 400's message, by chain and ticker
	for network, c := range deploymentChains(t) {
		var ms []market.TickerMarket
		for _, row := range c.Markets {
			switch {
			case row.Pair != nil && row.NoPair != "":
				t.Errorf("%s %s: both pair and noPair", network, row.Name)
			case row.Pair != nil:
				ms = append(ms, market.TickerMarket{Market: common.HexToAddress(row.Address), Ticker: market.TickerOf(row.Pair.Call, row.Pair.Put), Deprecated: row.Version == 1})
			case row.NoPair != "":
				t.Logf("%s %s %s: no pair stated: %s", network, row.Name, row.Address, row.NoPair)
				unpaired = append(unpaired, fmt.Sprintf("%d %s", c.ChainID, common.HexToAddress(row.Address).Hex()))
			default:
				t.Errorf("%s %s: no pair, and no noPair saying why", network, row.Name)
			}
		}
		reg := market.NewTickerRegistry(c.ChainID, ms)
		for _, m := range ms {
			if key, refusal := resolvesToItself(t, reg, c.ChainID, m); refusal != "" {
				ambiguous[key] = append(ambiguous[key], m.Market.Hex())
				messages[key] = refusal
			}
		}
	}
	checkAmbiguous(t, ambiguous, messages)
	want := make([]string, len(unpairedMarkets))
	for i, u := range unpairedMarkets {
		chain, addr, _ := strings.Cut(u, " ")
		want[i] = chain + " " + common.HexToAddress(addr).Hex()
	}
	slices.Sort(want)
	slices.Sort(unpaired)
	if !slices.Equal(unpaired, want) {
		t.Errorf("markets with no pair stated: %v, want %v", unpaired, want)
	}
}

// resolvesToItself asks reg for m's ticker in its own, upper and lower
// case, and returns the chain's ticker key with "" when each answers m,
// or with the 400's message when each answers the 400 of an ambiguous
// ticker naming m. Anything else fails the test.
func resolvesToItself(t *testing.T, reg *market.TickerRegistry, chainID uint64, m market.TickerMarket) (string, string) {
	t.Helper()
	found, refused := 0, 0
	refusal := ""
	cases := []string{m.Ticker, strings.ToUpper(m.Ticker), strings.ToLower(m.Ticker)}
	for _, tk := range cases {
		got, err := reg.Resolve(tk)
		if err == nil {
			if got.Market != m.Market {
				t.Errorf("chain %d ticker %q: market %s, want %s", chainID, tk, got.Market.Hex(), m.Market.Hex())
			}
			found++
			continue
		}
		p := problem.As(err)
		if p.Code != problem.InvalidParameter || p.Kind() != problem.KindInvalidArgument || p.Param != "ticker" ||
			!strings.Contains(p.Message, "ambiguous") || !strings.Contains(p.Message, m.Market.Hex()) {
			t.Errorf("chain %d market %s unreachable by ticker %q: %v", chainID, m.Market.Hex(), tk, err)
		}
		refused++
		refusal = p.Message
	}
	if found != 0 && refused != 0 {
		t.Errorf("chain %d ticker %s: found in some cases, refused in others", chainID, m.Ticker)
	}
	if found != 0 {
		refusal = ""
	}
	return fmt.Sprintf("%d %s", chainID, m.Ticker), refusal
}

// checkAmbiguous compares the tickers refused as ambiguous with
// ambiguousTickers, and checks each refusal names every market of it.
func checkAmbiguous(t *testing.T, got map[string][]string, messages map[string]string) {
	t.Helper()
	for key, want := range ambiguousTickers {
		w := make([]string, len(want))
		for i, a := range want {
			w[i] = common.HexToAddress(a).Hex()
		}
		slices.Sort(w)
		g := got[key]
		slices.Sort(g)
		if !slices.Equal(g, w) {
			t.Errorf("ambiguous ticker %s: markets %v refused, want %v", key, g, w)
		}
	}
	for key, ms := range got {
		if _, ok := ambiguousTickers[key]; !ok {
			t.Errorf("ticker %s refused as ambiguous (markets %v) and not listed in ambiguousTickers", key, ms)
		}
	}
	// one refusal names every market of the ticker (both, not only the
	// one asked for)
	for key, want := range ambiguousTickers {
		for _, a := range want {
			if !strings.Contains(messages[key], common.HexToAddress(a).Hex()) {
				t.Errorf("ambiguous %s: %q does not name %s", key, messages[key], a)
			}
		}
	}
}
