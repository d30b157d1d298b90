package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// gatewayPurchases asks the gateway (live over the indexed store and the
// simulated node) for purchase history and checks it against the
// receipts: every LogMintOption is in its buyer's history (the holder at
// the end of the transaction) with the event's premium, fees, size and
// caller (its user, the router where one bought). The subgraph's positions query must name each
// option under its ownerOf.
func gatewayPurchases(t *testing.T, p *pt.Protocol, ix *Indexer, created map[string]*types.Receipt) {
	t.Helper()
	a, subURL := liveGateway(t, p, ix)
	read := func(path string, user common.Address) map[string]map[string]any {
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?chainId=42161&first=100&skip=0&user="+user.Hex()+"&optionMarket="+p.Market.Hex(), nil))
		var list []map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
			t.Fatalf("%s of %s: %d %s", path, user, rec.Code, rec.Body)
		}
		out := map[string]map[string]any{}
		for _, r := range list {
			out[r["optionId"].(string)] = r
		}
		return out
	}
	owners := map[common.Address]bool{}
	for id, rc := range created {
		owners[p.OwnerOf(new(big.Int).SetBytes(mustDec(t, id)))] = true
		ev := p.Find(rc, "LogMintOption")
		if ev == nil {
			continue // a split is not a purchase
		}
		// the buyer is who holds the NFT when the purchase ends (a router's
		// receiver), not the market's msg.sender
		buyer := holderAfter(t, rc, p.Market, ev.Args["tokenId"].(*big.Int))
		if router := ev.Args["user"].(common.Address); router != buyer {
			if r := read(gateway.PathPurchaseHistory, router)[id]; r != nil {
				t.Errorf("purchase of option %s listed for the router %s", id, router)
			}
		}
		r := read(gateway.PathPurchaseHistory, buyer)[id]
		want := map[string]string{
			"premium": ev.Args["premiumAmount"].(*big.Int).String(), "protocolFees": ev.Args["protocolFees"].(*big.Int).String(),
			"size": ev.Args["totalAssetWithdrawn"].(*big.Int).String(), "txHash": strings.ToLower(rc.TxHash.Hex()),
			"caller": ev.Args["user"].(common.Address).Hex(), // mintOption's msg.sender: a router, where one bought
		}
		for k, v := range want {
			if r == nil || r[k] != v {
				t.Errorf("purchase of option %s by %s: %s = %v, want %s", id, buyer, k, r[k], v)
			}
		}
	}
	// Positions: the gateway's own chain reader needs Multicall3, which
	// the simulated chain lacks (preparetest says the same), so the chain
	// half is not run here; the subgraph half is: the PurchasePositions
	// query names, for each owner, exactly the options whose ownerOf is
	// that owner (ownership followed through the ERC721 Transfer events).
	client := testenv.NewSubgraph(t, subURL, subgraph.Options{})
	for owner := range owners {
		held, _, err := client.PurchasePositions(t.Context(), subgraph.HistoryQuery{User: owner, Market: p.Market, First: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !held.DelegatesRead {
			t.Errorf("subgraph positions of %s: the document's delegates not read", owner)
		}
		named := map[string]bool{}
		for _, h := range held.Options {
			named[h.TokenID.String()] = true
		}
		for id := range created {
			if want := p.OwnerOf(new(big.Int).SetBytes(mustDec(t, id))) == owner; named[id] != want {
				t.Errorf("subgraph positions of %s: option %s named %v, want %v", owner, id, named[id], want)
			}
		}
	}
}

func mustDec(t *testing.T, s string) []byte {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("option id %q", s)
	}
	return v.Bytes()
}

// gatewayMarkets asks the live gateway for the chain's option markets and
// checks the test market against the chain: its sums all time against
// every LogMintOption and LogExerciseOption it emitted, the last complete
// UTC day's against those of that day, its assets and prime pool against
// the deployment, the protocol's handler (registered here under the name
// "uniswap") listed as usable, and each registered hook's admission as the
// hook contracts decide it (and after one takes the market off its
// whitelist; an address without code admits nothing).
func gatewayMarkets(t *testing.T, p *pt.Protocol, ix *Indexer, inverted bool) {
	t.Helper()
	// The protocol's handler and its two TTL hooks registered beside the
	// defaults (whose Arbitrum addresses hold no code on this chain).
	register := func(ch *config.Chain) {
		ch.Handlers[p.Handler] = config.Handler{Name: "uniswap"}
		ch.Hooks[p.Hook24h] = config.HookRules{Name: "BoundedTTLHook_0Day", MaxTTL: config.Duration(24 * time.Hour)}
		ch.Hooks[p.Hook1Week] = config.HookRules{Name: "BoundedTTLHook_1Week", MaxTTL: config.Duration(7 * 24 * time.Hour)}
	}
	a, _ := liveGateway(t, p, ix, register)
	m := marketOf(t, a, p)
	wantHooks := map[common.Address]bool{p.Hook24h: true, p.Hook1Week: true} // both whitelist the market
	checkHooks := func(m *market.OptionMarket) {
		t.Helper()
		if len(m.Hooks) != 2+len(config.Default().Chains[42161].Hooks) {
			t.Errorf("hooks %+v", m.Hooks)
		}
		for _, h := range m.Hooks {
			if want := wantHooks[common.HexToAddress(h.Address)]; h.AdmitsMarket != want {
				t.Errorf("hook %s (%s) admitsMarket %v, want %v", h.Address, h.Name, h.AdmitsMarket, want)
			}
		}
	}
	checkHooks(m)
	if m.Version != "V2" || m.CallAsset.Address != p.CallAsset.Hex() || m.PutAsset.Address != p.PutAsset.Hex() ||
		m.PrimePool.Address != p.Pool.Hex() || m.PrimePool.Inverted != inverted ||
		len(m.Handlers) != 1 || m.Handlers[0].Address != p.Handler.Hex() {
		t.Errorf("market %+v", m)
	}

	all := eventSums(t, p, 0, 1<<62)
	if got := m.Totals.AllTime; got != all {
		t.Errorf("all-time sums %+v, the market's events say %+v", got, all)
	}
	if all.Purchases == 0 || all.Exercises == 0 || all.CallVolume == "0" || all.PutVolume == "0" {
		t.Errorf("the pipeline bought and exercised no call or no put: %+v", all)
	}
	// The last complete day at the head (the pipeline's events happen
	// within seconds: most likely none), then a day later (most likely all
	// of them): each as the events of its day say, and the two days hold
	// every event.
	var lastDays []market.MarketSums
	for i := 0; i < 2; i++ {
		if i == 1 {
			p.Chain.AdjustTime(24 * time.Hour)
			// the weekly hook's owner takes the market off its whitelist
			p.Chain.MustSend(p.Owner, p.Hook1Week, pt.TTLHook.ABI, "updateWhitelistedAppsStatus", p.Market, false)
			ix.Sync() // the subgraph indexes up to the new head: its _meta moves a day on
			wantHooks[p.Hook1Week] = false
			a, _ = liveGateway(t, p, ix, register)
			m = marketOf(t, a, p)
			checkHooks(m)
		}
		head, err := p.Chain.Client().HeaderByNumber(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		day := int64(head.Time)/86400*86400 - 86400
		last := eventSums(t, p, day, day+86400)
		if got := m.Totals.LastDay; got.MarketSums != last || got.Start != big.NewInt(day).String() {
			t.Errorf("last day %+v, the market's events of day %d say %+v", got, day, last)
		}
		lastDays = append(lastDays, last)
	}
	if n := lastDays[0].Purchases + lastDays[1].Purchases; n != all.Purchases {
		t.Errorf("the two last days hold %d purchases of %d", n, all.Purchases)
	}
}

// marketOf is the gateway's option-markets entry for the test market.
func marketOf(t *testing.T, a *app.App, p *pt.Protocol) *market.OptionMarket {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathOptionMarkets+"?chainId=42161", nil))
	var markets []market.OptionMarket
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &markets) != nil {
		t.Fatalf("option markets: %d %s", rec.Code, rec.Body)
	}
	for i := range markets {
		if markets[i].Address == p.Market.Hex() {
			return &markets[i]
		}
	}
	t.Fatalf("market %s not listed: %s", p.Market.Hex(), rec.Body)
	return nil
}

// eventSums adds up the market's LogMintOption and LogExerciseOption
// events in blocks whose time is in [from, to).
func eventSums(t *testing.T, p *pt.Protocol, from, to int64) market.MarketSums {
	t.Helper()
	a := pt.MarketV2.ABI
	logs, err := p.Chain.Client().FilterLogs(t.Context(), ethereum.FilterQuery{Addresses: []common.Address{p.Market},
		Topics: [][]common.Hash{{a.Events["LogMintOption"].ID, a.Events["LogExerciseOption"].ID}}})
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]*big.Int{}
	for _, k := range []string{"callVolume", "putVolume", "callPremium", "putPremium", "callFees", "putFees"} {
		sums[k] = new(big.Int)
	}
	var out market.MarketSums
	for _, lg := range logs {
		h, err := p.Chain.Client().HeaderByNumber(t.Context(), new(big.Int).SetUint64(lg.BlockNumber))
		if err != nil {
			t.Fatal(err)
		}
		if ts := int64(h.Time); ts < from || ts >= to {
			continue
		}
		if lg.Topics[0] == a.Events["LogExerciseOption"].ID {
			out.Exercises++
			continue
		}
		v := map[string]any{}
		if err := a.UnpackIntoMap(v, "LogMintOption", lg.Data); err != nil {
			t.Fatal(err)
		}
		out.Purchases++
		side := "put"
		if v["isCall"].(bool) {
			side = "call"
		}
		sums[side+"Volume"].Add(sums[side+"Volume"], v["totalAssetWithdrawn"].(*big.Int))
		sums[side+"Premium"].Add(sums[side+"Premium"], v["premiumAmount"].(*big.Int))
		sums[side+"Fees"].Add(sums[side+"Fees"], v["protocolFees"].(*big.Int))
	}
	out.CallVolume, out.PutVolume = sums["callVolume"].String(), sums["putVolume"].String()
	out.CallPremium, out.PutPremium = sums["callPremium"].String(), sums["putPremium"].String()
	out.CallProtocolFees, out.PutProtocolFees = sums["callFees"].String(), sums["putFees"].String()
	return out
}
