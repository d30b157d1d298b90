package systemtest

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/scenario"
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

// eventually polls cond until it holds, failing the test with what was
// awaited if it has not after a generous deadline: a broken test fails
// with a message instead of hanging until go test's timeout.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
