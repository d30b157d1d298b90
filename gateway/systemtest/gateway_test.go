package systemtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

var update = flag.Bool("update", false, "rewrite golden files")

const root = "../.."

const (
	wethUSDC = "0x501B03BdB431154b8Df17BF1c00756E3a8F21744"
	strikes  = gateway.PathStrikesChain + "?optionMarket=" + wethUSDC + "&chainId=42161&callsReach=100&putsReach=100"
)

// newFakeServer is a gateway over the real clients talking to in-process
// fakes loaded with the demo's Arbitrum scenario.
func newFakeServer(t *testing.T) (*gateway.Server, *scenario.Fakes) {
	t.Helper()
	return newFakeServerWith(t, func(*gateway.Options) {})
}

// newFakeServerWith lets a test adjust the gateway's options.
func newFakeServerWith(t *testing.T, adjust func(*gateway.Options)) (*gateway.Server, *scenario.Fakes) {
	t.Helper()
	f := scenario.NewFakes(t, demoScenario(t))
	return newApp(t, app.Options{Config: config.Default(), Transports: onFakes(f), Gateway: adjust}), f
}

// newDemoServer is the gateway as `go run ./cmd/clamm-gateway` builds it:
// the demo recordings replayed, replay-only.
func newDemoServer(t *testing.T) *gateway.Server {
	t.Helper()
	srv := newApp(t, app.Options{Config: config.Default(), Demo: true})
	return srv
}

func get(t testing.TB, h http.Handler, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// TestGoldenDemo replays every demo request and compares whole responses
// with testdata/golden. Refresh with: go test ./gateway/systemtest -run Golden -update
func TestGoldenDemo(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	for _, r := range demo.Requests {
		t.Run(r.Name, func(t *testing.T) {
			rec := get(t, srv, r.Path)
			if rec.Code != r.Status() {
				t.Fatalf("status %d, want %d: %s", rec.Code, r.Status(), rec.Body)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, rec.Body.Bytes(), "", "  "); err != nil {
				t.Fatal(err)
			}
			pretty.WriteByte('\n')
			path := filepath.Join(root, "testdata/golden", r.Name+".json")
			if *update {
				if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create)", err)
			}
			if !bytes.Equal(pretty.Bytes(), want) {
				t.Errorf("response differs from %s:\n%s", path, pretty.String())
			}
		})
	}
}

// chainMode is the mode of a chain in a readiness answer.
var chainMode = regexp.MustCompile(`"mode":"[^"]*",`)

// The demo answers exactly what the fakes it was recorded from answer: the
// recordings are current with the scenario and the code.
func TestDemoMatchesFakes(t *testing.T) {
	t.Parallel()
	d := newDemoServer(t)
	f, _ := newFakeServer(t)
	for _, r := range demo.Requests {
		a, b := get(t, d, r.Path), get(t, f, r.Path)
		// Readiness names how each chain is served, which is all that
		// differs: the demo's recordings, the fakes' transports.
		ab, bb := chainMode.ReplaceAll(a.Body.Bytes(), nil), chainMode.ReplaceAll(b.Body.Bytes(), nil)
		if a.Code != r.Status() || !bytes.Equal(ab, bb) {
			t.Errorf("%s: demo %d and fakes %d differ; run go generate ./internal/demo", r.Name, a.Code, b.Code)
		}
	}
}

// The demo answers requests it never recorded, about the demo market and
// users, exactly as the fakes it was recorded from do, and never with a
// 5xx: any reach, any first/skip, and a prepare of any option id through
// either swapper at any slippage, as a fresh gateway's first request (a
// cold read where the recordings hold a warm one). The subgraph engine,
// the call-by-call RPC index and the 1inch replay (internal/demo) serve
// them from the recordings.
func TestDemoAnswersUnrecordedRequests(t *testing.T) {
	t.Parallel()
	const alice, bob = "0xA11CE00000000000000000000000000000000001", "0xB0B0000000000000000000000000000000000002"
	var paths []string
	for _, reach := range [][2]int{{7, 3}, {1, 1}, {3, 7}, {20, 1}, {1000, 1000}, {55, 2}} {
		paths = append(paths, fmt.Sprintf("%s?optionMarket=%s&chainId=42161&callsReach=%d&putsReach=%d", gateway.PathStrikesChain, wethUSDC, reach[0], reach[1]))
	}
	for _, page := range [][2]int{{3, 0}, {1, 0}, {2, 1}, {3, 4}, {1000, 2}, {5, 5000}} {
		for _, user := range []string{alice, bob} {
			paths = append(paths, fmt.Sprintf("%s?chainId=42161&user=%s&optionMarket=%s&first=%d&skip=%d", gateway.PathExerciseHistory, user, wethUSDC, page[0], page[1]))
		}
	}
	// A prepare of every option the demo market minted and of ids it never
	// minted, through each swapper, at slippages the recordings never saw.
	var minted []int
	for _, o := range demoScenario(t).Options {
		minted = append(minted, int(o.TokenID))
	}
	if fmt.Sprint(minted) != fmt.Sprint(demo.OptionIDs) {
		t.Fatalf("demo.OptionIDs %v, the scenario's options %v", demo.OptionIDs, minted)
	}
	ids := []string{"0", "999", "12345", "115792089237316195423570985008687907853269984665640564039457584007913129639935"}
	for _, id := range demo.OptionIDs {
		ids = append(ids, fmt.Sprint(id))
	}
	for _, id := range ids {
		for _, sw := range []string{"uni-v3", "1inch"} {
			for _, slip := range []string{"0.1", "1", "2.5"} {
				paths = append(paths, fmt.Sprintf("%s?chainId=42161&optionMarket=%s&optionId=%s&swapperId=%s&slippage=%s", gateway.PathExercisePrepare, wethUSDC, id, sw, slip))
			}
		}
	}
	for _, path := range paths {
		d := newDemoServer(t) // fresh: every request is the gateway's first
		f, _ := newFakeServer(t)
		a, b := get(t, d, path), get(t, f, path)
		if a.Code >= 500 || a.Code != b.Code || !bytes.Equal(a.Body.Bytes(), b.Body.Bytes()) {
			t.Errorf("%s: demo %d %s\nfakes %d %s", path, a.Code, a.Body, b.Code, b.Body)
		}
	}
}

// What the recordings cannot answer (another market) names the market
// the demo holds for the route and says how to serve live data, as does the 400 for a chain with neither recordings nor
// upstreams, naming that chain's variables.
func TestDemoUnrecordedRequestExplainsConfiguration(t *testing.T) {
	t.Parallel()
	srv := newDemoServer(t)
	rec := get(t, srv, gateway.PathStrikesChain+"?optionMarket=0x0000000000000000000000000000000000000001&chainId=42161&callsReach=7&putsReach=3")
	e := decodeError(t, rec)
	if rec.Code != http.StatusNotFound || e.Code != "NOT_RECORDED" || !bytes.Contains([]byte(e.Message), []byte("CLAMM_CHAIN_42161_RPC_URL")) || !bytes.Contains([]byte(e.Message), []byte("optionMarket "+wethUSDC)) {
		t.Fatalf("status %d, %+v", rec.Code, e)
	}
	rec = get(t, srv, gateway.PathStrikesChain+"?optionMarket="+wethUSDC+"&chainId=5000&callsReach=7&putsReach=3")
	if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Code != "INVALID_PARAMETER" || !bytes.Contains([]byte(e.Message), []byte("CLAMM_CHAIN_5000_RPC_URL")) {
		t.Fatalf("status %d, %+v", rec.Code, e)
	}
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   string `json:"param"`
}

func decodeError(t *testing.T, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var body struct {
		Error apiError `json:"error"`
	}
	dec := json.NewDecoder(rec.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("error body %q: %v", rec.Body.String(), err)
	}
	if body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("error body lacks code or message: %+v", body.Error)
	}
	return body.Error
}
