package systemtest

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

func transport(h http.Handler) http.RoundTripper { return scenario.HandlerTransport{Handler: h} }

func httptestDo(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// demoScenario is the demo's Arbitrum WETH/USDC scenario, which most
// gateway tests serve through fakes.
func demoScenario(t testing.TB) *scenario.Scenario {
	t.Helper()
	scs, err := scenario.Load(filepath.Join(root, "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	return scs[0]
}

// newFakesOnly loads the demo scenario into fresh fakes.
func newFakesOnly(t testing.TB) *scenario.Fakes { return scenario.NewFakes(t, demoScenario(t)) }

// arbitrumOnly is the default configuration serving chain 42161 alone.
func arbitrumOnly() *config.Config {
	cfg := config.Default()
	cfg.Chains = map[uint64]*config.Chain{42161: cfg.Chains[42161]}
	return cfg
}

// newApp builds the gateway through the composition root, as the command
// does; a nil Config is arbitrumOnly().
func newApp(t testing.TB, o app.Options) *gateway.Server {
	t.Helper()
	if o.Config == nil {
		o.Config = arbitrumOnly()
	}
	a, err := app.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a.Server
}

// onFakes serves chain 42161 from f.
func onFakes(f *scenario.Fakes) map[uint64]upstream.Transports {
	return map[uint64]upstream.Transports{42161: f.Transports()}
}
