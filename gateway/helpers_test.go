package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/replay"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
)

func transport(h http.Handler) http.RoundTripper { return replay.HandlerTransport{Handler: h} }

func httptestDo(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// demoScenario is the demo's Arbitrum WETH/USDC scenario, which most
// gateway tests serve through fakes.
func demoScenario(t testing.TB) *scenario.Scenario {
	t.Helper()
	scs, err := scenario.Load(filepath.Join(root, "internal/demo/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	return scs[0]
}

// newFakesOnly loads the demo scenario into fresh fakes.
func newFakesOnly(t testing.TB) *scenario.Fakes { return scenario.NewFakes(demoScenario(t)) }
