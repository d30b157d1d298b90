package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
)

// The HTTP layer's own tests. Tests of whole gateways over the fakes, the
// demo's answers, upstream faults and the shared tier are system tests, in
// gateway/systemtest.

const strikes = gateway.PathStrikesChain + "?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100"

// demoServer is the gateway `go run ./cmd/clamm-gateway` serves (the
// embedded recordings, no upstream) with its options adjusted: a real
// service behind the table for tests of the table itself, with nothing to
// start.
func demoServer(t *testing.T, adjust func(*gateway.Options)) *gateway.Server {
	t.Helper()
	a, err := app.New(app.Options{Config: config.Default(), Demo: true, Gateway: adjust})
	if err != nil {
		t.Fatal(err)
	}
	return a.Server
}

func get(t testing.TB, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}
