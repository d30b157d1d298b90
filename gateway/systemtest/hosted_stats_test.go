package systemtest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// hostedAsks are requests of every hosted path on the demo, with the
// demo's market, pool and users, over the scenario's ten days.
var hostedAsks = map[string][]string{
	gateway.PathHostedTVL:          {"?chainId=42161&optionMarket=" + demo.Market},
	gateway.PathHostedPoolTVL:      {"?chainId=42161"},
	gateway.PathHostedOpenInterest: {"?chainId=42161&optionMarket=" + demo.Market},
	gateway.PathHostedVolume:       {"?chainId=42161&optionMarket=" + demo.Market + "&from=1762905600&to=1763740800"},
	gateway.PathHostedDAU:          {"?chainId=42161&optionMarket=" + demo.Market + "&from=1762905600&to=1763740800"},
	gateway.PathHostedFees:         {"?chainId=42161&optionMarket=" + demo.Market + "&from=1762905600&to=1763740800"},
	gateway.PathHostedTotalVolume:  {"?chainId=42161"},
	gateway.PathPnlDelta: {"?chains=42161&user=" + demo.Alice + "&from=1762905600&to=1763740800",
		"?chains=421614,42161,146,8453,81457,5000&user=" + demo.Bob + "&from=1762905600&to=1763740800"},
	gateway.PathBoundedAll:  {"?chainId=42161&period=1D", "?chainId=42161&period=1W", "?chainId=42161&period=1M", "?chainId=42161&period=6M"},
	gateway.PathBoundedUser: {"?chainId=42161&period=1M&user=" + demo.Alice, "?chainId=42161&period=6M&user=" + demo.Nobody},
}

// Every hosted path answers the demo with the type its client declares
// (spec hosted-api-clients.md §2, transcribed in hostedtypes): bare
// numbers as JSON numbers, never strings, no null, no field the client
// lacks but the envelope's asOf.
func TestHostedPathsAnswerTheClientsTypes(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for path, typ := range hostedtypes.StatsPaths {
		asks := hostedAsks[path]
		if len(asks) == 0 {
			t.Errorf("%s: no request of it here", path)
		}
		for _, q := range asks {
			url := strings.ReplaceAll(path, "{pool}", demo.Pool) + q
			rec := get(t, srv, url)
			if rec.Code != http.StatusOK {
				t.Errorf("%s: %d %s", url, rec.Code, rec.Body)
				continue
			}
			for _, p := range hostedtypes.Check(rec.Body.Bytes(), typ) {
				t.Errorf("%s: %s\n%s", url, p, rec.Body)
			}
		}
	}
}

// The hosted figures are the statistics' and the leaderboard's: each bare
// number equals the figure of /clamm/stats it is documented as, and a
// user's deltas sum to the leaderboard's usd.net over the same window, as
// delta-bounded's pnl equals it over the period's window.
func TestHostedFiguresAreTheStatistics(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	const win = "&from=1762905600&to=1763740800"
	var st market.MarketStats
	decodeOK(t, get(t, srv, gateway.PathStats+"?chainId=42161&optionMarket="+demo.Market+win), &st)
	for path, want := range map[string]*string{
		gateway.PathHostedTVL + "?chainId=42161&optionMarket=" + demo.Market:          st.TVL.USD,
		gateway.PathHostedOpenInterest + "?chainId=42161&optionMarket=" + demo.Market: st.OpenInterest.USD,
		gateway.PathHostedVolume + "?chainId=42161&optionMarket=" + demo.Market + win: st.Totals.Volume.USD,
		"/clamm/stats/tvl/" + demo.Pool + "?chainId=42161":                            st.TVL.USD, // the demo's one market holds every range of its one pool
		gateway.PathHostedDAU + "?chainId=42161&optionMarket=" + demo.Market + win:    strPtr(big.NewInt(int64(st.Totals.Buyers)).String()),
		gateway.PathHostedTotalVolume + "?chainId=42161":                              st.Totals.Volume.USD, // the scenario's ten days are within 366
	} {
		if got := strings.TrimSpace(get(t, srv, path).Body.String()); want == nil || !sameDec(got, *want) {
			t.Errorf("%s: %s, /clamm/stats says %v", path, got, strOr(want))
		}
	}
	var lb market.Leaderboard
	decodeOK(t, get(t, srv, gateway.PathLeaderboard+"?chainId=42161"+win+"&first=100&skip=0"), &lb)
	if len(lb.Entries) < 2 {
		t.Fatalf("%d leaderboard entries", len(lb.Entries))
	}
	for _, e := range lb.Entries {
		var ds []struct {
			Delta     json.Number `json:"delta"`
			Timestamp int64       `json:"timestamp"`
		}
		decodeOK(t, get(t, srv, gateway.PathPnlDelta+"?chains=42161,5000&user="+e.Trader+win), &ds)
		sum := new(big.Rat)
		for _, d := range ds {
			r, _ := new(big.Rat).SetString(string(d.Delta))
			sum.Add(sum, r)
		}
		if want, _ := new(big.Rat).SetString(e.USD.Net); sum.Cmp(want) != 0 || len(ds) == 0 {
			t.Errorf("%s: %d deltas sum to %s, the leaderboard's net is %s", e.Trader, len(ds), sum.FloatString(6), e.USD.Net)
		}
	}
}

func strPtr(s string) *string { return &s }

func strOr(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}

func sameDec(a, b string) bool {
	x, ok1 := new(big.Rat).SetString(a)
	y, ok2 := new(big.Rat).SetString(b)
	return ok1 && ok2 && x.Cmp(y) == 0
}

func decodeOK(t *testing.T, rec interface{ Result() *http.Response }, v any) {
	t.Helper()
	res := rec.Result()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	dec := json.NewDecoder(res.Body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatal(err)
	}
}

// The portfolio is the gateway's other answers joined, none of their maths
// done again: on the demo, alice's chain totals by token are the
// leaderboard's tokens[].net over the whole history, her realizedUsd its
// usd.net, her open options the positions' records with their values,
// and every option's realized is its purchase's premium and fees against
// its exercises' profitToOwner from the histories.
func TestPortfolioIsTheHistories(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	var pf gateway.Portfolio
	decodeOK(t, get(t, srv, gateway.PathPortfolio+"?chains=42161,421614&user="+demo.Alice), &pf)
	if len(pf.Chains) != 1 || pf.Chains[0].Block.Number == 0 || len(pf.UnservedChains) != 1 || len(pf.Chains[0].Markets) != 1 {
		t.Fatalf("%+v", pf)
	}
	c := pf.Chains[0]
	// the demo's history lies in its ten days, which this window holds
	var lb market.Leaderboard
	decodeOK(t, get(t, srv, gateway.PathLeaderboard+"?chainId=42161&from=1762732800&to=1763740800&first=100&skip=0"), &lb)
	var entry *market.LeaderboardEntry
	for i := range lb.Entries {
		if strings.EqualFold(lb.Entries[i].Trader, demo.Alice) {
			entry = &lb.Entries[i]
		}
	}
	if entry == nil || c.Totals.RealizedUSD == nil || !sameDec(*c.Totals.RealizedUSD, entry.USD.Net) {
		t.Fatalf("realizedUsd %v, the leaderboard's net %+v", c.Totals.RealizedUSD, entry)
	}
	for _, f := range entry.Tokens {
		if got := amountOf(c.Totals.Realized, f.Token.Address); got != f.Net {
			t.Errorf("realized %s: %s, the leaderboard's net %s", f.Token.Symbol, got, f.Net)
		}
	}
	var positions []struct {
		OptionID         string `json:"optionId"`
		ValueIfExercised string `json:"valueIfExercised"`
	}
	decodeOK(t, get(t, srv, gateway.PathPurchasePositions+"?chainId=42161&user="+demo.Alice+"&optionMarket="+demo.Market+"&first=100&skip=0"), &positions)
	if c.Totals.OpenOptions != len(positions) || len(positions) == 0 {
		t.Errorf("%d open options, the positions list %d", c.Totals.OpenOptions, len(positions))
	}
	byID := map[string]string{}
	for _, p := range positions {
		byID[p.OptionID] = p.ValueIfExercised
	}
	for _, o := range c.Markets[0].Options {
		if v, open := byID[o.OptionID]; open != o.Open || open && v != o.ValueIfExercised.Amount {
			t.Errorf("option %s: open %v value %s; the positions: %v %s", o.OptionID, o.Open, o.ValueIfExercised.Amount, open, v)
		}
		paid, profit := new(big.Int), new(big.Int)
		paid.SetString(o.PremiumPaid.Amount, 10)
		profit.SetString(o.ExerciseProfit.Amount, 10)
		if amountOf(o.Realized, o.ExerciseProfit.Token.Address) != profit.String() || amountOf(o.Realized, o.PremiumPaid.Token.Address) != new(big.Int).Neg(paid).String() {
			t.Errorf("option %s: realized %v, profit %s and paid %s", o.OptionID, o.Realized, profit, paid)
		}
	}
}

func amountOf(l []vocab.TokenAmount, token string) string {
	for _, a := range l {
		if strings.EqualFold(a.Token.Address, token) {
			return a.Amount
		}
	}
	return "0"
}
