package systemtest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
)

// /metrics counts requests by route template and status, cache results,
// upstream calls by kind, and subgraph lag; no label carries a raw path,
// an address or anything else the client typed.
func TestMetrics(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	f := newFakesOnly(t)
	srv := newApp(t, app.Options{Transports: onFakes(f), Metrics: m})
	get(t, srv, strikes)
	get(t, srv, strikes)
	get(t, srv, gateway.PathStrikesChain+"?optionMarket=0xdeadbeef&chainId=42161&callsReach=1&putsReach=1")
	get(t, srv, "/no/such/route/0xA11CE00000000000000000000000000000000001")
	get(t, srv, gateway.PathReadyz)
	rec := get(t, srv, gateway.PathMetrics)
	if rec.Code != http.StatusOK {
		t.Fatalf("metrics %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`clamm_http_requests_total{route="/clamm/strikes-chain",status="200"} 2`,
		`clamm_http_requests_total{route="/clamm/strikes-chain",status="400"} 1`,
		`clamm_http_requests_total{route="unmatched",status="404"} 1`,
		`clamm_cache_results_total{result="HIT",route="/clamm/strikes-chain"} 1`,
		`clamm_cache_results_total{result="MISS",route="/clamm/strikes-chain"} 1`,
		`clamm_upstream_requests_total{upstream="subgraph"}`,
		`clamm_upstream_requests_total{upstream="rpc"}`,
		`clamm_subgraph_lag_blocks{chain_id="42161"} 0`,
		`clamm_http_request_duration_seconds_bucket{route="/clamm/strikes-chain"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s", want)
		}
	}
	for _, bad := range []string{"0xdeadbeef", "0xA11CE", "no/such", "501B03"} {
		if strings.Contains(body, bad) {
			t.Errorf("client input %q in a label", bad)
		}
	}
}
