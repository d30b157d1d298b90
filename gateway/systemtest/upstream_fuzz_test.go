package systemtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

var (
	upstreamFuzzOnce  sync.Once
	upstreamFuzzSrv   *gateway.Server
	upstreamFuzzFakes *scenario.Fakes
	// recorded are the fakes' own answers: a subgraph body per path and
	// the eth_call return data per path, the seeds the fuzzer mutates.
	recordedBodies = map[int][]byte{}
	recordedCalls  = map[int][]byte{}
)

// upstreamFuzzPaths are one request per endpoint, all served by fills.
var upstreamFuzzPaths = []string{
	strikes,
	gateway.PathExerciseHistory + "?" + query(historyParams, "", "", false),
	gateway.PathExercisePrepare + "?" + query(prepareParams, "", "", false),
}

// upstreamFuzzServer is the gateway over the fakes with nothing cached for
// long (every request is a fill) and the fakes' healthy answers recorded.
func upstreamFuzzServer(t *testing.T) (*gateway.Server, *scenario.Fakes) {
	upstreamFuzzOnce.Do(func() {
		upstreamFuzzSrv, upstreamFuzzFakes = newFakeServerWith(t, func(o *gateway.Options) {
			o.StrikesTTL, o.HistoryTTL, o.PrepareTTL, o.StaleGrace = time.Nanosecond, time.Nanosecond, time.Nanosecond, 0
		})
		f := upstreamFuzzFakes
		for i, p := range upstreamFuzzPaths {
			f.Subgraph.Rewrite = func(_ string, b []byte) []byte { recordedBodies[i] = b; return b }
			f.Node.Rewrite = func(_ common.Address, _, ret []byte) []byte {
				if len(ret) > len(recordedCalls[i]) {
					recordedCalls[i] = ret
				}
				return ret
			}
			if rec := get(t, upstreamFuzzSrv, p); rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %s", p, rec.Code, rec.Body)
			}
		}
		f.Subgraph.Rewrite, f.Node.Rewrite = nil, nil
	})
	return upstreamFuzzSrv, upstreamFuzzFakes
}

// FuzzUpstreamAnswers gives the gateway arbitrary upstream answers: a
// subgraph body (Graph Node's framing, any bytes) and eth_call return data
// (every call of the request answers it), on every endpoint. Whatever they
// are, the answer is 200 with JSON or the JSON error shape of a 4xx or an
// upstream 5xx (502/503/504); never 500, never a panic (it would surface as
// 500). The seeds run in `go test ./...`; a longer run:
//
//	go test ./gateway/systemtest -run XXX -fuzz FuzzUpstreamAnswers -fuzztime 2m
func FuzzUpstreamAnswers(f *testing.F) {
	f.Add(uint8(0), []byte(nil), []byte(nil), false, false)
	seeds := [][]byte{
		[]byte(`{"data":null}`), []byte(`{"errors":[]}`), []byte(`null`), []byte(``), []byte(`{"data":{}}`),
		[]byte(`{"data":{"strikes":[{"id":"x","totalLiquidity":"-1"}]}}`),
		[]byte(`{"data":{"exercises":[{"sqrtPriceX96":"` + strings.Repeat("9", 200) + `"}]}}`),
	}
	calls := [][]byte{nil, {}, make([]byte, 31), bytes.Repeat([]byte{0xff}, 64), bytes.Repeat([]byte{0x00, 0x20}, 80)}
	for i := range upstreamFuzzPaths {
		for _, s := range seeds {
			f.Add(uint8(i), s, []byte(nil), true, false)
		}
		for _, c := range calls {
			f.Add(uint8(i), []byte(nil), c, false, true)
		}
		// Mutations of the recorded answers: a digit into a number, a
		// quote cut, a word of ones into the return data.
		f.Add(uint8(i), []byte{100, '-'}, []byte(nil), false, false)
		f.Add(uint8(i), []byte{200, '"', '}'}, []byte(nil), false, false)
		f.Add(uint8(i), []byte(nil), append([]byte{64}, bytes.Repeat([]byte{0xff}, 32)...), false, false)
		f.Add(uint8(i), []byte(nil), []byte{10, 0, 0, 0, 0x01}, false, false)
	}
	f.Fuzz(func(t *testing.T, which uint8, body, ret []byte, rewriteBody, rewriteCalls bool) {
		srv, fk := upstreamFuzzServer(t)
		i := int(which) % len(upstreamFuzzPaths)
		if !rewriteBody && !rewriteCalls {
			// Mutate the recorded answers themselves: where a fuzzer
			// finds the decoders' edges.
			body, ret = mutate(recordedBodies[i], body), mutate(recordedCalls[i], ret)
			rewriteBody, rewriteCalls = len(body) > 0, len(ret) > 0
		}
		fk.Subgraph.Rewrite, fk.Node.Rewrite = nil, nil
		if rewriteBody {
			fk.Subgraph.Rewrite = func(string, []byte) []byte { return body }
		}
		if rewriteCalls {
			fk.Node.Rewrite = func(common.Address, []byte, []byte) []byte { return ret }
		}
		defer func() { fk.Subgraph.Rewrite, fk.Node.Rewrite = nil, nil }()
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, upstreamFuzzPaths[i], nil))
		switch {
		case rec.Code == http.StatusOK:
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("200 with invalid JSON: %.300s", rec.Body)
			}
		case rec.Code >= 400 && rec.Code < 500, rec.Code == 502, rec.Code == 503, rec.Code == 504:
			var e struct {
				Error struct {
					Code    string `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%d without the error shape: %.300s", rec.Code, rec.Body)
			}
		default:
			t.Fatalf("status %d for path %d: %.300s", rec.Code, i, rec.Body)
		}
	})
}

// mutate overwrites the start of a recorded answer with the fuzzer's bytes
// (keeping its length when they are shorter): the answer keeps most of its
// structure, so decoding gets past the first byte.
func mutate(recorded, with []byte) []byte {
	if len(with) == 0 || len(recorded) == 0 {
		return nil
	}
	out := append([]byte(nil), recorded...)
	at := int(with[0]) * len(out) / 256
	copy(out[at:], with[1:])
	return out
}
