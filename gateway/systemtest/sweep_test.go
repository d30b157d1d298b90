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
