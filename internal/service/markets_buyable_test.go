package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// Addresses of testdata/scenarios/arbitrum-buyable.json.
var (
	buyUni      = common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	buyPancake  = common.HexToAddress("0x9ae336B61D7d2e19a47607f163A3fB0e46306b7b")
	buySushi    = common.HexToAddress("0x89ed51a5c586c3e1634a2de5542d037a74fcda38")
	buyV1       = common.HexToAddress("0xe11d346757d052214686bCbC860C94363AfB4a9A")
	buyPaused   = common.HexToAddress("0x000000000000000000000000000000000000AB01")
	buyUnknown  = common.HexToAddress("0x000000000000000000000000000000000000AB02")
	buyPool2    = common.HexToAddress("0xd9e2a1a61B6E61b275cEc326465d417e52C1b95c")
	buyHook24h  = common.HexToAddress("0x8c30c7F03421D2C9A0354e93c23014BF6C465a79")
	buyHookWeek = common.HexToAddress("0x0fC0744eACe0aEA3c3CF91FDF5b4A5428533aA3A")
	buyHookUnk  = common.HexToAddress("0x000000000000000000000000000000000000C0DE")
)

func loadBuyable(t *testing.T) *scenario.Scenario {
	return loadScenario(t, "testdata/scenarios/arbitrum-buyable.json")
}

// loadScenario loads the first scenario of a file, path from the repository root.
func loadScenario(t *testing.T, rel string) *scenario.Scenario {
	t.Helper()
	scs, err := scenario.Load(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return scs[0]
}

func strikesOf(t *testing.T, svc *service.Service, sc *scenario.Scenario, reach int) []market.Strike {
	t.Helper()
	got, err := svc.StrikesChain(context.Background(), market.StrikesRequest{ChainID: sc.ChainID, Market: sc.Market.Address, CallsReach: reach, PutsReach: reach})
	if err != nil {
		t.Fatal(err)
	}
	var out []market.Strike
	for _, e := range got.Entries {
		for _, s := range e {
			out = append(out, s)
		}
	}
	return out
}

// byHandler counts the listed ranges of each handler.
func byHandler(strikes []market.Strike) map[common.Address]int {
	n := map[common.Address]int{}
	for _, s := range strikes {
		n[common.HexToAddress(s.Handler.Handler.Address)]++
	}
	return n
}

// A non-whitelisted handler, a paused handler, a V1 handler under a V2
// market and ranges behind a hook that would refuse the market (the 1-week
// hook, whose owner has not whitelisted it; a hook with no code) are left
// out; the rest, an unregistered handler included, stay.
func TestStrikesListOnlyWhatTheMarketCanBuy(t *testing.T) {
	sc := loadBuyable(t)
	svc, _ := newService(t, sc)
	n := byHandler(strikesOf(t, svc, sc, 10))
	for h, why := range map[common.Address]string{buySushi: "not whitelisted", buyPaused: "paused", buyV1: "a V1 handler under a V2 market"} {
		if n[h] != 0 {
			t.Errorf("handler %s (%s) listed %d times", h.Hex(), why, n[h])
		}
	}
	if n[buyUni] != 3 || n[buyPancake] != 2 || n[buyUnknown] != 1 {
		t.Errorf("listed per handler: %v", n)
	}
	for _, st := range strikesOf(t, svc, sc, 10) {
		if h := common.HexToAddress(st.Meta.Hook); h == buyHookWeek || h == buyHookUnk {
			t.Errorf("range [%d,%d] behind hook %s, which refuses the market, listed", st.Meta.TickLower, st.Meta.TickUpper, h.Hex())
		}
	}
}

// Pause and whitelisting are read on every miss: a change shows in the next
// answer, with no cache of the gateway's own in between.
func TestStrikesFollowPauseAndWhitelistChanges(t *testing.T) {
	sc := loadBuyable(t)
	svc, f := newService(t, sc)
	if n := byHandler(strikesOf(t, svc, sc, 10)); n[buyUni] != 3 {
		t.Fatalf("before: %v", n)
	}
	f.Node.Lock()
	f.Node.Handlers[buyUni].Paused = true
	f.Node.PositionManagers[scenario.DefaultPositionManager].Allow(buySushi, sc.Market.Address)
	f.Node.Unlock()
	n := byHandler(strikesOf(t, svc, sc, 10))
	if n[buyUni] != 0 || n[buySushi] != 1 {
		t.Fatalf("after pausing uniswap and whitelisting sushi: %v", n)
	}
	f.Node.Lock()
	f.Node.Handlers[buyUni].Paused = false
	delete(f.Node.PositionManagers[scenario.DefaultPositionManager].Whitelist, contracts.WhitelistKey(buyUni, sc.Market.Address))
	f.Node.Unlock()
	if n := byHandler(strikesOf(t, svc, sc, 10)); n[buyUni] != 0 {
		t.Fatalf("after unpausing but un-whitelisting uniswap: %v", n)
	}
}

// Under a V1 market the V1 handler's ranges are buyable and the V2
// handlers' are not (each decodes only its own market's payload).
func TestStrikesV1MarketKeepsV1Handlers(t *testing.T) {
	sc := loadBuyable(t)
	sc.Market.Name, sc.Market.Version = "Dopex V2 Option Market", 1
	svc, _ := newService(t, sc)
	n := byHandler(strikesOf(t, svc, sc, 10))
	if n[buyV1] != 1 || n[buyUni] != 0 || n[buyPancake] != 0 || n[buyUnknown] != 0 {
		t.Fatalf("V1 market: %v", n)
	}
}

// Each hooked range states its hook's rules; a hook without configured
// rules says so instead of guessing. (The 1-week hook whitelists the
// market here, and the unknown hook is deployed admitting it: a hook that
// refuses the market hides its ranges.)
func TestStrikesStateHookRules(t *testing.T) {
	sc := loadBuyable(t)
	svc, f := newService(t, sc)
	f.Node.Lock()
	f.Node.Hooks[buyHookWeek].Allow(sc.Market.Address)
	f.Node.Hooks[buyHookUnk] = &chaintest.Hook{Owner: common.HexToAddress("0x000000000000000000000000000000000000000a"), MaxTTL: 86400}
	f.Node.Hooks[buyHookUnk].Allow(sc.Market.Address)
	f.Node.Unlock()
	seen := map[common.Address]vocab.HookRules{}
	for _, s := range strikesOf(t, svc, sc, 10) {
		seen[common.HexToAddress(s.Meta.Hook)] = s.Meta.HookRules
	}
	check := func(hook common.Address, name string, known bool, maxTTL int64) {
		t.Helper()
		r, ok := seen[hook]
		if !ok {
			t.Fatalf("no range with hook %s", hook.Hex())
		}
		gotTTL := int64(-1)
		if r.MaxTTL != nil {
			gotTTL = *r.MaxTTL
		}
		if r.Name != name || r.Known != known || gotTTL != maxTTL || r.NoWeekends || r.MinIV != nil {
			t.Errorf("hook %s: %+v (maxTtl %d), want %s known=%v maxTtl %d", hook.Hex(), r, gotTTL, name, known, maxTTL)
		}
	}
	check(common.Address{}, "none", true, -1)
	check(buyHook24h, "BoundedTTLHook_0Day", true, 86400)
	check(buyHookWeek, "BoundedTTLHook_1Week", true, 7*86400)
	check(buyHookUnk, "unknown", false, -1)
}

// The second pool's ranges are placed by its own tick (-196180) and
// spacing (50): [-196200,-196150] holds its tick and is left out although
// it lies above the prime pool's tick; [-196250,-196200] is a put although
// it lies above the prime pool's tick; at reach 1 its window is one step of
// 50 ticks, not of the prime pool's 10.
func TestStrikesSecondPoolByItsOwnTick(t *testing.T) {
	sc := loadBuyable(t)
	svc, _ := newService(t, sc)
	for _, reach := range []int{10, 1} {
		var got [][3]any
		for _, s := range strikesOf(t, svc, sc, reach) {
			if common.HexToAddress(s.Handler.Pool) == buyPool2 {
				got = append(got, [3]any{s.Type, s.Meta.TickLower, s.Meta.TickUpper})
			}
		}
		want := [][3]any{{"put", -196250, -196200}, {"call", -196150, -196100}}
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("reach %d: second pool's ranges %v, want %v", reach, got, want)
		}
	}
}

// Round trips: a market seen for the first time is one ChainedRead (the
// market, both pools, the registry's handlers), then one round for the two
// handlers outside the registry the subgraph named and the market's
// approvedPools of its prime pool (whose address the first round's answer
// gave), then one probing the ranges' hooks for admission; from then on
// those handlers are read with the pool prices, so a miss is two RPC round
// trips (state, hook probe).
func TestStrikesRoundTrips(t *testing.T) {
	sc := loadBuyable(t)
	svc, f := newService(t, sc)
	strikesOf(t, svc, sc, 10)
	if n := f.Node.Requests(); n != 3 {
		t.Errorf("first sight: %d rpc round trips, want 3", n)
	}
	before := f.Node.Requests()
	strikesOf(t, svc, sc, 10)
	if n := f.Node.Requests() - before; n != 2 {
		t.Errorf("warm: %d rpc round trips, want 2", n)
	}
}

// A market whose position manager does not answer the whitelist, or that
// has no positionManager(), is refused with 422 MARKET_UNSUPPORTED rather
// than shown with liquidity nobody can tell is buyable.
func TestStrikesWithoutPositionManager(t *testing.T) {
	sc := loadBuyable(t)
	svc, f := newService(t, sc)
	f.Node.Lock()
	f.Node.Markets[sc.Market.Address].PositionManager = common.Address{}
	f.Node.Unlock()
	_, err := svc.StrikesChain(context.Background(), market.StrikesRequest{ChainID: sc.ChainID, Market: sc.Market.Address, CallsReach: 10, PutsReach: 10})
	var p *problem.Error
	if !errors.As(err, &p) || p.Code != problem.MarketUnsupported {
		t.Fatalf("no positionManager(): %v", err)
	}
	svc, f = newService(t, sc)
	f.Node.Lock()
	f.Node.Markets[sc.Market.Address].PositionManager = common.HexToAddress("0x000000000000000000000000000000000000dead")
	f.Node.Handlers[common.HexToAddress("0x000000000000000000000000000000000000dead")] = &chaintest.Handler{} // code, but no whitelist getter
	f.Node.Unlock()
	_, err = svc.StrikesChain(context.Background(), market.StrikesRequest{ChainID: sc.ChainID, Market: sc.Market.Address, CallsReach: 10, PutsReach: 10})
	if !errors.As(err, &p) || p.Code != problem.MarketUnsupported {
		t.Fatalf("position manager without whitelistedHandlersWithApp: %v", err)
	}
}

// A node that refuses eth_call without `to` gets the first sight as
// Multicall3 rounds (the whitelist calls in the second, targeted at the
// position manager the first returned) and the same answer.
func TestStrikesBuyableWithoutCreateCalls(t *testing.T) {
	sc := loadBuyable(t)
	svc, _ := newService(t, sc)
	want := strikesOf(t, svc, sc, 10)
	svc2, f := newService(t, sc)
	f.Node.NoCreateCalls = true
	got := strikesOf(t, svc2, sc, 10)
	if len(got) != len(want) {
		t.Fatalf("%d strikes, want %d", len(got), len(want))
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("answers differ:\n%s\n%s", g, w)
	}
	// The refused ChainedRead, two Multicall3 rounds, the unregistered
	// handlers' round (with the prime pool's approval) and the hook probe
	// (each refused as a ChainedRead, then one Multicall3 round).
	if n := f.Node.Requests(); n != 7 {
		t.Errorf("rpc round trips: %d, want 7", n)
	}
}
