package systemtest

import (
	"encoding/json"
	"maps"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

type positionJSON struct {
	OptionID         string `json:"optionId"`
	Exercisable      bool   `json:"exercisable"`
	ValueIfExercised string `json:"valueIfExercised"`
	Legs             []struct {
		Liquidity string `json:"liquidity"`
	} `json:"legs"`
}

func positions(t *testing.T, srv http.Handler, user string) []positionJSON {
	t.Helper()
	params := map[string]string{"chainId": "42161", "optionMarket": wethUSDC, "user": user, "first": "100", "skip": "0"}
	rec := get(t, srv, gateway.PathPurchasePositions+"?"+query(params, "", "", false))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Subgraph-Block") == "" || rec.Header().Get("ETag") == "" {
		t.Fatalf("status %d headers %v: %s", rec.Code, rec.Header(), rec.Body)
	}
	var out []positionJSON
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(ps []positionJSON) map[string]positionJSON {
	m := map[string]positionJSON{}
	for _, p := range ps {
		m[p.OptionID] = p
	}
	return m
}

// Positions follow the current owner: option 114, bought by alice and
// transferred to bob, is bob's and not alice's; bob's own 109, exercised in
// full, is gone although the subgraph still lists it as his.
func TestPositionsFollowOwner(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	a, b := ids(positions(t, srv, alice)), ids(positions(t, srv, bob))
	if _, ok := a["114"]; ok {
		t.Errorf("alice still holds the option she transferred: %v", a)
	}
	if _, ok := b["114"]; !ok || len(b) != 1 {
		t.Errorf("bob's positions %v, want only 114", b)
	}
	if v := f.Subgraph.LastVariables("PurchasePositions"); v["user"] != "0xb0b0000000000000000000000000000000000002" {
		t.Errorf("subgraph asked for %v", v)
	}
}

// An option exercised in full (no liquidity left on chain) leaves the
// positions, even though the subgraph still names it (it cannot tell a full
// exercise from a partial one); a partial one stays with what it has left.
// The chain also has the last word on ownership: an option transferred
// after the subgraph's block leaves its old owner's positions at once.
func TestPositionsChainHasTheLastWord(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	before := ids(positions(t, srv, alice))
	for _, id := range []string{"110", "111", "112", "113"} {
		if _, ok := before[id]; !ok {
			t.Fatalf("alice's open option %s missing: %v", id, before)
		}
	}
	listed := map[string]bool{}
	for _, id := range f.Subgraph.Store.All("Option") {
		o := f.Subgraph.Store.Get("Option", id)
		if o["owner"].JSON() == "0xa11ce00000000000000000000000000000000001" && o["state"].Str == "Exercised" {
			listed[o["tokenId"].Big.String()] = true
		}
	}
	for _, id := range []string{"101", "105", "107", "108"} {
		if _, ok := before[id]; ok || !listed[id] {
			t.Errorf("exercised-in-full option %s listed (%v), or not named by the subgraph (%v)", id, ok, listed[id])
		}
	}
	market := f.Node.Markets[common.HexToAddress(wethUSDC)]
	f.Node.Lock()
	market.Options[110].Legs[0].Liquidity = new(big.Int)
	market.Options[110].Legs[1].Liquidity = new(big.Int)
	market.Options[111].Legs[0].Liquidity = big.NewInt(1000)
	market.Options[113].Owner = common.HexToAddress(bob)
	f.Node.Unlock()
	// Another page size is another cache entry: a fresh read.
	rec := get(t, srv, gateway.PathPurchasePositions+"?"+query(historyParams, "first", "99", false))
	var list []positionJSON
	if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
		t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("X-Cache"), rec.Body)
	}
	after := ids(list)
	if _, ok := after["110"]; ok {
		t.Error("option 110, exercised in full, still listed")
	}
	if _, ok := after["113"]; ok {
		t.Error("option 113, transferred on chain, still listed under alice")
	}
	if p, ok := after["111"]; !ok || p.Legs[0].Liquidity != "1000" {
		t.Errorf("partially exercised 111: %+v", p)
	}
}

// The value if exercised now is prepare's profit less price impact; the
// fake pools have none, so for the demo's in-the-money call (two legs) and
// put they are equal.
func TestPositionValueMatchesPrepare(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	got := ids(positions(t, srv, alice))
	for _, id := range []string{"110", "111"} {
		rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", id, false))
		var prep struct {
			Profit string `json:"profit"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &prep) != nil {
			t.Fatalf("prepare %s: %d %s", id, rec.Code, rec.Body)
		}
		if p := got[id]; !p.Exercisable || p.ValueIfExercised != prep.Profit || prep.Profit == "0" {
			t.Errorf("option %s: value %s exercisable %v, prepare's profit %s", id, p.ValueIfExercised, p.Exercisable, prep.Profit)
		}
	}
	if p := got["112"]; p.Exercisable {
		t.Error("expired option 112 exercisable")
	}
}

// positionsWith asks for alice's positions with another page size (another
// cache entry: a fresh read of the chain).
func positionsWith(t *testing.T, srv http.Handler, first string) map[string]positionJSON {
	t.Helper()
	rec := get(t, srv, gateway.PathPurchasePositions+"?"+query(historyParams, "first", first, false))
	var list []positionJSON
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &list) != nil {
		t.Fatalf("%d: %s", rec.Code, rec.Body)
	}
	return ids(list)
}

// A leg whose range holds the pool's price cannot be exercised: the
// handler re-mints its liquidity from the profit token alone, which then
// needs both tokens, and the exercise reverts (prepare's simulation leaves
// such a leg out). Its value is not counted: option 110 with such a leg is
// worth what it is worth with that leg emptied; option 113 whose only leg
// holds the price is not exercisable and worth 0, though a swap at the
// pool's price would pay more than its LPs are owed.
func TestPositionsLeaveOutLegsWhoseRemintReverts(t *testing.T) {
	srv, f := newFakeServer(t)
	market := f.Node.Markets[common.HexToAddress(wethUSDC)]
	const tick = -196210
	sqrtP, err := clamm.SqrtRatioAtTick(tick)
	if err != nil {
		t.Fatal(err)
	}
	f.Node.Lock()
	pool := f.Node.Pools[market.PrimePool]
	pool.Tick, pool.SqrtPriceX96 = tick, sqrtP
	// Wide ranges around the price: a swap at the price pays well over
	// the range's average price and the pool's fee.
	market.Options[110].Legs[1].TickLower, market.Options[110].Legs[1].TickUpper = -196400, -196200
	market.Options[113].Legs[0].TickLower, market.Options[113].Legs[0].TickUpper = -196400, -196200
	f.Node.Unlock()

	got := positionsWith(t, srv, "98")
	if p := got["113"]; p.Exercisable || p.ValueIfExercised != "0" {
		t.Errorf("option 113, its one leg holding the price: exercisable %v value %s", p.Exercisable, p.ValueIfExercised)
	}
	with := got["110"]
	f.Node.Lock()
	market.Options[110].Legs[1].Liquidity = new(big.Int)
	f.Node.Unlock()
	without := positionsWith(t, srv, "97")["110"]
	if !with.Exercisable || with.ValueIfExercised == "0" || with.ValueIfExercised != without.ValueIfExercised {
		t.Errorf("option 110: value %s (exercisable %v) with a leg holding the price, %s with that leg emptied", with.ValueIfExercised, with.Exercisable, without.ValueIfExercised)
	}
}

// A page of positions is one RPC round trip for its options, whatever
// their number (before: one request per option named by the subgraph),
// and never reads more options than the page asks for. Beside it: one
// read of the auto-exerciser and the owner's opt-in, and for each option
// in the money the two round trips of its exercise value (its legs'
// quotes, its simulated exercise), as the prepared exercise makes them.
func TestPositionsPageIsOneRoundTrip(t *testing.T) {
	srv, f := newFakeServer(t)
	positions(t, srv, alice) // the market's immutable facts are now warm
	candidates := 0
	for _, id := range f.Subgraph.Store.All("Option") {
		if o := f.Subgraph.Store.Get("Option", id); strings.EqualFold(common.BytesToAddress(o["owner"].Bytes).Hex(), alice) {
			candidates++
		}
	}
	before := f.Node.Requests()
	page := positionsWith(t, srv, "99")
	inTheMoney := 0
	for _, p := range page {
		if p.Exercisable {
			inTheMoney++
		}
	}
	if n := f.Node.Requests() - before; n > 3+2*int64(inTheMoney) || candidates < 5 {
		t.Fatalf("%d RPC requests for a page of %d candidates, %d in the money; want the pool's price, one batch, the auto-exerciser's read and two per option in the money", n, candidates, inTheMoney)
	}
}

// A positions miss asks the subgraph once: every position it keeps is the
// user's, known before any read, so the page's document also reads the
// user's enabled delegates at its block (the answer names them) instead
// of a second request after the chain's reads. A replacing document
// without that field (an operator's, from the queries directory) still
// gets the same answer, from a second request.
func TestPositionsMissAsksTheSubgraphOnce(t *testing.T) {
	t.Parallel()
	path := gateway.PathPurchasePositions + "?chainId=42161&optionMarket=" + wethUSDC + "&user=" + bob + "&first=10&skip=0"
	docs := queries.Embedded()
	d := docs[queries.PurchasePositions]
	cut := strings.Index(d.Text, "  exerciseDelegates(")
	if cut < 0 {
		t.Fatal("the positions document reads no delegates")
	}
	d.Text = d.Text[:cut] + "}\n"
	docs[queries.PurchasePositions] = d
	var bodies []string
	for _, c := range []struct {
		docs queries.Set
		want map[string]int64
	}{
		{nil, map[string]int64{"PurchasePositions": 1}},
		{docs, map[string]int64{"PurchasePositions": 1, "ExerciseDelegates": 1}},
	} {
		f := scenario.NewFakes(t, demoScenario(t))
		srv := newApp(t, app.Options{Config: config.Default(), Transports: onFakes(f), Queries: c.docs})
		rec := get(t, srv, path)
		if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
			t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("X-Cache"), rec.Body)
		}
		var list []struct{ Delegates []string }
		if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list) == 0 || len(list[0].Delegates) == 0 {
			t.Fatalf("bob's positions name no delegate (%v): %s", err, rec.Body)
		}
		if got := f.Subgraph.Operations(); !maps.Equal(got, c.want) {
			t.Errorf("one positions miss asked the subgraph %v, want %v", got, c.want)
		}
		bodies = append(bodies, rec.Body.String())
	}
	if bodies[0] != bodies[1] {
		t.Errorf("the answer depends on where the delegates were read:\n%s\n%s", bodies[0], bodies[1])
	}
}
