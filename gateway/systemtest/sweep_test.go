package systemtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/demo"
)

// sweepRoutes are the routes of the demo server's endpoint table, as the
// sweep takes them: a route added to the table joins the sweep.
func sweepRoutes(t *testing.T) []demo.Route {
	t.Helper()
	var out []demo.Route
	for _, op := range newDemoServer(t).Operations() {
		if op.Uncached {
			continue // the order book's: the demo keeps none (docs/orders.md)
		}
		out = append(out, demo.Route{Path: op.Path, Params: op.Params, Optional: op.Optional})
	}
	return out
}

// The demo answers every request of the sweep (every route of the endpoint
// table over every user, every option, several strikes, ttls, amounts,
// ranges, slippages, both swappers and blocks of its history:
// internal/demo's Sweep) as the gateway answers over the fakes its
// recordings come from: never NOT_RECORDED, never a 5xx, the same status
// and body. Every other request is a fresh gateway's first (a cold read),
// the others follow on one gateway (warm). A route with a parameter the
// sweep has no values for fails here, naming it.
func TestDemoAnswersTheSweep(t *testing.T) {
	t.Parallel()
	paths, err := demo.Sweep(sweepRoutes(t))
	if err != nil {
		t.Fatal(err)
	}
	warm := newDemoServer(t)
	fakes, _ := newFakeServer(t)
	counts := map[int]int{}
	for i, p := range paths {
		srv := warm
		if i%2 == 1 {
			srv = newDemoServer(t)
		}
		rec, want := get(t, srv, p), get(t, fakes, p)
		counts[rec.Code]++
		var body struct{ Error struct{ Code string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &body)
		switch {
		case rec.Code >= 500 || body.Error.Code == "NOT_RECORDED":
			t.Errorf("%s: %d %s", p, rec.Code, rec.Body)
		case rec.Code != want.Code || !bytes.Equal(rec.Body.Bytes(), want.Body.Bytes()):
			t.Errorf("%s: demo %d, fakes %d: run go generate ./internal/demo\n%s\n%s", p, rec.Code, want.Code, rec.Body, want.Body)
		}
	}
	t.Logf("%d requests: %v", len(paths), counts)
	if counts[http.StatusOK] < len(paths)/2 {
		t.Errorf("only %d of %d requests answered 200: is the sweep still about what the demo holds?", counts[http.StatusOK], len(paths))
	}
}

// A liquidity provider's prepare outside the sweep (an amount of shares
// nobody recorded) is the demo's 404 NOT_RECORDED, like any other request
// it does not hold: its simulation's outcome is not another recorded
// simulation's (they once shared one key, and such a request answered a
// 502 "does not decode" from the outcome of another number of steps).
func TestDemoSimulationOffTheSweepIsNotRecorded(t *testing.T) {
	srv := newDemoServer(t)
	for _, path := range []string{
		"/clamm/withdraw/prepare?chainId=42161&user=0xCA20100000000000000000000000000000000003&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196150&tickUpper=-196140&shares=12345",
		"/clamm/deposit/prepare?chainId=42161&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196200&tickUpper=-196180&amount=1000000000000012345&user=0xA11CE00000000000000000000000000000000001",
	} {
		rec := get(t, srv, path)
		if e := decodeError(t, rec); rec.Code != http.StatusNotFound || e.Code != "NOT_RECORDED" {
			t.Errorf("%s: %d %+v", path, rec.Code, e)
		}
	}
}
