package gateway

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// TestDirectRoutesMatchRouter holds serveDirect to the router built from
// the same table: whatever it answers, the router would have sent to the
// same route, and it answers every GET and HEAD on the table's paths.
func TestDirectRoutesMatchRouter(t *testing.T) {
	t.Parallel()
	s, err := New(DefaultOptions(service.New(map[uint64]*vocab.Upstreams{42161: {}})))
	if err != nil {
		t.Fatal(err)
	}
	router := s.routes().(*mux.Router)
	api := map[string]bool{PathStrikesChain: true, PathExerciseHistory: true, PathExercisePrepare: true,
		PathPurchaseHistory: true, PathPurchasePositions: true, PathOptionMarkets: true,
		PathPurchaseQuote: true, PathPurchasePrepare: true, PathOptionsChain: true, PathStats: true, PathDepositPrepare: true, PathWithdrawPrepare: true,
		PathDepositHistory: true, PathWithdrawHistory: true, PathDepositPositions: true,
		PathDelegatePrepare: true, PathSettlements: true, PathExpiringOptions: true, PathMarkPrice: true, PathCandles: true, PathChainStats: true, PathLeaderboard: true}
	for _, p := range []string{PathHostedMarkets, PathTickerMarkPrice, PathTickerCandles, PathTickerLastPrice,
		PathHostedTVL, PathHostedPoolTVL, PathHostedOpenInterest, PathHostedVolume, PathHostedDAU, PathHostedFees,
		PathHostedTotalVolume, PathPnlDelta, PathBoundedAll, PathBoundedUser, PathPortfolio, PathHostedPools, PathHostedDelegators} {
		api[p] = true
	}
	// The order book's reads are answered directly (404 here: no book);
	// its writes take POST only, so the router has them.
	reads := []string{PathOrders, PathOrdersPrepare, PathOrdersFillable, PathOrdersCancelPrepare}
	writes := map[string]bool{PathOrders: true, PathOrdersCreate: true, PathOrdersDelete: true}
	paths := []string{PathStrikesChain, PathExerciseHistory, PathExercisePrepare, PathPurchaseHistory, PathPurchasePositions, PathOptionMarkets,
		PathPurchaseQuote, PathPurchasePrepare, PathOptionsChain, PathStats, PathDepositPrepare, PathWithdrawPrepare, PathDepositHistory, PathWithdrawHistory, PathDepositPositions,
		PathDelegatePrepare, PathSettlements, PathExpiringOptions, PathMarkPrice, PathCandles, PathChainStats, PathLeaderboard, PathHealthz, PathReadyz, PathOpenAPI, PathDocs, PathMetrics,
		PathHostedMarkets, PathTickerMarkPrice, PathTickerCandles, PathTickerLastPrice, PathHostedPools, PathHostedDelegators,
		PathHostedTVL, PathHostedOpenInterest, PathHostedVolume, PathHostedDAU, PathHostedFees, PathHostedTotalVolume,
		PathPnlDelta, PathBoundedAll, PathBoundedUser, PathPortfolio, "/clamm/stats/tvl/0xC6962004f452bE9203591991D15f6b388e09E8D0",
		PathOrders, PathOrdersPrepare, PathOrdersFillable, PathOrdersCancelPrepare, PathOrdersCreate, PathOrdersDelete,
		PathStrikesChain + "/", "/clamm//strikes-chain", "/CLAMM/strikes-chain", "/clamm", "/"}
	inTable, posts := map[string]bool{}, map[string]bool{} // paths taking GET and HEAD; paths taking POST
	for _, rt := range s.table() {
		if rt.methods == nil {
			inTable[rt.path] = true
		} else {
			posts[rt.path] = true
		}
	}
	if len(inTable) != len(api)+len(reads)+4 { // the API, /healthz, /readyz, /openapi.json, /docs; no metrics configured: no /metrics
		t.Errorf("table has %d routes taking GET, want %d", len(inTable), len(api)+len(reads)+4)
	}
	if len(posts) != len(writes) {
		t.Errorf("table has %d routes taking POST, want %d", len(posts), len(writes))
	}
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions, "PATCH"}
	for _, path := range paths {
		for _, method := range methods {
			// chainId=1 is not configured: a handler that runs answers 400
			// before it reaches the (absent) upstreams.
			r := httptest.NewRequest(method, path+"?chainId=1", nil)
			var m mux.RouteMatch
			template := ""
			if router.Match(r, &m) && m.MatchErr == nil {
				template, _ = m.Route.GetPathTemplate()
			}
			x := &exchange{ResponseWriter: httptest.NewRecorder()}
			direct := s.serveDirect(x, r)
			if direct && x.route != template {
				t.Errorf("%s %s: answered directly as %q; the router routes it to %q", method, path, x.route, template)
			}
			if want := inTable[path] && (method == http.MethodGet || method == http.MethodHead); direct != want {
				t.Errorf("%s %s: answered directly %v, want %v", method, path, direct, want)
			}
			if direct && api[path] && x.status != http.StatusBadRequest {
				t.Errorf("%s %s: status %d, want 400 for the unconfigured chain", method, path, x.status)
			}
		}
	}
}

func TestHeaderValues(t *testing.T) {
	t.Parallel()
	v := headerValues("max-age=", 120)
	for i, s := range v {
		if len(s) != 1 || cap(s) != 1 || s[0] != "max-age="+strconv.Itoa(i) {
			t.Fatalf("v[%d] = %q (cap %d)", i, s, cap(s))
		}
	}
	// A caller appending to a shared value must not overwrite the next one.
	_ = append(v[7], "x")
	if v[8][0] != "max-age=8" {
		t.Fatalf("append to v[7] changed v[8] to %q", v[8][0])
	}
}
