package systemtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

const alice = "0xA11CE00000000000000000000000000000000001"

var historyParams = map[string]string{
	"chainId": "42161", "user": alice, "optionMarket": wethUSDC, "first": "5", "skip": "0",
}

func TestHistoryParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	cases := []struct {
		param, value string
		drop         bool
	}{
		{"chainId", "", true}, {"chainId", "5", false}, {"chainId", "0x a4b1", false},
		{"user", "", true}, {"user", "0xA11CE", false}, {"user", "alice", false},
		{"optionMarket", "", true}, {"optionMarket", "0x" + strings.Repeat("z", 40), false},
		{"first", "", true}, {"first", "0", false}, {"first", "1001", false}, {"first", "-1", false}, {"first", "2.5", false},
		{"skip", "", true}, {"skip", "5001", false}, {"skip", "-1", false}, {"skip", "1e3", false},
	}
	// Purchase history and positions take exercise history's parameters.
	for _, path := range historyPaths {
		for _, c := range cases {
			rec := get(t, srv, path+"?"+query(historyParams, c.param, c.value, c.drop))
			e := decodeError(t, rec)
			if rec.Code != http.StatusBadRequest || e.Param != c.param {
				t.Errorf("%s %s=%q drop=%v: status %d, %+v", path, c.param, c.value, c.drop, rec.Code, e)
			}
		}
	}
	if f.Subgraph.Requests() != 0 {
		t.Error("invalid requests reached the subgraph")
	}
}

// first and skip reach the subgraph exactly as given; the user and market
// reach it lowercase (Graph Node compares Bytes exactly), whatever case the
// client sent.
func TestHistoryPassesPagingAndLowercaseAddresses(t *testing.T) {
	t.Parallel()
	for _, op := range []struct{ path, operation string }{
		{gateway.PathExerciseHistory, "ExerciseHistory"}, {gateway.PathPurchaseHistory, "PurchaseHistory"},
		{gateway.PathPurchasePositions, "PurchasePositions"},
	} {
		srv, f := newFakeServer(t)
		for _, c := range []struct{ user, first, skip string }{
			{alice, "3", "2"}, {strings.ToLower(alice), "1000", "5000"}, {"0x" + strings.ToUpper(alice[2:]), "1", "0"},
		} {
			q := query(map[string]string{"chainId": "42161", "user": c.user, "optionMarket": wethUSDC, "first": c.first, "skip": "0"}, "skip", c.skip, false)
			rec := get(t, srv, op.path+"?"+q)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: status %d: %s", op.path, rec.Code, rec.Body)
			}
			v := f.Subgraph.LastVariables(op.operation)
			if v["first"] != jsonNumber(c.first) || v["skip"] != jsonNumber(c.skip) {
				t.Errorf("%s: subgraph got first=%v skip=%v, want %s %s", op.path, v["first"], v["skip"], c.first, c.skip)
			}
			if v["user"] != strings.ToLower(alice) || v["market"] != strings.ToLower(wethUSDC) {
				t.Errorf("%s: subgraph got user=%v market=%v", op.path, v["user"], v["market"])
			}
		}
		// Different case, same answer.
		a := get(t, srv, op.path+"?"+query(historyParams, "user", strings.ToLower(alice), false))
		b := get(t, srv, op.path+"?"+query(historyParams, "user", "0x"+strings.ToUpper(alice[2:]), false))
		if a.Code != 200 || a.Body.String() != b.Body.String() || !strings.Contains(a.Body.String(), `"optionId"`) {
			t.Fatalf("%s: case changed the answer: %s vs %s", op.path, a.Body, b.Body)
		}
	}
}

func jsonNumber(s string) float64 {
	var f float64
	for _, c := range s {
		f = f*10 + float64(c-'0')
	}
	return f
}

// historyPaths are the routes that take exercise history's parameters.
var historyPaths = []string{gateway.PathExerciseHistory, gateway.PathPurchaseHistory, gateway.PathPurchasePositions}

func TestHistoryEmptyIsArray(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	for _, path := range historyPaths {
		rec := get(t, srv, path+"?"+query(historyParams, "user", "0x000000000000000000000000000000000000dEaD", false))
		if rec.Code != http.StatusOK || rec.Body.String() != "[]" {
			t.Fatalf("%s: status %d body %q", path, rec.Code, rec.Body)
		}
	}
}

func TestHistoryUpstreamErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		fail *graphnodetest.Failure
		code string
		st   int
	}{
		{&graphnodetest.Failure{Errors: []string{"indexing_error"}}, "SUBGRAPH_INDEXING_ERROR", 502},
		{&graphnodetest.Failure{Errors: []string{"Failed to decode `Bytes` value"}}, "SUBGRAPH_ERROR", 502},
		{&graphnodetest.Failure{Status: 503}, "SUBGRAPH_UNAVAILABLE", 503},
	} {
		for _, p := range historyPaths {
			srv, f := newFakeServer(t)
			failing := true
			f.Subgraph.Fail = func(string) *graphnodetest.Failure {
				if failing {
					return c.fail
				}
				return nil
			}
			path := p + "?" + query(historyParams, "", "", false)
			rec := get(t, srv, path)
			if e := decodeError(t, rec); rec.Code != c.st || e.Code != c.code {
				t.Errorf("%s: status %d code %s, want %d %s", p, rec.Code, e.Code, c.st, c.code)
			}
			failing = false
			if rec := get(t, srv, path); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Errorf("%s after recovery: %d %s", p, rec.Code, rec.Header().Get("X-Cache"))
			}
		}
	}
}
