package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// Chain-wide statistics on the pipeline: the three days of the market
// statistics test on the first market, and a second market on the same
// pool and handler (so both reach the same ranges) where a buyer of the
// first market and another account buy on day 3. The chain's answer lists both
// markets' answers, each equal to its own /clamm/stats at the same block;
// its totals and days by token, with buyers distinct over the chain, equal
// the sums over both markets' LogMintOption and LogExerciseOption logs;
// open interest is the two markets' summed, per pool too; TVL counts the
// ranges both reach once (it equals either market's, not their sum).
func TestPipelineChainStats(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	p.SetProtocolFee(p.Owner.Addr, 125_000)
	ranges := statsActivity(t, p, func([]pt.Range) {})
	second := secondMarket(t, p, ranges)
	ix.Sync()
	multicall := p.DeployMulticall3()
	ix.Sync()
	a := statsGateway(t, p, ix, multicall, true)
	d3 := int64(p.Chain.Now()) / 86400 * 86400
	d1 := d3 - 2*86400
	ev := append(marketEvents(t, p), marketEvents(t, second)...)
	for _, w := range [][2]int64{{d1 + 6*3600, d3 + 86400}, {d1, d3 + 86400}} {
		got, at := askChainStats(t, a, w)
		if len(got.Markets) != 2 {
			t.Fatalf("window %v: %d markets, want 2", w, len(got.Markets))
		}
		for _, m := range got.Markets {
			sameAsMarketStats(t, a, m, w, at)
		}
		checkChainFigures(t, p, "totals", got.Totals, ev.in(w[0], w[1]))
		for _, d := range got.Days {
			checkChainFigures(t, p, "day "+d.Start, d.ChainFigures, ev.in(mustInt(t, d.From), mustInt(t, d.To)))
		}
		checkChainHoldings(t, p, got)
	}
	if ev.in(d3, d3+86400).buyers >= ev.in(d3, d3+86400).purchases {
		t.Fatal("setup: day 3 must have a buyer of both markets")
	}
}

// secondMarket deploys a market on the prime pool that buys from the
// test's handler, and buys two calls on it (by a buyer of the first market
// and by another account); it returns the protocol as seen from it.
func secondMarket(t *testing.T, p *pt.Protocol, ranges []pt.Range) *pt.Protocol {
	t.Helper()
	m2 := p.DeployMarket()
	p.WhitelistApp(p.Handler, m2, true)
	for _, u := range p.Users {
		for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
			p.Chain.MustSend(u, tok, pt.Token.ABI, "approve", m2, new(big.Int).Lsh(big.NewInt(1), 255))
		}
	}
	later := *p
	later.Market = m2
	for i, who := range []*pt.Account{p.Users[1], p.Users[4%len(p.Users)]} {
		r := ranges[2+i] // ranges above the price by then: calls
		liq := new(big.Int).Div(p.RangeInfo(r).TotalLiquidity, big.NewInt(10))
		if _, _, err := later.Buy(who, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600, Legs: []pt.Leg{{Range: r, Liquidity: liq}}}); err != nil {
			t.Fatal(err)
		}
	}
	return &later
}

func askChainStats(t *testing.T, a *app.App, w [2]int64) (market.ChainStats, uint64) {
	t.Helper()
	var out market.ChainStats
	at := get(t, a, gateway.PathChainStats+"?chainId=42161&from="+strconv.FormatInt(w[0], 10)+"&to="+strconv.FormatInt(w[1], 10), &out)
	return out, at
}

// sameAsMarketStats: a market's entry is its own answer at the block.
func sameAsMarketStats(t *testing.T, a *app.App, m market.MarketStats, w [2]int64, at uint64) {
	t.Helper()
	url := gateway.PathStats + "?chainId=42161&optionMarket=" + m.Market + "&from=" + strconv.FormatInt(w[0], 10) + "&to=" + strconv.FormatInt(w[1], 10) + "&block=" + strconv.FormatUint(at, 10)
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	var own map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &own); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	delete(own, "asOf")
	raw, _ := json.Marshal(m)
	var entry map[string]any
	_ = json.Unmarshal(raw, &entry)
	a1, _ := json.Marshal(own)
	a2, _ := json.Marshal(entry)
	if string(a1) != string(a2) {
		t.Errorf("market %s in the chain's answer:\n%s\nits own:\n%s", m.Market, a2, a1)
	}
}

// checkChainFigures holds the chain's figures by token to the events'
// sums (both markets trade the same call and put asset).
func checkChainFigures(t *testing.T, p *pt.Protocol, what string, got market.ChainFigures, want sums) {
	t.Helper()
	if got.Purchases != want.purchases || got.Exercises != want.exercises || got.Buyers != want.buyers {
		t.Errorf("%s: %d purchases, %d exercises, %d buyers; the events say %d, %d, %d", what, got.Purchases, got.Exercises, got.Buyers, want.purchases, want.exercises, want.buyers)
	}
	byToken := map[string]market.TokenFigures{}
	for _, f := range got.Tokens {
		byToken[f.Token.Address] = f
	}
	for i, tok := range []common.Address{p.CallAsset, p.PutAsset} {
		f := byToken[tok.Hex()]
		profit := want.profit[1-i] // puts' profit is in the call asset
		if want.purchases+want.exercises > 0 && (f.Volume != want.volume[i].String() || f.Premiums != want.premium[i].String() || f.ProtocolFees != want.fees[i].String() || f.Profit != profit.String()) {
			t.Errorf("%s %s: %+v; the events say volume %s premiums %s fees %s profit %s", what, tok.Hex(), f, want.volume[i], want.premium[i], want.fees[i], profit)
		}
	}
	dec := int(p.PutDecimals)
	for _, c := range []struct {
		name, got string
		put, in   *big.Int
	}{{"volume", got.USD.Volume, want.volume[1], want.inPut["volume"]}, {"premiums", got.USD.Premiums, want.premium[1], want.inPut["premium"]},
		{"protocolFees", got.USD.ProtocolFees, want.fees[1], want.inPut["fees"]}, {"profit", got.USD.Profit, want.profit[0], want.inPut["profit"]}} {
		if w := usd(new(big.Int).Add(c.put, c.in), dec); c.got != w {
			t.Errorf("%s usd %s: %s, the events say %s", what, c.name, c.got, w)
		}
	}
	if got.USD.Markets != 2 {
		t.Errorf("%s: usd over %d markets, want 2", what, got.USD.Markets)
	}
}

// checkChainHoldings: open interest is the markets' summed, TVL the
// shared ranges' once, and the one pool holds both.
func checkChainHoldings(t *testing.T, p *pt.Protocol, got market.ChainStats) {
	t.Helper()
	sum := func(f func(market.MarketStats) market.StatsAmounts) [2]*big.Int {
		out := [2]*big.Int{new(big.Int), new(big.Int)}
		for _, m := range got.Markets {
			a := f(m)
			c, _ := new(big.Int).SetString(a.CallAsset, 10)
			u, _ := new(big.Int).SetString(a.PutAsset, 10)
			out[0].Add(out[0], c)
			out[1].Add(out[1], u)
		}
		return out
	}
	oi := sum(func(m market.MarketStats) market.StatsAmounts { return m.OpenInterest.StatsAmounts })
	first := got.Markets[0].TVL
	if got.Markets[1].TVL.CallAsset != first.CallAsset || got.Markets[1].TVL.PutAsset != first.PutAsset || first.CallAsset == "0" {
		t.Fatalf("setup: the two markets reach different ranges: %+v %+v", first, got.Markets[1].TVL)
	}
	amount := func(list []vocab.TokenAmount, tok common.Address) string {
		for _, a := range list {
			if a.Token.Address == tok.Hex() {
				return a.Amount
			}
		}
		return "absent"
	}
	if amount(got.OpenInterest.Tokens, p.CallAsset) != oi[0].String() || amount(got.OpenInterest.Tokens, p.PutAsset) != oi[1].String() {
		t.Errorf("open interest %+v, the markets' sum %v", got.OpenInterest, oi)
	}
	if amount(got.TVL.Tokens, p.CallAsset) != first.CallAsset || amount(got.TVL.Tokens, p.PutAsset) != first.PutAsset {
		t.Errorf("tvl %+v, want each market's (the same ranges) %+v", got.TVL, first)
	}
	if len(got.Pools) != 1 || got.Pools[0].Pool != p.Pool.Hex() || got.Pools[0].Ranges != first.Ranges ||
		amount(got.Pools[0].TVL, p.CallAsset) != first.CallAsset || amount(got.Pools[0].OpenInterest, p.CallAsset) != oi[0].String() || amount(got.Pools[0].OpenInterest, p.PutAsset) != oi[1].String() {
		t.Errorf("pools %+v; want %s with tvl %+v and open interest %v", got.Pools, p.Pool.Hex(), first, oi)
	}
}
