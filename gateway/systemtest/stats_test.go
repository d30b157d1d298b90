package systemtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

const statsQuery = "chainId=42161&optionMarket=" + wethUSDC

// A window must be [from, to) with from < to, at most 366 days, in plain
// unix seconds: anything else is a 400 naming the parameter, before any
// upstream is asked.
func TestStatsParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	for q, param := range map[string]string{
		statsQuery + "&to=1763704800":                                   "from",
		statsQuery + "&from=1763553600":                                 "to",
		statsQuery + "&from=-1&to=1763704800":                           "from",
		statsQuery + "&from=1763553600.5&to=1763704800":                 "from",
		statsQuery + "&from=2147400000&to=2147483648":                   "to", // past 2^31-1: GraphQL Int
		statsQuery + "&from=1763704800&to=1763704800":                   "to",
		statsQuery + "&from=1763704800&to=1763553600":                   "to",
		statsQuery + "&from=1700000000&to=1731622401":                   "to", // 366 days and a second
		statsQuery + "&from=1&from=1&to=2":                              "from",
		"chainId=42161&optionMarket=0x12&from=1763553600&to=1763704800": "optionMarket",
		statsQuery + "&from=1763553600&to=1763704800&first=5":           "first",
	} {
		rec := get(t, srv, gateway.PathStats+"?"+q)
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != param {
			t.Errorf("?%s: status %d, %+v; want 400 naming %s", q, rec.Code, e, param)
		}
	}
	if f.Subgraph.Requests() != 0 || f.Node.Requests() != 0 {
		t.Error("invalid requests reached an upstream")
	}
}

// The longest window is answered; the answer carries the subgraph block,
// one day per UTC day touched, and the second request is a hit that asks no
// upstream.
func TestStatsAnswerAndCache(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	path := gateway.PathStats + "?" + statsQuery + "&from=1700000000&to=1731622400" // 366 days
	a := get(t, srv, path)
	var body struct {
		Days []json.RawMessage `json:"days"`
		USD  bool              `json:"usd"`
	}
	if a.Code != http.StatusOK || a.Header().Get("X-Subgraph-Block") == "" || json.Unmarshal(a.Body.Bytes(), &body) != nil || len(body.Days) != 367 || !body.USD {
		t.Fatalf("%d %v: %.300s", a.Code, a.Header(), a.Body)
	}
	sg, node := f.Subgraph.Requests(), f.Node.Requests()
	b := get(t, srv, path)
	if b.Header().Get("X-Cache") != "HIT" || b.Body.String() != a.Body.String() || f.Subgraph.Requests() != sg || f.Node.Requests() != node {
		t.Fatalf("second request: %s", b.Header().Get("X-Cache"))
	}
}

// An address that is not an option market is a 404 naming it, as for the
// strikes chain.
func TestStatsNotAMarket(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	rec := get(t, srv, gateway.PathStats+"?chainId=42161&optionMarket=0x000000000000000000000000000000000000dEaD&from=1763553600&to=1763704800")
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "MARKET_NOT_FOUND" {
		t.Errorf("status %d, %+v", rec.Code, e)
	}
}

// A market the subgraph lists but the chain shows none at (no contract
// there) is left out of every chain-wide answer alike: the chain's
// statistics, the leaderboard and the markets list answer as they do
// without that listing, rather than one of them failing whole.
func TestChainWideAnswersLeaveOutAListingThatIsNoMarket(t *testing.T) {
	t.Parallel()
	paths := []string{
		gateway.PathChainStats + "?chainId=42161&from=1763553600&to=1763704800",
		gateway.PathLeaderboard + "?chainId=42161&from=1762905600&to=1763740800&first=10&skip=0",
		gateway.PathOptionMarkets + "?chainId=42161",
	}
	clean, _ := newFakeServer(t)
	srv, f := newFakeServer(t)
	m := f.Subgraph.Store.Get("Market", strings.ToLower(wethUSDC))
	if m == nil {
		t.Fatal("setup: the scenario's market is not in the fake subgraph")
	}
	const nowhere = "0x000000000000000000000000000000000000dead"
	m["id"] = graphnode.String(nowhere)
	if err := f.Subgraph.Store.Set("Market", nowhere, m, 0); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		want, got := get(t, clean, p), get(t, srv, p)
		if got.Code != http.StatusOK || got.Body.String() != want.Body.String() {
			t.Errorf("%s: %d %.300s\nwithout the listing: %d %.300s", p, got.Code, got.Body, want.Code, want.Body)
		}
	}
}

// An optional address filter left out and the same filter naming the zero
// address are two questions with two cache keys: the second is never
// served the first's answer from the cache.
func TestAbsentFilterIsNotTheZeroAddress(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	const zero = "0x0000000000000000000000000000000000000000"
	const user = "0xA11CE00000000000000000000000000000000001"
	for _, c := range []struct{ without, with string }{
		{gateway.PathLeaderboard + "?chainId=42161&from=1762905600&to=1763740800&first=10&skip=0", "&optionMarket=" + zero},
		{gateway.PathSettlements + "?chainId=42161&user=" + user + "&first=10&skip=0", "&optionMarket=" + zero},
		{gateway.PathDepositHistory + "?chainId=42161&user=" + user + "&first=10&skip=0", "&pool=" + zero},
	} {
		if rec := get(t, srv, c.without); rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", c.without, rec.Code, rec.Body)
		}
		if rec := get(t, srv, c.without+c.with); rec.Header().Get("X-Cache") == "HIT" {
			t.Errorf("%s: served the unfiltered answer from the cache (%d)", c.with, rec.Code)
		}
	}
}
