package systemtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/demo"
)

// The demo's history keeps one clock: every answer of the sweep at a
// pinned block before the head is dated (X-Block-Timestamp, asOf) no
// earlier than the newest event it lists. The fake node once dated a
// past block one second per block back from the head while the history
// places four blocks in a second, so a block a day back by the history
// was dated four days back, and its answers listed events days after it.
func TestDemoPastBlocksAreDatedAfterTheirEvents(t *testing.T) {
	t.Parallel()
	paths, err := demo.Sweep(sweepRoutes(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := newDemoServer(t)
	head := demo.HistoryBlocks[0]
	checked, dated := 0, 0
	for _, p := range paths {
		u, err := url.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if b := u.Query().Get("block"); b == "" || b == head {
			continue
		}
		rec := get(t, srv, p)
		if rec.Code != http.StatusOK {
			continue
		}
		at, err := strconv.ParseInt(rec.Header().Get("X-Block-Timestamp"), 10, 64)
		if err != nil {
			t.Fatalf("%s: X-Block-Timestamp %q", p, rec.Header().Get("X-Block-Timestamp"))
		}
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		checked++
		for _, ts := range eventTimes(body, "") {
			dated++
			if ts > at {
				t.Errorf("%s: dated %d, lists an event at %d (%d s later)", p, at, ts, ts-at)
				break
			}
		}
	}
	if checked == 0 || dated == 0 {
		t.Fatalf("%d answers at past blocks, %d event times: is the sweep still pinning blocks?", checked, dated)
	}
	t.Logf("%d answers at past blocks, %d event times", checked, dated)
}

// eventTimes are the times of the events an answer lists: every
// "timestamp" field outside the answer's own asOf and a prepare's
// simulatedAt (its transactions are simulated at the chain's head, after
// the block its figures are read at: docs/api.md).
func eventTimes(v any, key string) []int64 {
	var out []int64
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != "asOf" && k != "simulatedAt" {
				out = append(out, eventTimes(e, k)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, eventTimes(e, key)...)
		}
	case string:
		if key == "timestamp" {
			if ts, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				out = append(out, ts)
			}
		}
	case float64:
		if key == "timestamp" {
			out = append(out, int64(x))
		}
	}
	return out
}

// A request the demo does not hold is refused naming the values it holds
// for that route (the options chain's reaches, the quote's strikes and
// amounts), never only the demo-wide users and options, and the live
// modes, the RPC-only one included.
func TestDemoNotRecordedNamesTheRoutesValues(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	m := "chainId=42161&optionMarket=" + demo.Market
	for path, want := range map[string][]string{
		"/clamm/options-chain?" + m + "&callsReach=5&putsReach=5&ttls=3600": {"for /clamm/options-chain the demo holds", "callsReach,putsReach (10,10) | (1,1) | (100,100) | (7,3) | (1000,1000)", "ttls 3600,86400 | 3600"},
		"/clamm/purchase/quote?" + m + "&user=0x0000000000000000000000000000000000000000&type=call&strike=3004.9080590767317&ttl=86400&amount=2000000000000000000": {
			"for /clamm/purchase/quote the demo holds", "(call,3004.9080590767317,1000000000000000000)", "ttl 86400 | 3600 | 7200 | 604800"},
	} {
		rec := get(t, srv, path)
		e := decodeError(t, rec)
		if rec.Code != http.StatusNotFound || e.Code != "NOT_RECORDED" {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		for _, w := range append(want, "CLAMM_CHAIN_42161_RPC_URL (an archive node") {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%s: the message does not name %q: %s", path, w, e.Message)
			}
		}
		if strings.Contains(e.Message, "| 1000;") {
			t.Errorf("%s: lists the refused block 1000 as held: %s", path, e.Message)
		}
	}
}

// What the README claims of the demo beyond the sweep's values: the
// strikes chain at any reach, any page of any user's histories and
// positions, an exercise prepared at any slippage through either swapper
// (as at the sweep's slippage: the same status), each answered, none
// NOT_RECORDED.
func TestDemoAnswersWhatTheREADMEClaims(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	m := "chainId=42161&optionMarket=" + demo.Market
	var paths []string
	for reach := 1; reach <= 30; reach++ {
		paths = append(paths, fmt.Sprintf("/clamm/strikes-chain?%s&callsReach=%d&putsReach=%d", m, reach, 31-reach))
	}
	for _, user := range []string{demo.Alice, demo.Bob, demo.Carol, demo.Dave} {
		for _, page := range []string{"first=3&skip=1", "first=2&skip=7", "first=7&skip=0"} {
			for _, route := range []string{"exercise/history", "purchase/history", "purchase/positions", "settlements/history"} {
				paths = append(paths, fmt.Sprintf("/clamm/%s?%s&user=%s&%s", route, m, user, page))
			}
			for _, route := range []string{"deposit/history", "withdraw/history", "deposit/positions"} {
				paths = append(paths, fmt.Sprintf("/clamm/%s?chainId=42161&user=%s&%s", route, user, page))
			}
		}
	}
	for _, p := range paths {
		rec := get(t, srv, p)
		// bob holds no ranges: his deposit positions are a 404 of their own
		if rec.Code != http.StatusOK && (rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "NOT_RECORDED")) {
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		}
	}
	readmeBalances(t, srv)
	for _, id := range demo.OptionIDs {
		for _, sw := range []string{"uni-v3", "1inch"} {
			q := fmt.Sprintf("/clamm/exercise/prepare?%s&optionId=%d&swapperId=%s&slippage=", m, id, sw)
			want := get(t, srv, q+"1").Code
			for _, s := range []string{"0.3", "1.7", "4.25"} {
				if rec := get(t, srv, q+s); rec.Code != want {
					t.Errorf("%s%s: %d, at slippage 1 %d: %s", q, s, rec.Code, want, rec.Body)
				}
			}
		}
	}
}

// readmeBalances holds the README's claim of the demo's stated balances:
// every purchase and deposit of the sweep alice asks is paid for (one
// refused is refused for something else than her balance, and she has a
// 200 on each route); bob's are refused for his balance of 0.
func readmeBalances(t *testing.T, srv http.Handler) {
	t.Helper()
	paths, err := demo.Sweep(sweepRoutes(t))
	if err != nil {
		t.Fatal(err)
	}
	paid := map[string]int{}
	for _, p := range paths {
		route, query, _ := strings.Cut(p, "?")
		if route != "/clamm/purchase/prepare" && route != "/clamm/deposit/prepare" {
			continue
		}
		q, _ := url.ParseQuery(query)
		user := q.Get("user")
		if user != demo.Alice && user != demo.Bob {
			continue
		}
		rec := get(t, srv, p)
		short := rec.Code == http.StatusUnprocessableEntity && strings.Contains(rec.Body.String(), "exceeds balance")
		switch {
		case user == demo.Alice && short:
			t.Errorf("%s: alice's balance is short: %s", p, rec.Body)
		case user == demo.Alice && rec.Code == http.StatusOK:
			paid[route]++
		case user == demo.Bob && !short:
			t.Errorf("%s: bob, who holds nothing: %d %s", p, rec.Code, rec.Body)
		}
	}
	if paid["/clamm/purchase/prepare"] == 0 || paid["/clamm/deposit/prepare"] == 0 {
		t.Errorf("alice's prepares answered 200: %v", paid)
	}
}
