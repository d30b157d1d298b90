package service_test

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// The option markets of both scenario chains, normal (Arbitrum WETH/USDC,
// the call asset is token0) and inverted (Mantle WMNT/USDT), compared whole
// with golden files. The all-time sums must add up to the market's
// purchase history (every purchase, calls and puts apart) and the last
// day's to the purchases of the last complete UTC day before the block.
func TestOptionMarketsGolden(t *testing.T) {
	for _, c := range []struct {
		golden, scenario string
		inverted         bool
	}{
		{"markets-mantle", "testdata/scenarios/mantle-wmnt-usdt.json", true},
		{"markets-arbitrum", "testdata/scenarios/arbitrum-weth-usdc.json", false},
	} {
		t.Run(c.golden, func(t *testing.T) {
			sc := loadScenario(t, c.scenario)
			svc, _ := newService(t, sc)
			got, err := svc.OptionMarkets(context.Background(), sc.ChainID)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Markets) != 1 || got.Markets[0].Address != sc.Market.Address.Hex() || got.Block != sc.Block.Number {
				t.Fatalf("markets %+v at block %d", got.Markets, got.Block)
			}
			m := got.Markets[0]
			if m.PrimePool.Inverted != c.inverted || m.Version != "V2" || len(m.Handlers) == 0 || len(m.Hooks) == 0 {
				t.Errorf("market %+v", m)
			}
			day := sc.Block.Timestamp/86400*86400 - 86400
			all, last := bySide(t, svc, sc, 0, 1<<62), bySide(t, svc, sc, day, day+86400)
			for _, x := range []struct {
				name      string
				got       market.MarketSums
				want      map[string]*big.Int
				purchases int
			}{{"all time", m.Totals.AllTime, all.sums, all.n}, {"last day", m.Totals.LastDay.MarketSums, last.sums, last.n}} {
				if x.got.Purchases != x.purchases || x.got.CallVolume != x.want["callVolume"].String() || x.got.PutVolume != x.want["putVolume"].String() ||
					x.got.CallPremium != x.want["callPremium"].String() || x.got.PutPremium != x.want["putPremium"].String() ||
					x.got.CallProtocolFees != x.want["callFees"].String() || x.got.PutProtocolFees != x.want["putFees"].String() {
					t.Errorf("%s: %+v, purchase history says %d purchases %v", x.name, x.got, x.purchases, x.want)
				}
			}
			if last.sums["callVolume"].Sign() == 0 || last.sums["putVolume"].Sign() == 0 {
				t.Fatalf("the scenario's last day should hold a call and a put: %v", last.sums)
			}
			if m.Totals.LastDay.Start != big.NewInt(day).String() {
				t.Errorf("last day starts %s, want %d", m.Totals.LastDay.Start, day)
			}
			// Counts, premiums and fees as the scenario states them (its
			// volumes are derived from liquidity: the history's sizes above).
			for _, x := range []struct {
				name     string
				got      market.MarketSums
				from, to int64
			}{{"all time", m.Totals.AllTime, 0, 1 << 62}, {"last day", m.Totals.LastDay.MarketSums, day, day + 86400}} {
				want := stated(t, sc, x.from, x.to)
				if x.got.Purchases != want.Purchases || x.got.Exercises != want.Exercises || x.got.CallPremium != want.CallPremium ||
					x.got.PutPremium != want.PutPremium || x.got.CallProtocolFees != want.CallProtocolFees || x.got.PutProtocolFees != want.PutProtocolFees {
					t.Errorf("%s: %+v, the scenario states %+v", x.name, x.got, want)
				}
				if x.name == "last day" && c.golden == "markets-arbitrum" && want.Exercises == 0 {
					t.Error("the demo scenario's last day should hold exercises")
				}
			}
			// the route's answer: the items with the chain's swappers
			list, _, err := svc.MarketsList(context.Background(), sc.ChainID)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, c.golden, list)
		})
	}
}

// stated sums the scenario's own statements over [from, to): options
// (each with legs is a purchase, at its mint time, with its stated premium
// and protocol fees) and exercises (at their time).
func stated(t *testing.T, sc *scenario.Scenario, from, to int64) market.MarketSums {
	t.Helper()
	call, put := [2]*big.Int{new(big.Int), new(big.Int)}, [2]*big.Int{new(big.Int), new(big.Int)}
	out := market.MarketSums{}
	for _, o := range sc.Options {
		if len(o.Legs) == 0 || o.MintTimestamp < from || o.MintTimestamp >= to {
			continue
		}
		out.Purchases++
		side := put
		if o.IsCall {
			side = call
		}
		fees := o.ProtocolFees
		if fees == "" {
			fees = "0"
		}
		for i, v := range []string{o.Premium, fees} {
			x, ok := new(big.Int).SetString(v, 10)
			if !ok {
				t.Fatalf("option %d: %q", o.TokenID, v)
			}
			side[i].Add(side[i], x)
		}
	}
	for _, e := range sc.Exercises {
		if e.Timestamp >= from && e.Timestamp < to {
			out.Exercises++
		}
	}
	out.CallPremium, out.CallProtocolFees = call[0].String(), call[1].String()
	out.PutPremium, out.PutProtocolFees = put[0].String(), put[1].String()
	return out
}

type sideSums struct {
	sums map[string]*big.Int
	n    int
}

// bySide sums the market's purchase history (every buyer's) over
// [from, to): volume, premium and fees of calls and of puts.
func bySide(t *testing.T, svc *service.Service, sc *scenario.Scenario, from, to int64) sideSums {
	t.Helper()
	out := sideSums{sums: map[string]*big.Int{}}
	for _, k := range []string{"callVolume", "putVolume", "callPremium", "putPremium", "callFees", "putFees"} {
		out.sums[k] = new(big.Int)
	}
	buyers := map[common.Address]bool{}
	for _, o := range sc.Options {
		buyers[common.HexToAddress(o.MintBuyer())] = true
	}
	dec := func(s string) *big.Int {
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			t.Fatalf("not a decimal: %q", s)
		}
		return v
	}
	for b := range buyers {
		h, err := svc.PurchaseHistory(context.Background(), trade.HistoryRequest{ChainID: sc.ChainID, User: b, Market: sc.Market.Address, First: 1000})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range h.Records {
			if ts := dec(r.Timestamp).Int64(); ts < from || ts >= to {
				continue
			}
			out.n++
			side := r.Type // "call" or "put"
			out.sums[side+"Volume"].Add(out.sums[side+"Volume"], dec(r.Size))
			out.sums[side+"Premium"].Add(out.sums[side+"Premium"], dec(r.Premium))
			out.sums[side+"Fees"].Add(out.sums[side+"Fees"], dec(r.ProtocolFees))
		}
	}
	return out
}

// Only the handlers the market can buy from now are listed: not one its
// position manager has not whitelisted for it, not a paused one, not a V1
// handler under a V2 market. Each registered hook says whether it admits
// the market: the 24h hook does, the weekly hook has not whitelisted it.
func TestOptionMarketsListUsableHandlersOnly(t *testing.T) {
	sc := loadBuyable(t)
	svc, _ := newService(t, sc)
	got, err := svc.OptionMarkets(context.Background(), sc.ChainID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Markets) != 1 {
		t.Fatalf("%d markets", len(got.Markets))
	}
	names := map[string]bool{}
	for _, h := range got.Markets[0].Handlers {
		names[h.Address] = true
	}
	for h, st := range sc.Handlers {
		if names[h.Hex()] {
			t.Errorf("handler %s (%+v) listed as usable", h.Hex(), st)
		}
	}
	if !names[common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116").Hex()] {
		t.Errorf("the whitelisted V2 uniswap handler is missing: %+v", got.Markets[0].Handlers)
	}
	admits := map[string]bool{}
	for _, h := range got.Markets[0].Hooks {
		admits[h.Address] = h.AdmitsMarket
	}
	if len(admits) != 2 || !admits[buyHook24h.Hex()] || admits[buyHookWeek.Hex()] {
		t.Errorf("hooks %+v", got.Markets[0].Hooks)
	}
}

// What the subgraph says of a market must be what the chain says: a market
// of another version, pool or assets, and a _meta with no block time (no
// last day to pick) are the subgraph's errors (502), never a 404 naming a
// parameter this endpoint does not take. (A market the chain has no
// contract for is left out: TestOptionMarketsLeaveOutMarketsTheChainDoesNotKnow.)
func TestOptionMarketsRefuseWhatTheChainContradicts(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	market := strings.ToLower(sc.Market.Address.Hex())
	change := func(f *scenario.Fakes, id string, edit func(graphnode.Entity)) {
		m := f.Subgraph.Store.Get("Market", market)
		edit(m)
		m["id"] = graphnode.String(id)
		if err := f.Subgraph.Store.Set("Market", id, m, 0); err != nil {
			t.Fatal(err)
		}
	}
	for name, spoil := range map[string]func(f *scenario.Fakes){
		"another version": func(f *scenario.Fakes) {
			change(f, market, func(m graphnode.Entity) { m["version"] = graphnode.Int(1) })
		},
		"another pool": func(f *scenario.Fakes) {
			pool := f.Subgraph.Store.Get("Pool", strings.ToLower(sc.Market.PrimePool.Hex()))
			pool["id"] = graphnode.String("0x00000000000000000000000000000000000000ee")
			if err := f.Subgraph.Store.Set("Pool", pool["id"].Str, pool, 0); err != nil {
				t.Fatal(err)
			}
			change(f, market, func(m graphnode.Entity) { m["primePool"] = pool["id"] })
		},
		"no block time": func(f *scenario.Fakes) {
			f.Subgraph.Store.SetHead(graphnode.Block{Number: f.Subgraph.Store.Head().Number})
		},
		"assets swapped": func(f *scenario.Fakes) {
			change(f, market, func(m graphnode.Entity) { m["callAsset"], m["putAsset"] = m["putAsset"], m["callAsset"] })
		},
	} {
		t.Run(name, func(t *testing.T) {
			svc, f := newService(t, sc)
			spoil(f)
			_, err := svc.OptionMarkets(context.Background(), sc.ChainID)
			if p := problem.As(err); p.Code != problem.SubgraphError || p.Param != "" {
				t.Fatalf("%v (code %s, param %q), want SUBGRAPH_ERROR", err, p.Code.Name(), p.Param)
			}
		})
	}
}

// A subgraph of no block yet (an embedded index before its first commit,
// or one that failed before it) is 503 pointing at /readyz, not a 502
// blaming the query document for the missing block time.
func TestOptionMarketsOfAnIndexOfNoBlock(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	svc, f := newService(t, sc)
	f.Subgraph.Store.SetHead(graphnode.Block{})
	_, err := svc.OptionMarkets(context.Background(), sc.ChainID)
	if p := problem.As(err); p == nil || p.Code != problem.SubgraphUnavailable || !strings.Contains(err.Error(), "/readyz") {
		t.Fatalf("%v, want SUBGRAPH_UNAVAILABLE naming /readyz", err)
	}
}

// The chain facts of every market of a chain are one RPC round trip once
// the markets' immutables are known (one aggregate3 per market in one
// JSON-RPC batch), not one request per market; the hooks' admissions are
// the answer's one other round trip.
func TestOptionMarketsReadTheMarketsInOneRoundTrip(t *testing.T) {
	a, b := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json"), loadScenario(t, "testdata/scenarios/arbitrum-buyable.json")
	svc, f := newService(t, a, b)
	ctx := context.Background()
	if _, err := svc.OptionMarkets(ctx, a.ChainID); err != nil { // first sight: immutables read
		t.Fatal(err)
	}
	before := f.Node.Requests()
	got, err := svc.OptionMarkets(ctx, a.ChainID)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Node.Requests() - before; len(got.Markets) != 2 || n > 2 {
		t.Fatalf("%d markets in %d RPC requests; want the markets' batch and the hooks' probe", len(got.Markets), n)
	}
}

// A market the subgraph lists but the chain does not show as an option
// market (no contract there) is left out of the page, which lists the
// others (before, the whole page was 502 on every miss), and is not read
// again for a while: the next miss makes the other markets' one round trip
// and no read of it.
func TestOptionMarketsLeaveOutMarketsTheChainDoesNotKnow(t *testing.T) {
	a, b := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json"), loadScenario(t, "testdata/scenarios/arbitrum-buyable.json")
	svc, f := newService(t, a, b)
	ghost := "0x00000000000000000000000000000000000000ff"
	m := f.Subgraph.Store.Get("Market", strings.ToLower(a.Market.Address.Hex()))
	m["id"] = graphnode.String(ghost)
	if err := f.Subgraph.Store.Set("Market", ghost, m, 0); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 2 {
		before, calls := f.Node.Requests(), f.Node.Calls()
		got, err := svc.OptionMarkets(ctx, a.ChainID)
		if err != nil {
			t.Fatalf("miss %d: %v", i, err)
		}
		listed := map[string]bool{}
		for _, m := range got.Markets {
			listed[strings.ToLower(m.Address)] = true
		}
		if len(got.Markets) != 2 || listed[ghost] {
			t.Fatalf("miss %d: listed %v, want the two markets the chain knows", i, listed)
		}
		t.Logf("miss %d: %d RPC requests, %d eth_calls", i, f.Node.Requests()-before, f.Node.Calls()-calls)
		if n := f.Node.Requests() - before; i == 1 && n > 2 {
			t.Errorf("second miss: %d RPC requests; want the markets' batch and the hooks' probe, and no read of %s", n, ghost)
		}
	}
}
