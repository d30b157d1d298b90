package systemtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

// chainId is option-markets' only parameter: missing, repeated, malformed
// or not configured is a 400 naming it, before any upstream is asked.
func TestOptionMarketsParamErrors(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	for _, q := range []string{"", "chainId=", "chainId=5", "chainId=42161&chainId=42161", "chainId=0x%20a4b1", "chainId=-42161", "chainId=99999999999999999999999"} {
		rec := get(t, srv, gateway.PathOptionMarkets+"?"+q)
		if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != "chainId" {
			t.Errorf("?%s: status %d, %+v", q, rec.Code, e)
		}
	}
	if f.Subgraph.Requests() != 0 || f.Node.Requests() != 0 {
		t.Error("invalid requests reached an upstream")
	}
}

// An answer carries the subgraph's block and an ETag; the second request
// is a hit that asks no upstream.
func TestOptionMarketsCached(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	a := get(t, srv, gateway.PathOptionMarkets+"?chainId=42161")
	var markets []struct {
		Address string `json:"address"`
	}
	if a.Code != http.StatusOK || a.Header().Get("X-Subgraph-Block") == "" || a.Header().Get("ETag") == "" ||
		json.Unmarshal(a.Body.Bytes(), &markets) != nil || len(markets) != 1 || markets[0].Address != wethUSDC {
		t.Fatalf("%d %v: %s", a.Code, a.Header(), a.Body)
	}
	sg, node := f.Subgraph.Requests(), f.Node.Requests()
	b := get(t, srv, gateway.PathOptionMarkets+"?chainId=42161")
	if b.Header().Get("X-Cache") != "HIT" || b.Body.String() != a.Body.String() || f.Subgraph.Requests() != sg || f.Node.Requests() != node {
		t.Fatalf("second request: %s", b.Header().Get("X-Cache"))
	}
}

// Each market lists the chain's swappers, the list the exercise prepare
// offers in swapperChoices (same ids, addresses, sources, order). When
// the learned ones cannot be read the markets are still served, still an
// array, each market listing the configured swappers with the reason, and
// that answer is not kept: once the subgraph answers, the next request
// has them all.
func TestOptionMarketsListTheChainsSwappers(t *testing.T) {
	t.Parallel()
	type swapper struct{ ID, Kind, Address, Source string }
	var choices struct{ SwapperChoices []swapper }
	// a degraded answer is kept PrepareTTL: here no time at all
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.PrepareTTL = time.Nanosecond })
	if rec := get(t, srv, gateway.PathExercisePrepare+"?"+query(prepareParams, "", "", false)); rec.Code != http.StatusOK ||
		json.Unmarshal(rec.Body.Bytes(), &choices) != nil || len(choices.SwapperChoices) < 2 {
		t.Fatalf("prepare: %d %.300s", rec.Code, rec.Body)
	}
	read := func() []struct {
		Address         string
		Swappers        []swapper
		SwappersUnknown string
	} {
		t.Helper()
		var out []struct {
			Address         string
			Swappers        []swapper
			SwappersUnknown string
		}
		rec := get(t, srv, gateway.PathOptionMarkets+"?chainId=42161")
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out) == 0 {
			t.Fatalf("%d %.300s", rec.Code, rec.Body)
		}
		return out
	}
	f.Subgraph.Fail = func(op string) *graphnodetest.Failure {
		if op == "Swappers" {
			return &graphnodetest.Failure{Status: http.StatusServiceUnavailable}
		}
		return nil
	}
	var configured []swapper
	for _, c := range choices.SwapperChoices {
		if c.Source == "configured" {
			configured = append(configured, c)
		}
	}
	for _, m := range read() {
		if !slices.Equal(m.Swappers, configured) || !strings.Contains(m.SwappersUnknown, "were not read") {
			t.Errorf("%s with the Swapper read failing: %+v %q", m.Address, m.Swappers, m.SwappersUnknown)
		}
	}
	f.Subgraph.Fail = nil
	for _, m := range read() {
		if m.SwappersUnknown != "" || !slices.Equal(m.Swappers, choices.SwapperChoices) {
			t.Errorf("%s: swappers %+v (%q), the prepare offers %+v", m.Address, m.Swappers, m.SwappersUnknown, choices.SwapperChoices)
		}
	}
}
