package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// Real responses of every route, successes and every documented error
// status the fakes can be made to produce, validated against the OpenAPI
// document the gateway serves. A route or status the document does not
// describe fails the test.
func TestResponsesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(gateway.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is invalid: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.Metrics = metrics.New(); o.RateLimit, o.RateBurst = 0.0001, 1000 })
	validate := func(method, path string, header map[string]string) int {
		t.Helper()
		req := httptest.NewRequest(method, "http://localhost"+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		route, params, err := router.FindRoute(req)
		if err != nil {
			// Only GET and HEAD are documented; the 405 for other methods
			// must still be the documented error shape.
			var body any
			if rec.Code != http.StatusMethodNotAllowed || json.Unmarshal(rec.Body.Bytes(), &body) != nil ||
				doc.Components.Schemas["Error"].Value.VisitJSON(body) != nil {
				t.Errorf("%s %s -> %d: not in the document and not a JSON error: %v", method, path, rec.Code, err)
			}
			return rec.Code
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{ExcludeRequestBody: true, MultiError: true}}
		// Requests with broken parameters are sent on purpose; only the answer is checked.
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.Code, Header: rec.Header(),
			Body: io.NopCloser(bytes.NewReader(rec.Body.Bytes())), Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			t.Errorf("%s %s -> %d does not match the document: %v\n%.400s", method, path, rec.Code, err, rec.Body)
		}
		return rec.Code
	}
	seen := map[int]bool{}
	for _, r := range demo.Requests {
		seen[validate(http.MethodGet, r.Path, nil)] = true
	}
	for _, p := range []string{gateway.PathHealthz, gateway.PathMetrics, gateway.PathOpenAPI, gateway.PathDocs} {
		if p == gateway.PathOpenAPI || p == gateway.PathDocs {
			continue // documentation itself is not an API operation
		}
		seen[validate(http.MethodGet, p, nil)] = true
	}
	etag := get(t, srv, strikes).Header().Get("Etag")
	seen[validate(http.MethodGet, strikes, map[string]string{"If-None-Match": etag})] = true
	seen[validate(http.MethodGet, gateway.PathStrikesChain+"?chainId=42161", nil)] = true                                      // 400
	seen[validate(http.MethodGet, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "999", false), nil)] = true // 404
	seen[validate(http.MethodPost, strikes, nil)] = true                                                                       // 405
	// Alice holds the scenario's stated balances: her purchase and her
	// deposit, each simulated with its approvals, answer 200 (a
	// PreparedPurchase and a PreparedDeposit checked against the
	// document); bob holds none and is refused (422); the fake keeps no
	// position of alice's range, so her withdrawal is a 404.
	for _, r := range demo.Requests {
		if strings.HasPrefix(r.Name, "purchase-prepare-") || strings.HasPrefix(r.Name, "deposit-prepare-") {
			if code := validate(http.MethodGet, r.Path, nil); code != r.Status() {
				t.Errorf("%s on the fakes: %d, want %d", r.Name, code, r.Status())
			}
		}
	}
	if code := validate(http.MethodGet, depositQry, nil); code != http.StatusOK {
		t.Errorf("deposit on the fakes: %d, want 200", code)
	}
	if code := validate(http.MethodGet, withdrawQry, nil); code != http.StatusNotFound {
		t.Errorf("withdrawal on the fakes: %d, want 404", code)
	}
	// A market with every kind of hook rule (none, known, unknown), then the
	// same market without a position manager: 422 MARKET_UNSUPPORTED.
	buyable, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-buyable.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Add(buyable[0])
	buyablePath := gateway.PathStrikesChain + "?optionMarket=" + buyable[0].Market.Address.Hex() + "&chainId=42161&callsReach=10&putsReach=10"
	if validate(http.MethodGet, buyablePath, nil) != http.StatusOK {
		t.Error("buyable scenario's strikes: not 200")
	}
	// The chain's markets: the demo's and the buyable scenario's.
	if validate(http.MethodGet, gateway.PathOptionMarkets+"?chainId=42161", nil) != http.StatusOK {
		t.Error("option markets: not 200")
	}
	if validate(http.MethodGet, gateway.PathOptionMarkets+"?chainId=42161x", nil) != http.StatusBadRequest {
		t.Error("option markets with a malformed chainId: not 400")
	}
	f.Node.Lock()
	f.Node.Markets[buyable[0].Market.Address].PositionManager = common.Address{}
	f.Node.Unlock()
	warm := srv
	srv = serverOn(t, f) // a fresh reader: the position manager is read again
	if code := validate(http.MethodGet, buyablePath, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("market without positionManager(): %d, want 422", code)
	}
	// A market whose opData is OptionMarketOTMFE's (expiry second): 422
	// MARKET_UNSUPPORTED, in the document's error shape.
	demoMarket := f.Node.Markets[common.HexToAddress(wethUSDC)]
	f.Node.Lock()
	version := demoMarket.Version
	demoMarket.Version = chaintest.VersionOTMFE
	f.Node.Unlock()
	srv = serverOn(t, f)
	if code := validate(http.MethodGet, gateway.PathExercisePrepare+"?"+query(prepareParams, "optionId", "110", false), nil); code != http.StatusUnprocessableEntity {
		t.Errorf("OTMFE-shaped market: %d, want 422", code)
	}
	f.Node.Lock()
	demoMarket.Version = version
	demoMarket.DelegateRevert = chaintest.ErrorString("delegation paused")
	f.Node.Unlock()
	// A delegate transaction the market would refuse: 422
	// DELEGATE_WOULD_REVERT, in the document's error shape.
	srv = serverOn(t, f)
	delegate := gateway.PathDelegatePrepare + "?chainId=42161&optionMarket=" + wethUSDC + "&user=" + bob + "&enable=true"
	if code := validate(http.MethodGet, delegate, nil); code != http.StatusUnprocessableEntity {
		t.Errorf("delegate transaction that would revert: %d, want 422", code)
	}
	f.Node.Lock()
	demoMarket.DelegateRevert = nil
	f.Node.Unlock()
	srv = warm
	f.Subgraph.Fail = func(string) *graphnodetest.Failure { return &graphnodetest.Failure{Errors: []string{"indexing_error"}} }
	seen[validate(http.MethodGet, gateway.PathStrikesChain+"?optionMarket="+wethUSDC+"&chainId=42161&callsReach=2&putsReach=2", nil)] = true // 502
	f.Subgraph.Fail = func(string) *graphnodetest.Failure { return &graphnodetest.Failure{Status: 503} }
	seen[validate(http.MethodGet, gateway.PathStrikesChain+"?optionMarket="+wethUSDC+"&chainId=42161&callsReach=3&putsReach=3", nil)] = true // 503
	seen[validate(http.MethodGet, gateway.PathReadyz, nil)] = true                                                                           // 503 readiness
	f.Subgraph.Fail = nil
	slow, sf := newFakeServerWith(t, func(o *gateway.Options) { o.RequestTimeout = 50 * time.Millisecond })
	release := make(chan struct{})
	sf.Subgraph.Fail = func(string) *graphnodetest.Failure { <-release; return nil }
	srv = slow
	seen[validate(http.MethodGet, strikes, nil)] = true // 504
	close(release)
	limited, _ := newFakeServerWith(t, func(o *gateway.Options) { o.RateLimit, o.RateBurst = 0.0001, 1 })
	srv = limited
	validate(http.MethodGet, gateway.PathHealthz, nil)
	seen[validate(http.MethodGet, strikes, nil)] = true // 429
	// 500 is documented but only a bug produces it (TestPanicBecomesJSON500
	// checks its shape).
	for _, want := range []int{200, 304, 400, 404, 405, 422, 429, 502, 503, 504} {
		if !seen[want] {
			t.Errorf("no response with status %d was checked", want)
		}
	}
}

// serverOn is a gateway over fakes already loaded.
func serverOn(t *testing.T, f *scenario.Fakes) *gateway.Server {
	t.Helper()
	return newApp(t, app.Options{Transports: onFakes(f)})
}
