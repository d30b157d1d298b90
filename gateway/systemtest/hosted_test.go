package systemtest

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// Every hosted path answers, on the demo, what its clients' own types
// declare (hostedtypes: field names, JSON types, nullability, number
// against string), and an error is a non-2xx status (the clients turn a
// 200 of anything into data).
func TestHostedPathsMatchTheirClients(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, c := range []struct {
		path string
		typ  hostedtypes.Type
	}{
		{"/v1.1/clamm/option-markets?chains=421614,42161,146,8453,81457,5000", hostedtypes.OptionMarketsV2},
		{"/v1.1/clamm/option-markets?chains=42161", hostedtypes.OptionMarketsV2},
		{"/uniswap-prices/mark-price?chainId=42161&ticker=WETH/USDC", hostedtypes.PriceAndTick},
		{"/uniswap-prices/mark-price?chainId=42161&ticker=weth/usdc", hostedtypes.PriceAndTick},
		{"/uniswap-prices/candles?chainId=42161&interval=4h&ticker=WETH/USDC&from=1763553600&to=1763704800", hostedtypes.Candles},
		{"/uniswap-prices/last-price?ticker=WETH/USDC", hostedtypes.LastPrice},
		{"/uniswap-prices/last-price?chainId=42161&ticker=WETH/USDC", hostedtypes.LastPrice},
	} {
		checkHosted(t, srv, c.path, c.typ)
	}
	for _, path := range []string{
		"/uniswap-prices/mark-price?chainId=42161&ticker=WSYK/USDC",
		"/uniswap-prices/candles?chainId=42161&interval=2h&ticker=WETH/USDC&from=1763553600&to=1763704800",
		"/v1.1/clamm/option-markets?chains=42161,arbitrum",
		"/uniswap-prices/mark-price?chainId=42161",
		"/uniswap-prices/last-price?chainId=421614&ticker=WETH/USDC",
	} {
		if rec := get(t, srv, path); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400: %s", path, rec.Code, rec.Body)
		}
	}
}

// The hosted markets list skips a chain the gateway does not serve and
// names it in a header; its figures are the gateway's own routes' (the
// demo market's put asset is USDC, so its put-asset sums are its USD).
func TestHostedMarketsAreTheGatewaysFigures(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	rec := get(t, srv, "/v1.1/clamm/option-markets?chains=421614,42161,80094")
	if rec.Code != http.StatusOK || rec.Header().Get("X-Chains-Skipped") != "421614,80094" {
		t.Fatalf("%d, skipped %q: %s", rec.Code, rec.Header().Get("X-Chains-Skipped"), rec.Body)
	}
	var markets []map[string]any
	decode(t, rec.Body.Bytes(), &markets)
	if len(markets) != 1 || markets[0]["address"] != demo.Market || markets[0]["ticker"] != "WETH/USDC" || markets[0]["pairName"] != "WETH-USDC" {
		t.Fatalf("%v", markets)
	}
	m := markets[0]
	// the demo's market is Arbitrum's 2024 WETH/USDC, which the registry
	// says 0xcd69 superseded; 0xcd69 is not listed on the demo, so it is
	// not deprecated (the hosted clients drop deprecated markets and would
	// show none), takes limit orders (Arbitrum has a LimitOrders) and is
	// found by its ticker (below)
	if config.Default().Chains[42161].LimitOrders == (common.Address{}) {
		t.Fatal("Arbitrum's defaults name no LimitOrders: the case below is not exercised")
	}
	if m["deprecated"] != false || m["isLimitOrdersEnabled"] != true {
		t.Errorf("the superseded demo market, its successor not listed: deprecated %v, isLimitOrdersEnabled %v", m["deprecated"], m["isLimitOrdersEnabled"])
	}
	var stats struct {
		OpenInterest struct{ USD string } `json:"openInterest"`
		TVL          struct{ USD string } `json:"tvl"`
	}
	st := get(t, srv, "/clamm/stats?chainId=42161&optionMarket="+demo.Market+"&from=1763640000&to=1763726400")
	decode(t, st.Body.Bytes(), &stats)
	for name, want := range map[string]string{"totalLiquidity": stats.TVL.USD, "openInterest": stats.OpenInterest.USD} {
		if !sameDecimal(m[name], want) {
			t.Errorf("%s %v, /clamm/stats says %s", name, m[name], want)
		}
	}
	if only := get(t, srv, "/v1.1/clamm/option-markets?chains=80094"); only.Code != http.StatusOK || strings.TrimSpace(only.Body.String()) != "[]" {
		t.Errorf("only unserved chains: %d %s", only.Code, only.Body)
	}
	var mp struct {
		MarkPrice string `json:"markPrice"`
	}
	decode(t, get(t, srv, "/clamm/mark-price?chainId=42161&optionMarket="+demo.Market).Body.Bytes(), &mp)
	var byTicker struct {
		MarkPrice json.Number `json:"markPrice"`
	}
	decode(t, get(t, srv, "/uniswap-prices/mark-price?chainId=42161&ticker=WETH/USDC.E").Body.Bytes(), &byTicker)
	if byTicker.MarkPrice != "" {
		t.Errorf("WETH/USDC.E found a market on the demo, which has WETH/USDC only: %v", byTicker)
	}
	decode(t, get(t, srv, "/uniswap-prices/mark-price?chainId=42161&ticker=Weth/Usdc").Body.Bytes(), &byTicker)
	if mp.MarkPrice == "" || string(byTicker.MarkPrice) != mp.MarkPrice {
		t.Errorf("mark price by ticker %s, by market %s", byTicker.MarkPrice, mp.MarkPrice)
	}
	// last-price takes a chainId, and without one answers for Arbitrum
	var last, lastOn struct {
		LastPrice json.Number `json:"lastPrice"`
	}
	decode(t, get(t, srv, "/uniswap-prices/last-price?ticker=WETH/USDC").Body.Bytes(), &last)
	decode(t, get(t, srv, "/uniswap-prices/last-price?chainId=42161&ticker=weth/usdc").Body.Bytes(), &lastOn)
	if string(last.LastPrice) != mp.MarkPrice || lastOn != last {
		t.Errorf("last price %s, on 42161 %s, mark price %s", last.LastPrice, lastOn.LastPrice, mp.MarkPrice)
	}
}

// checkHosted asks path and holds a 200 answer to the client's type.
func checkHosted(t *testing.T, srv http.Handler, path string, typ hostedtypes.Type) {
	t.Helper()
	rec := get(t, srv, path)
	if rec.Code != http.StatusOK {
		t.Errorf("%s: %d %s", path, rec.Code, rec.Body)
		return
	}
	for _, p := range hostedtypes.Check(rec.Body.Bytes(), typ) {
		t.Errorf("%s: %s", path, p)
	}
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}

// sameDecimal compares a JSON number with a decimal string exactly.
func sameDecimal(got any, want string) bool {
	n, ok := got.(json.Number)
	if !ok {
		return false
	}
	a, ok1 := new(big.Rat).SetString(string(n))
	b, ok2 := new(big.Rat).SetString(want)
	return ok1 && ok2 && a.Cmp(b) == 0
}

// The parameters the hosted clients send to served routes are understood:
// filterDeprecated on the strikes chain drops exactly the deprecated
// handlers' strikes; a quote's user=undefined (or none) is the zero
// address's quote, and its markPrice is accepted and changes nothing.
func TestHostedClientsParamsOnServedRoutes(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	strikes := "/clamm/strikes-chain?optionMarket=" + demo.Market + "&chainId=42161&callsReach=100&putsReach=100"
	var all, kept []map[string]struct {
		Handler struct {
			Deprecated bool `json:"deprecated"`
		} `json:"handler"`
	}
	decode(t, get(t, srv, strikes).Body.Bytes(), &all)
	decode(t, get(t, srv, strikes+"&filterDeprecated=true").Body.Bytes(), &kept)
	want := 0
	for _, e := range all {
		for _, s := range e {
			if !s.Handler.Deprecated {
				want++
			}
		}
	}
	if len(kept) != want || len(all) == 0 {
		t.Errorf("filterDeprecated=true kept %d of %d strikes, want the %d of live handlers", len(kept), len(all), want)
	}
	if rec := get(t, srv, strikes+"&filterDeprecated=false"); rec.Code != http.StatusOK || len(rec.Body.String()) != len(get(t, srv, strikes).Body.String()) {
		t.Errorf("filterDeprecated=false: %d", rec.Code)
	}
	quote := "/clamm/purchase/quote?chainId=42161&optionMarket=" + demo.Market + "&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000"
	zero := get(t, srv, quote+"&user=0x0000000000000000000000000000000000000000")
	if zero.Code != http.StatusOK {
		t.Fatalf("quote: %d %s", zero.Code, zero.Body)
	}
	for _, q := range []string{quote + "&user=undefined", quote, quote + "&user=undefined&markPrice=3000.10429", quote + "&markPrice=0"} {
		if rec := get(t, srv, q); rec.Code != http.StatusOK || rec.Body.String() != zero.Body.String() {
			t.Errorf("%s: %d, not the zero address's quote: %s", q, rec.Code, rec.Body)
		}
	}
	for _, q := range []string{quote + "&markPrice=abc", quote + "&user=nobody", strikes + "&filterDeprecated=yes",
		"/clamm/purchase/prepare?chainId=42161&optionMarket=" + demo.Market + "&user=undefined&type=call&strike=3004.9080590767317&ttl=86400&amount=1000000000000000000&slippage=1"} {
		if rec := get(t, srv, q); rec.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", q, rec.Code)
		}
	}
}

// The older hosted paths: the pools and the delegates answer their
// clients' types on the demo; a superseded path redirects where its
// successor means the same, else is 410 with the error shape naming it.
func TestHostedOlderPaths(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, c := range []struct {
		path string
		typ  hostedtypes.Type
	}{
		{"/clamm/pools?chainId=42161", hostedtypes.OptionsPools},
		{"/clamm/auto-exerciser/delegators?account=" + demo.Alice + "&optionMarket=" + demo.Market, hostedtypes.Delegators},
		{"/clamm/auto-exerciser/delegators?chainId=42161&account=" + demo.Alice + "&optionMarket=" + demo.Market, hostedtypes.Delegators},
	} {
		checkHosted(t, srv, c.path, c.typ)
	}
	q := "?chainId=42161&user=" + demo.Bob + "&optionMarket=" + demo.Market + "&first=100&skip=0"
	if rec := get(t, srv, "/clamm/positions/deposit"+q); rec.Code != http.StatusPermanentRedirect || rec.Header().Get("Location") != "/clamm/deposit/positions"+q {
		t.Errorf("positions/deposit: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	for _, path := range []string{"/clamm/strikes?chainId=42161", "/clamm/exercise/uni-v3", "/token/allowance", "/uniswap-prices?ticker=WETH/USDC"} {
		rec := get(t, srv, path)
		if e := decodeError(t, rec); rec.Code != http.StatusGone || e.Code != "ROUTE_GONE" || !strings.Contains(e.Message, "superseded; use ") {
			t.Errorf("%s: %d %+v", path, rec.Code, e)
		}
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/clamm/exercise/create-limit-order", strings.NewReader("{}")))
	if rec.Code != http.StatusGone {
		t.Errorf("POST create-limit-order: %d", rec.Code)
	}
}
