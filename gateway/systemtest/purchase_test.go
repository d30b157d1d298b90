package systemtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

const (
	demoMarket = "0x501B03BdB431154b8Df17BF1c00756E3a8F21744"
	quoteQuery = gateway.PathPurchaseQuote + "?chainId=42161&optionMarket=" + demoMarket +
		"&user=0x0000000000000000000000000000000000000000&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000"
	chainQuery = gateway.PathOptionsChain + "?chainId=42161&optionMarket=" + demoMarket + "&callsReach=10&putsReach=10&ttls=86400,3600"
)

// Each purchase parameter is validated and named in the 400.
func TestPurchaseParameters(t *testing.T) {
	srv, _ := newFakeServer(t)
	for _, c := range []struct{ from, to, param string }{
		{"type=call", "type=CALL", "type"},
		{"strike=3004.9080590767317", "strike=-3004", "strike"},
		{"strike=3004.9080590767317", "strike=3e3", "strike"},
		{"strike=3004.9080590767317", "strike=3004.", "strike"},
		{"ttl=86400", "ttl=0", "ttl"},
		{"ttl=86400", "ttl=31536001", "ttl"},
		{"amount=1000000000000000000", "amount=0", "amount"},
		{"amount=1000000000000000000", "amount=1.5", "amount"},
		{"user=0x0000000000000000000000000000000000000000", "user=0x12", "user"},
	} {
		path := strings.Replace(quoteQuery, c.from, c.to, 1)
		rec := get(t, srv, path)
		var body struct{ Error struct{ Code, Param string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		if rec.Code != http.StatusBadRequest || body.Error.Param != c.param {
			t.Errorf("%s: %d %s", c.to, rec.Code, rec.Body)
		}
	}
	prepare := strings.Replace(quoteQuery, gateway.PathPurchaseQuote, gateway.PathPurchasePrepare, 1) + "&slippage=1"
	if rec := get(t, srv, prepare); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"param":"user"`) {
		t.Errorf("prepare from the zero address: %d %s", rec.Code, rec.Body)
	}
	for _, ttls := range []string{"", "0", "1,,2", "3600,", "1,2,3,4,5,6,7,8,9", "+3600", "3600;7200"} {
		path := strings.Replace(chainQuery, "ttls=86400,3600", "ttls="+ttls, 1)
		if rec := get(t, srv, path); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"param":"ttls"`) {
			t.Errorf("ttls=%q: %d %s", ttls, rec.Code, rec.Body)
		}
	}
}

// The options chain's ttls are a set: any order or repeat is the same
// answer from the same cache entry; a hit keeps the one allocation every
// endpoint's hit has, as does a quote's.
func TestOptionsChainKeyAndHit(t *testing.T) {
	srv, _ := newFakeServer(t)
	first := get(t, srv, chainQuery)
	if first.Code != http.StatusOK || first.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("%d %s %s", first.Code, first.Header().Get("X-Cache"), first.Body)
	}
	again := get(t, srv, strings.Replace(chainQuery, "ttls=86400,3600", "ttls=3600,86400,3600", 1))
	if again.Header().Get("X-Cache") != "HIT" || again.Body.String() != first.Body.String() {
		t.Errorf("reordered ttls: %s", again.Header().Get("X-Cache"))
	}
	var oc struct{ Expiries []struct{ TTL int } }
	if json.Unmarshal(first.Body.Bytes(), &oc) != nil || len(oc.Expiries) != 2 || oc.Expiries[0].TTL != 3600 {
		t.Errorf("expiries %+v", oc.Expiries)
	}
	if rec := get(t, srv, quoteQuery); rec.Code != http.StatusOK {
		t.Fatalf("quote: %d %s", rec.Code, rec.Body)
	}
	// The gateway's own cost of a hit, the writer reused as net/http's is
	// (a fresh recorder's header map grows with the Vary a compressible
	// answer carries, which is the recorder's allocation, not the hit's).
	for _, path := range []string{chainQuery, quoteQuery} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		w := &discard{h: http.Header{}}
		srv.ServeHTTP(w, req)
		allocs := testing.AllocsPerRun(200, func() { clear(w.h); srv.ServeHTTP(w, req) })
		if allocs > 1 || w.h.Get("X-Cache") != "HIT" {
			t.Errorf("%s: %.1f allocations per hit (%s), want the one every endpoint's hit has", path, allocs, w.h.Get("X-Cache"))
		}
	}
}
