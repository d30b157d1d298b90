package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// The hosted PnL shapes on the statistics' three days of trades, indexed
// by the subgraph's mappings from the chain's logs, against what the
// chain says (boardFromChain: LogMintOption's amounts, and the profit
// token's ERC20 Transfers to the owner in each exercise's transaction,
// valued at each log's pool price): every trader's stats/delta sums to
// the chain's net over the window, and delta-bounded-all's rows over a
// period are the chain's figures over the period's window, in the
// chain's order. Every hosted path answers its client's type here too.
func TestPipelineHostedPnl(t *testing.T) {
	p, a, ev, d3 := boardSetup(t)
	w := [2]int64{d3 - 2*86400, d3 + 86400}
	lines := boardFromChain(t, p, ev, w)
	if len(lines) < 3 {
		t.Fatalf("%d traders on the chain, want at least 3", len(lines))
	}
	win := "&from=" + strconv.FormatInt(w[0], 10) + "&to=" + strconv.FormatInt(w[1], 10)
	for _, l := range lines {
		f := strings.Fields(l) // trader purchases exercises usd volume premiums fees realised net ...
		body, _ := hostedAsk(t, a, gateway.PathPnlDelta+"?chains=42161&user="+f[0]+win, hostedtypes.StatsPaths[gateway.PathPnlDelta])
		var ds []struct {
			Delta     json.Number `json:"delta"`
			Timestamp int64       `json:"timestamp"`
		}
		decodeNumbers(t, body, &ds)
		sum, last := new(big.Rat), int64(0)
		for _, d := range ds {
			sum.Add(sum, rat(t, string(d.Delta)))
			if d.Timestamp < last || d.Timestamp < w[0] || d.Timestamp >= w[1] {
				t.Errorf("%s: delta at %d, out of order or outside %v", f[0], d.Timestamp, w)
			}
			last = d.Timestamp
		}
		if sum.Cmp(rat(t, f[8])) != 0 {
			t.Errorf("%s: %d deltas sum to %s; the chain's net over the window is %s", f[0], len(ds), sum.FloatString(18), f[8])
		}
	}
	for _, period := range []struct {
		name string
		secs int64
	}{{"1D", 86400}, {"1W", 7 * 86400}} {
		body, ts := hostedAsk(t, a, gateway.PathBoundedAll+"?chainId=42161&period="+period.name, hostedtypes.StatsPaths[gateway.PathBoundedAll])
		want := boardFromChain(t, p, ev, [2]int64{ts + 1 - period.secs, ts + 1})
		var rows []map[string]any
		decodeNumbers(t, body, &rows)
		num := func(v any) string { n, _ := v.(json.Number); return string(n) }
		if len(rows) != len(want) {
			t.Fatalf("period %s: %d rows, the chain has %d traders", period.name, len(rows), len(want))
		}
		for i, r := range rows {
			f := strings.Fields(want[i])
			paid := new(big.Rat).Add(rat(t, f[5]), rat(t, f[6]))
			user, _ := r["user"].(string)
			if strings.ToLower(user) != f[0] || rat(t, num(r["pnl"])).Cmp(rat(t, f[8])) != 0 ||
				rat(t, num(r["premiumPaid"])).Cmp(paid) != 0 || rat(t, num(r["volume"])).Cmp(rat(t, f[4])) != 0 || num(r["totalOptionsBought"]) != f[1] {
				t.Errorf("period %s, row %d: %v\n the chain says %s", period.name, i, r, want[i])
			}
		}
	}
	market := "?chainId=42161&optionMarket=" + p.Market.Hex()
	for path, q := range map[string]string{
		gateway.PathHostedTVL: market, gateway.PathHostedOpenInterest: market, gateway.PathHostedVolume: market + win,
		gateway.PathHostedDAU: market + win, gateway.PathHostedFees: market + win, gateway.PathHostedTotalVolume: "?chainId=42161",
		"/clamm/stats/tvl/" + p.Pool.Hex(): "?chainId=42161", gateway.PathBoundedUser: "?chainId=42161&period=6M&user=" + p.Users[1].Addr.Hex(),
	} {
		shape := hostedtypes.StatsPaths[path]
		if strings.HasPrefix(path, "/clamm/stats/tvl/0x") {
			shape = hostedtypes.StatsPaths[gateway.PathHostedPoolTVL]
		}
		hostedAsk(t, a, path+q, shape)
	}
}

// hostedAsk asks the gateway, holds a 200 answer to the client's type and
// gives it with its block's time.
func hostedAsk(t *testing.T, a *app.App, url string, shape hostedtypes.Type) ([]byte, int64) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	for _, p := range hostedtypes.Check(rec.Body.Bytes(), shape) {
		t.Errorf("%s: %s\n%s", url, p, rec.Body)
	}
	ts, err := strconv.ParseInt(rec.Header().Get("X-Block-Timestamp"), 10, 64)
	if err != nil {
		t.Fatalf("%s: X-Block-Timestamp %q", url, rec.Header().Get("X-Block-Timestamp"))
	}
	return rec.Body.Bytes(), ts
}

func decodeNumbers(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatal(err)
	}
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%q is not a decimal", s)
	}
	return r
}
