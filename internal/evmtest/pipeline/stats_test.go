package pipeline

import (
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// Statistics on the pipeline: purchases and exercises over three UTC days
// (a call and a put early on day 1; calls, puts and a call's exercise later
// that day; puts bought (one through a router for another buyer of the
// day) and one exercised on day 2; a put bought and exercised
// on day 3 morning, two calls that afternoon), indexed by the compiled
// mappings, asked of the live gateway for a window that cuts through day 1
// and day 3 (day 2 whole), for whole days, and for part of one day. Every
// figure, total and daily, equals the sum over the market's LogMintOption
// and LogExerciseOption logs in the window, decoded here from the chain;
// open interest (the unexpired options' collateral; the expired ones apart)
// and TVL equal the market's and the handler's getters at the answer's
// block, after every purchase and exercise as at the end.
func TestPipelineStats(t *testing.T) { statsPipeline(t, pt.Config{}) }

// The same on an inverted market (the call asset is token1: a call amount
// is valued in the put asset by dividing by the price).
func TestPipelineStatsInverted(t *testing.T) { statsPipeline(t, pt.Config{Inverted: true}) }

func statsPipeline(t *testing.T, cfg pt.Config) {
	p := pt.Deploy(t, cfg)
	ix := New(t, p)
	p.SetProtocolFee(p.Owner.Addr, 125_000) // 12.5% of the premium
	multicall := p.DeployMulticall3()
	a := statsGateway(t, p, ix, multicall, true)
	a.Pins.SetHeadAges(block.HeadAges{}) // no clock moves between steps: every miss asks where the subgraph is
	steps := 0
	ranges := statsActivity(t, p, func(ranges []pt.Range) {
		// after each purchase and exercise: open interest, the expired
		// options and TVL at the indexed head (a window of its own, never
		// an answer cached at an earlier step)
		ix.Sync()
		steps++
		checkHoldingsAtHead(t, a, p, steps, ranges)
	})
	ix.Sync()

	head := int64(p.Chain.Now())
	d3 := head / 86400 * 86400
	d1 := d3 - 2*86400
	windows := [][2]int64{
		{d1 + 6*3600, d3 + 13*3600}, // cuts day 1 and day 3, day 2 whole
		{d1, d3 + 86400},            // whole days only
		{d1 + 6*3600, d1 + 20*3600}, // part of one day
		{d1 + 6*3600, d1 + 86400},   // one cut day and no whole one
	}
	ev := marketEvents(t, p)
	cut := ev.in(windows[0][0], windows[0][1])
	if before, after := ev.in(d1, windows[0][0]), ev.in(windows[0][1], d3+86400); before.purchases == 0 || after.purchases == 0 || cut.exercises < 3 {
		t.Fatalf("setup: the window must leave out purchases at both ends (%d before, %d after) and hold exercises (%d)", before.purchases, after.purchases, cut.exercises)
	}
	if day2 := ev.in(d1+86400, d3); day2.purchases != 3 || day2.buyers != 2 {
		t.Fatalf("setup: day 2 has %d purchases by %d buyers, want 3 by 2 (one bought through the router)", day2.purchases, day2.buyers)
	}
	for _, w := range windows {
		got, at := askStats(t, a, p, w)
		want := ev.in(w[0], w[1])
		checkFigures(t, p, "totals", got.Totals, want)
		if n := int((w[1]-1)/86400 - w[0]/86400 + 1); len(got.Days) != n {
			t.Fatalf("window %v: %d days, want %d", w, len(got.Days), n)
		}
		for _, d := range got.Days {
			start := mustInt(t, d.Start)
			from, to := max(start, w[0]), min(start+86400, w[1])
			if mustInt(t, d.From) != from || mustInt(t, d.To) != to {
				t.Errorf("day %s: [%s, %s), want [%d, %d)", d.Start, d.From, d.To, from, to)
			}
			checkFigures(t, p, "day "+d.Start, d.StatsFigures, ev.in(from, to))
		}
		holdingsAt(t, p, at, ranges).check(t, p, got)
	}
	// without the put asset among the stablecoins: no usd anywhere
	got, _ := askStats(t, statsGateway(t, p, ix, multicall, false), p, windows[0])
	if got.USD || got.Totals.Volume.USD != nil || got.TVL.USD != nil || got.Days[0].Premiums.USD != nil {
		t.Errorf("usd figures for a put asset that is not a configured stablecoin: %+v", got)
	}
}

// statsActivity makes the test's three days of purchases and exercises,
// starting at 01:00 UTC of the day after the deployment, calling step with
// the ranges after each, and returns the ranges it deposited.
func statsActivity(t *testing.T, p *pt.Protocol, step func([]pt.Range)) []pt.Range {
	t.Helper()
	lp, a, b, c := p.Users[0], p.Users[1], p.Users[2], p.Users[3]
	_, tick := p.Slot0(p.Pool)
	callSide, putSide := 1, -1
	if p.CallAsset == p.Token1 {
		callSide, putSide = -1, 1
	}
	rng := func(side, k int) pt.Range {
		base := tick - tick%p.TickSpacing
		lo := base + side*k*p.TickSpacing
		if side < 0 {
			lo = base + side*(k+1)*p.TickSpacing
		}
		return pt.Range{TickLower: lo, TickUpper: lo + p.TickSpacing}
	}
	ranges := []pt.Range{rng(callSide, 10), rng(putSide, 10), rng(callSide, 40), rng(putSide, 40)}
	liq := make([]*big.Int, len(ranges))
	for i, r := range ranges {
		_, l, err := p.Deposit(lp, r, e18(1))
		if err != nil {
			t.Fatal(err)
		}
		liq[i] = l
	}
	quarter := func(i int) *big.Int { return new(big.Int).Div(liq[i], big.NewInt(4)) }
	buy := func(who *pt.Account, isCall bool, i int) *big.Int {
		r := ranges[i]
		id, _, err := p.Buy(who, pt.Option{IsCall: isCall, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600, Legs: []pt.Leg{{Range: r, Liquidity: quarter(i)}}})
		if err != nil {
			t.Fatal(err)
		}
		step(ranges)
		return id
	}
	exercise := func(who *pt.Account, id *big.Int, i int) {
		if _, err := p.Exercise(who, id, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: quarter(i)}}); err != nil {
			t.Fatal(err)
		}
		step(ranges)
	}
	now := int64(p.Chain.Now())
	p.Chain.AdjustTime(time.Duration(now/86400*86400+86400+3600-now) * time.Second) // day 1, 01:00
	buy(a, true, 0)
	buy(b, false, 1)
	p.Chain.AdjustTime(9 * time.Hour) // day 1, 10:00
	call := buy(a, true, 0)
	buy(c, false, 1)
	buy(b, true, 2)
	if _, err := p.SwapToTick(c, p.Fee, tick+callSide*300); err != nil {
		t.Fatal(err)
	}
	exercise(a, call, 0)
	p.Chain.AdjustTime(24 * time.Hour) // day 2, 10:00
	put := buy(b, false, 1)
	buy(c, true, 2)
	// a buys through the router for c, who also buys directly that day: c
	// is the buyer (holds the option), not a and not the router (the
	// market's caller), so the day has two distinct buyers
	r := ranges[1]
	if _, _, err := p.BuyVia(p.DeployRouter(), a, c.Addr, pt.Option{IsCall: false, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600,
		MaxCost: big.NewInt(1e12), Legs: []pt.Leg{{Range: r, Liquidity: quarter(1)}}}, false); err != nil {
		t.Fatal(err)
	}
	step(ranges)
	if _, err := p.SwapToTick(c, p.Fee, tick+putSide*300); err != nil {
		t.Fatal(err)
	}
	exercise(b, put, 1)
	p.Chain.AdjustTime(24 * time.Hour) // day 3, 10:00
	put = buy(c, false, 3)
	if _, err := p.SwapToTick(a, p.Fee, tick+putSide*500); err != nil {
		t.Fatal(err)
	}
	exercise(c, put, 3)
	p.Chain.AdjustTime(6 * time.Hour) // day 3, 16:00: the price is past range 1, which now holds the call asset
	buy(a, true, 1)
	buy(b, true, 0)
	return ranges
}

// statsGateway is the live gateway with the test's handler registered and,
// if usd, the test's put asset as the chain's only USD stablecoin.
func statsGateway(t *testing.T, p *pt.Protocol, ix *Indexer, multicall common.Address, usd bool, edits ...func(*config.Chain)) *app.App {
	t.Helper()
	sub := httptest.NewServer(ix.Serve())
	t.Cleanup(sub.Close)
	node := httptest.NewServer(RPCHandler(p.Chain.RPC()))
	t.Cleanup(node.Close)
	cfg := config.Default()
	ch := cfg.Chains[42161]
	ch.SubgraphURL, ch.RPCURL = sub.URL, node.URL
	ch.Handlers[p.Handler] = config.Handler{Name: "uniswap"}
	// a market read before is read through Multicall3, which this chain
	// has only where the test deploys it
	ch.Multicall3 = multicall
	cfg.USDStablecoins = nil
	if usd {
		cfg.USDStablecoins = []string{"42161:" + p.PutAsset.Hex()}
	}
	for _, edit := range edits {
		edit(ch)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// askStats asks the statistics of the window; it returns the answer and
// its block.
func askStats(t *testing.T, a *app.App, p *pt.Protocol, w [2]int64) (market.MarketStats, uint64) {
	t.Helper()
	url := gateway.PathStats + "?chainId=42161&optionMarket=" + p.Market.Hex() + "&from=" + big.NewInt(w[0]).String() + "&to=" + big.NewInt(w[1]).String()
	var out market.MarketStats
	at := get(t, a, url, &out)
	if out.From != big.NewInt(w[0]).String() || out.To != big.NewInt(w[1]).String() || out.CallAsset.Address != p.CallAsset.Hex() || out.PutAsset.Address != p.PutAsset.Hex() {
		t.Errorf("%s: window [%s, %s), assets %s %s", url, out.From, out.To, out.CallAsset.Address, out.PutAsset.Address)
	}
	return out, at
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || !v.IsInt64() {
		t.Fatalf("%q is not an integer", s)
	}
	return v.Int64()
}

// chainEvent is one LogMintOption or LogExerciseOption of the market, with
// what the statistics need of it, decoded from the chain here.
type chainEvent struct {
	time    int64
	mint    bool
	isCall  bool
	buyer   common.Address // the option's holder when the mint's transaction ended
	volume  *big.Int       // totalAssetWithdrawn
	premium *big.Int
	fees    *big.Int
	profit  *big.Int       // totalProfit
	sqrtP   *big.Int       // the prime pool's price as of the log: its last Initialize or Swap before it
	callIs0 bool           // the call asset is the pool's token0
	owner   common.Address // LogExerciseOption.user
	tx      common.Hash
}

type events []chainEvent

// marketEvents reads the market's and the prime pool's logs from the chain
// and decodes them with the test protocol's ABIs.
func marketEvents(t *testing.T, p *pt.Protocol) events {
	t.Helper()
	logs, err := p.Chain.Client().FilterLogs(t.Context(), ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{p.Market, p.Pool}})
	if err != nil {
		t.Fatal(err)
	}
	ptrs := make([]*types.Log, len(logs))
	for i := range logs {
		ptrs[i] = &logs[i]
	}
	var out events
	var price *big.Int
	for _, e := range p.Events(&types.Receipt{Logs: ptrs}) {
		switch {
		case e.Address == p.Pool && (e.Name == "Swap" || e.Name == "Initialize"):
			price = e.Args["sqrtPriceX96"].(*big.Int)
		case e.Address == p.Market && (e.Name == "LogMintOption" || e.Name == "LogExerciseOption"):
			out = append(out, decodeEvent(t, p, e, price))
		}
	}
	return out
}

func decodeEvent(t *testing.T, p *pt.Protocol, e pt.Event, price *big.Int) chainEvent {
	t.Helper()
	header, err := p.Chain.Client().HeaderByNumber(t.Context(), new(big.Int).SetUint64(e.Log.BlockNumber))
	if err != nil {
		t.Fatal(err)
	}
	if price == nil {
		t.Fatal("an event before the pool's Initialize")
	}
	id := e.Args["tokenId"].(*big.Int)
	ce := chainEvent{time: int64(header.Time), sqrtP: price, callIs0: p.CallAsset == p.Token0, tx: e.Log.TxHash}
	if e.Name == "LogExerciseOption" {
		ce.isCall, ce.profit, ce.owner = p.OpData(id).IsCall, e.Args["totalProfit"].(*big.Int), e.Args["user"].(common.Address)
		return ce
	}
	rc, err := p.Chain.Client().TransactionReceipt(t.Context(), e.Log.TxHash)
	if err != nil {
		t.Fatal(err)
	}
	ce.mint, ce.isCall, ce.buyer = true, e.Args["isCall"].(bool), holderAfter(t, rc, p.Market, id)
	ce.volume, ce.premium, ce.fees = e.Args["totalAssetWithdrawn"].(*big.Int), e.Args["premiumAmount"].(*big.Int), e.Args["protocolFees"].(*big.Int)
	return ce
}

// sums are what the events of a span say: [call|put] amounts of options'
// collateral (profit: calls' in the put asset, puts' in the call asset),
// and the call-asset amounts valued in the put asset at each event's price.
type sums struct {
	purchases, exercises, buyers  int
	volume, premium, fees, profit [2]*big.Int
	inPut                         map[string]*big.Int // volume, premium, fees, profit (of puts)
}

func (ev events) in(from, to int64) sums {
	z := func() *big.Int { return new(big.Int) }
	s := sums{volume: [2]*big.Int{z(), z()}, premium: [2]*big.Int{z(), z()}, fees: [2]*big.Int{z(), z()}, profit: [2]*big.Int{z(), z()},
		inPut: map[string]*big.Int{"volume": z(), "premium": z(), "fees": z(), "profit": z()}}
	buyers := map[common.Address]bool{}
	for _, e := range ev {
		if e.time < from || e.time >= to {
			continue
		}
		side := 1
		if e.isCall {
			side = 0
		}
		if !e.mint {
			s.exercises++
			s.profit[side].Add(s.profit[side], e.profit)
			if !e.isCall {
				s.inPut["profit"].Add(s.inPut["profit"], e.callInPut(e.profit))
			}
			continue
		}
		s.purchases++
		buyers[e.buyer] = true
		s.volume[side].Add(s.volume[side], e.volume)
		s.premium[side].Add(s.premium[side], e.premium)
		s.fees[side].Add(s.fees[side], e.fees)
		if e.isCall {
			s.inPut["volume"].Add(s.inPut["volume"], e.callInPut(e.volume))
			s.inPut["premium"].Add(s.inPut["premium"], e.callInPut(e.premium))
			s.inPut["fees"].Add(s.inPut["fees"], e.callInPut(e.fees))
		}
	}
	s.buyers = len(buyers)
	return s
}

// callInPut is a call-asset amount in put-asset units at the event's
// price, floored: the pool's price is token1 per token0, sqrtP^2 / 2^192.
func (e chainEvent) callInPut(amount *big.Int) *big.Int {
	p2 := new(big.Int).Mul(e.sqrtP, e.sqrtP)
	q192 := new(big.Int).Lsh(big.NewInt(1), 192)
	if e.callIs0 {
		return new(big.Int).Div(new(big.Int).Mul(amount, p2), q192)
	}
	return new(big.Int).Div(new(big.Int).Mul(amount, q192), p2)
}

// usd is put-asset base units as whole dollars, exact, without trailing zeros.
func usd(units *big.Int, decimals int) string {
	s := new(big.Rat).SetFrac(units, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)).FloatString(decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func checkAmounts(t *testing.T, p *pt.Protocol, what string, got market.StatsAmounts, call, put, callInPut *big.Int) {
	t.Helper()
	want := usd(new(big.Int).Add(put, callInPut), int(p.PutDecimals))
	if got.CallAsset != call.String() || got.PutAsset != put.String() || got.USD == nil || *got.USD != want {
		u := "absent"
		if got.USD != nil {
			u = *got.USD
		}
		t.Errorf("%s: callAsset %s putAsset %s usd %s; the events say %s, %s, %s", what, got.CallAsset, got.PutAsset, u, call, put, want)
	}
}

func checkFigures(t *testing.T, p *pt.Protocol, what string, got market.StatsFigures, want sums) {
	t.Helper()
	if got.Purchases != want.purchases || got.Exercises != want.exercises || got.Buyers != want.buyers {
		t.Errorf("%s: %d purchases, %d exercises, %d buyers; the events say %d, %d, %d", what, got.Purchases, got.Exercises, got.Buyers, want.purchases, want.exercises, want.buyers)
	}
	checkAmounts(t, p, what+" volume", got.Volume, want.volume[0], want.volume[1], want.inPut["volume"])
	checkAmounts(t, p, what+" premiums", got.Premiums, want.premium[0], want.premium[1], want.inPut["premium"])
	checkAmounts(t, p, what+" protocolFees", got.ProtocolFees, want.fees[0], want.fees[1], want.inPut["fees"])
	checkAmounts(t, p, what+" profit", got.Profit, want.profit[1], want.profit[0], want.inPut["profit"])
}
