package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
)

// field rewrites every value of a JSON string field in a Graph Node answer.
func field(name, value string) func(string, []byte) []byte {
	re := regexp.MustCompile(`"` + name + `":"[^"]*"`)
	return func(_ string, body []byte) []byte {
		return re.ReplaceAll(body, []byte(`"`+name+`":"`+value+`"`))
	}
}

// rows rewrites the list under name in a Graph Node answer: each row
// twice, or (long) repeated under ids of their own past 1000 rows, longer
// than any first a client may ask for.
func rows(name string, long bool) func(string, []byte) []byte {
	return func(_ string, body []byte) []byte {
		var doc struct {
			Data map[string]json.RawMessage `json:"data"`
		}
		var list []map[string]any
		if json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc.Data[name], &list) != nil || len(list) == 0 {
			return body
		}
		out := append(list, list...)
		if long {
			out = nil
			for len(out) <= 1000 {
				for _, r := range list {
					c := maps.Clone(r)
					if id, ok := c["id"].(string); ok && !strings.HasPrefix(id, "0x") {
						c["id"] = id + "-" + strconv.Itoa(len(out))
					} else {
						c["id"] = fmt.Sprintf("0x%040x", len(out)+1<<20)
					}
					out = append(out, c)
				}
			}
		}
		doc.Data[name], _ = json.Marshal(out)
		b, _ := json.Marshal(doc)
		return b
	}
}

// Answers an upstream should never give, in the upstreams' own framing:
// each is refused where it is decoded, as the upstream error it is (502),
// never a 500, never served, never cached.
func TestHostileUpstreamAnswers(t *testing.T) {
	t.Parallel()
	history := gateway.PathExerciseHistory + "?" + query(historyParams, "", "", false)
	purchases := gateway.PathPurchaseHistory + "?" + query(historyParams, "", "", false)
	positionsPath := gateway.PathPurchasePositions + "?" + query(historyParams, "", "", false)
	markets := gateway.PathOptionMarkets + "?chainId=42161"
	huge := new(big.Int).Lsh(big.NewInt(1), 300).String()
	tickOutOfRange := make([]byte, 64)
	tickOutOfRange[31] = 1
	new(big.Int).SetInt64(900_000).FillBytes(tickOutOfRange[32:])
	cases := []struct {
		name       string
		path       string
		warm       bool // one good answer first, so the market's immutables are cached
		subgraph   func(string, []byte) []byte
		slot0      []byte // the prime pool's slot0 return data
		wantStatus int
		wantCode   string
	}{
		// item 1: the warm path decodes slot0 like the cold one.
		{name: "slot0 short on a market already seen", path: strikes, warm: true, slot0: make([]byte, 32), wantStatus: 502, wantCode: "RPC_ERROR"},
		{name: "slot0 short on a market seen for the first time", path: strikes, slot0: make([]byte, 32), wantStatus: 502, wantCode: "RPC_ERROR"},
		{name: "slot0 tick out of range on a market already seen", path: strikes, warm: true, slot0: tickOutOfRange, wantStatus: 502, wantCode: "RPC_ERROR"},
		// item 3: a megabyte of digits is refused before big.Int parses it.
		{name: "number of a million digits", path: strikes, subgraph: field("totalLiquidity", strings.Repeat("7", 1<<20)), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		// item 7: a sqrtPriceX96 no pool can hold.
		{name: "sqrtPriceX96 of 300 bits in history", path: history, subgraph: field("sqrtPriceX96", huge), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "sqrtPriceX96 of 300 bits in strikes", path: strikes, subgraph: field("sqrtPriceX96", huge), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		// item 12: negative liquidity.
		{name: "negative total liquidity", path: strikes, subgraph: field("totalLiquidity", "-5"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "negative used liquidity", path: strikes, subgraph: field("usedLiquidity", "-1"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "negative profit in history", path: history, subgraph: field("totalProfit", "-1"), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		// Rows repeated, and pages longer than asked for: refused, not
		// de-duplicated or cut (which copy is right is not known).
		{name: "duplicate rows in purchases", path: purchases, subgraph: rows("purchases", false), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "duplicate rows in positions", path: positionsPath, subgraph: rows("options", false), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "duplicate rows in strikes", path: strikes, subgraph: rows("strikes", false), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "duplicate rows in option markets", path: markets, subgraph: rows("markets", false), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "page longer than first in positions", path: positionsPath, subgraph: rows("options", true), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "page longer than first in history", path: history, subgraph: rows("exercises", true), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
		{name: "page longer than asked in strikes", path: strikes, subgraph: rows("strikes", true), wantStatus: 502, wantCode: "SUBGRAPH_ERROR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, f := newFakeServerWith(t, func(o *gateway.Options) {
				o.StrikesTTL, o.HistoryTTL, o.StaleGrace = time.Nanosecond, time.Nanosecond, 0
			})
			if c.warm {
				if rec := get(t, srv, c.path); rec.Code != http.StatusOK {
					t.Fatalf("warm-up: %d %s", rec.Code, rec.Body)
				}
			}
			pool := f.Node.Pools[demoScenario(t).Market.PrimePool]
			f.Subgraph.Rewrite, pool.Slot0Raw = c.subgraph, c.slot0
			rec := get(t, srv, c.path)
			if e := decodeError(t, rec); rec.Code != c.wantStatus || e.Code != c.wantCode {
				t.Fatalf("status %d code %s, want %d %s (%s)", rec.Code, e.Code, c.wantStatus, c.wantCode, e.Message)
			}
			f.Subgraph.Rewrite, pool.Slot0Raw = nil, nil
			if rec := get(t, srv, c.path); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Fatalf("after recovery: %d %s (an error was cached?)", rec.Code, rec.Header().Get("X-Cache"))
			}
		})
	}
}

// An upstream's error text reaches the log scrubbed of what may be a key
// (a URL, a long token) and cut to a bounded length: a 20 MB GraphQL error
// message becomes one short line.
func TestUpstreamErrorTextIsScrubbedAndBoundedInTheLog(t *testing.T) {
	t.Parallel()
	var logBuf bytes.Buffer
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.AccessLog = &logBuf })
	key := "abcdef0123456789abcdef0123456789"
	f.Subgraph.Fail = func(string) *graphnodetest.Failure {
		return &graphnodetest.Failure{Errors: []string{"bad api key " + key + " for https://gateway.example/api/" + key + "/subgraphs " + strings.Repeat("x", 20<<20)}}
	}
	rec := get(t, srv, strikes)
	if rec.Code != http.StatusBadGateway {
		t.Fatalf("status %d", rec.Code)
	}
	line := logBuf.String()
	if strings.Contains(line, key) || strings.Contains(line, "gateway.example") {
		t.Errorf("the key reached the log: %.400s", line)
	}
	if len(line) > 4<<10 {
		t.Errorf("log line of %d bytes", len(line))
	}
	if !strings.Contains(line, "bad api key") {
		t.Errorf("the cause is gone: %s", line)
	}
}

// A client that goes away while its miss is being filled is its own
// outcome: 499 in the access log and metrics, not a 500 (and not the
// gateway's failure).
func TestClientGoneDuringAMissIs499(t *testing.T) {
	t.Parallel()
	var logBuf syncBuffer
	srv, f := newFakeServerWith(t, func(o *gateway.Options) { o.AccessLog = &logBuf })
	entered, release := make(chan struct{}), make(chan struct{})
	f.Subgraph.Fail = func(string) *graphnodetest.Failure {
		close(entered)
		<-release
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, strikes, nil).WithContext(ctx))
	}()
	<-entered
	cancel()
	<-done
	close(release)
	var line struct {
		Status int    `json:"status"`
		Level  string `json:"level"`
	}
	if err := json.Unmarshal(logBuf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, logBuf.Bytes())
	}
	if line.Status != gateway.StatusClientClosed || line.Level != "INFO" {
		t.Errorf("logged %+v, want status 499 at INFO", line)
	}
}

// syncBuffer is a bytes.Buffer safe for the gateway's writes and the
// test's reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// What the router or net/http would answer in their own way is the JSON
// error shape, with an access-log line: oversized header fields (431, not
// net/http's text), unclean paths (404, not gorilla/mux's empty 301), a
// request target that is not a path (OPTIONS *).
func TestRawAnswersAreJSON(t *testing.T) {
	t.Parallel()
	var logBuf syncBuffer
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) { o.AccessLog = &logBuf })
	big := httptest.NewRequest(http.MethodGet, strikes, nil)
	big.Header.Set("X-Padding", strings.Repeat("a", gateway.MaxHeaderBytes))
	options := httptest.NewRequest(http.MethodOptions, "*", nil)
	for _, c := range []struct {
		name string
		req  *http.Request
		want int
	}{
		{"header fields over the bound", big, http.StatusRequestHeaderFieldsTooLarge},
		{"double slash", httptest.NewRequest(http.MethodGet, "/"+strikes, nil), http.StatusNotFound},
		{"dot segment", httptest.NewRequest(http.MethodGet, "/clamm/./strikes-chain?chainId=42161", nil), http.StatusNotFound},
		{"dot-dot segment", httptest.NewRequest(http.MethodGet, "/clamm/x/../strikes-chain", nil), http.StatusNotFound},
		{"OPTIONS *", options, http.StatusNotFound},
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, c.req)
		if e := decodeError(t, rec); rec.Code != c.want || e.Code == "" {
			t.Errorf("%s: %d %+v", c.name, rec.Code, e)
		}
	}
	if lines := bytes.Count(logBuf.Bytes(), []byte("\n")); lines != 5 {
		t.Errorf("%d access-log lines for 5 requests", lines)
	}
}

// A trailing slash and a wrong method are refused with messages that say
// what to change: the 404 names the slash, the 405's text matches Allow.
func TestRefusalsSayWhatToChange(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	rec := get(t, srv, gateway.PathStrikesChain+"/?chainId=42161")
	if e := decodeError(t, rec); rec.Code != http.StatusNotFound || !strings.Contains(e.Message, "trailing slash") {
		t.Errorf("trailing slash: %d %+v", rec.Code, e)
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, strikes, nil))
	e := decodeError(t, rec)
	if allow := rec.Header().Get("Allow"); rec.Code != http.StatusMethodNotAllowed || allow != "GET, HEAD" || !strings.Contains(e.Message, "GET and HEAD") {
		t.Errorf("POST: %d, Allow %q, %+v", rec.Code, allow, e)
	}
}
