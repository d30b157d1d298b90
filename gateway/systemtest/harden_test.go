package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// heldHeaders is the fake node behind a transport that holds every
// header read (eth_getBlockByNumber) until release is closed or its
// request's context ends, as a node that is slow to answer; it counts
// them: in flight now, at most at once, answered.
type heldHeaders struct {
	node     http.Handler
	mu       sync.Mutex
	inFlight int
	maxIn    int
	reads    int
	release  chan struct{}
}

func (h *heldHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if bytes.Contains(body, []byte(`"eth_getBlockByNumber"`)) {
		h.mu.Lock()
		h.inFlight++
		h.maxIn = max(h.maxIn, h.inFlight)
		release := h.release
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.inFlight--
			h.mu.Unlock()
		}()
		select {
		case <-release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		h.mu.Lock()
		h.reads++
		h.mu.Unlock()
	}
	return scenario.HandlerTransport{Handler: h.node}.RoundTrip(r)
}

func (h *heldHeaders) state() (inFlight, maxIn, reads int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inFlight, h.maxIn, h.reads
}

// hold starts holding header reads again, with counts from zero.
func (h *heldHeaders) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.release, h.maxIn, h.reads = make(chan struct{}), 0, 0
}

// newHeldServer is newFakeServerWith with the node's header reads held.
func newHeldServer(t *testing.T, adjust func(*gateway.Options)) (*gateway.Server, *scenario.Fakes, *heldHeaders) {
	t.Helper()
	f := newFakesOnly(t)
	h := &heldHeaders{node: f.Node}
	h.hold()
	tr := f.Transports()
	tr.RPC = h
	srv := newApp(t, app.Options{Config: config.Default(), Transports: map[uint64]upstream.Transports{42161: tr}, Gateway: adjust})
	return srv, f, h
}

// A flood of requests pinned to blocks (R1): the header read each needs
// before its cache lookup is held to the fill bound (CLAMM_MAX_FILLS = 4:
// at most 4 in flight, the others 503 OVERLOADED at once) and shared (100
// requests for one new block make one read). Before, 200 requests naming
// 200 blocks held 200 reads open, and 100 for one block made 100.
func TestPinnedBlockFloodIsBoundedAndShared(t *testing.T) {
	t.Parallel()
	const maxFills = 4
	srv, f, h := newHeldServer(t, func(o *gateway.Options) { o.MaxFills = maxFills })
	head := f.Node.BlockNumber
	var done sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	ask := func(n uint64) {
		done.Go(func() {
			rec := get(t, srv, strikes+"&block="+strconv.FormatUint(n, 10))
			mu.Lock()
			codes[rec.Code]++
			mu.Unlock()
		})
	}
	answered := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range codes {
			n += c
		}
		return n
	}
	for i := range uint64(200) {
		ask(head - 300 + i)
	}
	eventually.True(t, "every request to be reading its header or answered", func() bool {
		inFlight, _, _ := h.state()
		return inFlight+answered() >= 200
	})
	close(h.release)
	done.Wait()
	_, maxIn, reads := h.state()
	if maxIn > maxFills || reads != 200-codes[http.StatusServiceUnavailable] {
		t.Errorf("200 blocks: %d header reads, at most %d at once (bound %d)", reads, maxIn, maxFills)
	}
	if codes[http.StatusOK] != maxFills || codes[http.StatusServiceUnavailable] != 200-maxFills {
		t.Errorf("200 blocks: statuses %v, want %d answered and the rest 503 OVERLOADED", codes, maxFills)
	}

	h.hold()
	clear(codes)
	for range 100 {
		ask(head - 1)
	}
	eventually.True(t, "the header read of the block", func() bool { inFlight, _, _ := h.state(); return inFlight > 0 })
	close(h.release)
	done.Wait()
	if _, _, reads := h.state(); reads != 1 || codes[http.StatusOK] != 100 {
		t.Errorf("one block asked 100 times: %d header reads, statuses %v; want 1 read and 100 answers", reads, codes)
	}
}

// A client that hangs up while the header of the block it asked for is
// read (R9) is logged as 499 at INFO, like one that hangs up during its
// fill; before, 503 at WARN.
func TestClientGoneDuringTheHeaderReadIs499(t *testing.T) {
	t.Parallel()
	var logBuf syncBuffer
	srv, f, h := newHeldServer(t, func(o *gateway.Options) { o.AccessLog = &logBuf })
	defer close(h.release)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		at := strikes + "&block=" + strconv.FormatUint(f.Node.BlockNumber-2, 10)
		srv.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, at, nil).WithContext(ctx))
	}()
	eventually.True(t, "the header read", func() bool { inFlight, _, _ := h.state(); return inFlight == 1 })
	cancel()
	<-done
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

// What a node says about the block it answered at is checked against the
// block asked before anything is served or cached (R6-R8): a header of
// block N-1 for block=N, a header time of 2^64-1 (shown as -1 before), a
// pricing read that ran at block 1 beside an answer at the subgraph's
// head are 502 RPC_ERROR; once the node tells the truth the same request
// answers, at the right block (nothing wrong was cached).
func TestNodeAnswersAreCheckedAgainstTheBlockAsked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		path   func(f *scenario.Fakes) string
		header func(tag string, h map[string]any)
		call   func(to common.Address, data, ret []byte) []byte
	}{
		{name: "header of the block before", path: atBlockBeforeHead, header: func(tag string, h map[string]any) {
			if n, err := hexutil.DecodeUint64(tag); err == nil {
				h["number"] = hexutil.EncodeUint64(n - 1)
			}
		}},
		{name: "header time 2^64-1", path: atBlockBeforeHead, header: func(_ string, h map[string]any) { h["timestamp"] = "0xffffffffffffffff" }},
		{name: "pricing read at block 1", path: func(*scenario.Fakes) string { return quoteQuery }, call: pricingAtBlock(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, f := newFakeServer(t)
			path := c.path(f)
			f.Node.HeaderRewrite, f.Node.Rewrite = c.header, c.call
			rec := get(t, srv, path)
			if e := decodeError(t, rec); rec.Code != http.StatusBadGateway || e.Code != "RPC_ERROR" {
				t.Fatalf("%d %s, want 502 RPC_ERROR", rec.Code, rec.Body)
			}
			f.Node.Lock()
			f.Node.HeaderRewrite, f.Node.Rewrite = nil, nil
			f.Node.Unlock()
			rec = get(t, srv, path)
			if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
				t.Fatalf("after the node recovered: %d %s %s", rec.Code, rec.Header().Get("X-Cache"), rec.Body)
			}
			if n := rec.Header().Get("X-Block-Number"); path != quoteQuery && n != strconv.FormatUint(f.Node.BlockNumber-1, 10) {
				t.Errorf("answer at block %s, want %d", n, f.Node.BlockNumber-1)
			}
		})
	}
}

func atBlockBeforeHead(f *scenario.Fakes) string {
	return strikes + "&block=" + strconv.FormatUint(f.Node.BlockNumber-1, 10)
}

// pricingAtBlock rewrites a PricingRead answer to say it ran at block n.
func pricingAtBlock(n uint64) func(to common.Address, data, ret []byte) []byte {
	return func(to common.Address, data, ret []byte) []byte {
		if _, _, _, ok := contracts.UnpackPricingReadCode(data); !ok || to != (common.Address{}) {
			return ret
		}
		h, answers, err := contracts.UnpackPricingRead(ret)
		if err != nil {
			return ret
		}
		h.BlockNumber = new(big.Int).SetUint64(n)
		out, err := contracts.PackPricingReadOutput(h, answers)
		if err != nil {
			return ret
		}
		return out
	}
}

// Content negotiation follows RFC 9110 12.5.3 (R11): a coding listed by
// name is judged by its own q, * only stands for codings not listed, so
// "gzip;q=0, *" refuses gzip (it was sent gzip before).
func TestNamedCodingWinsOverStar(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	for ae, gzip := range map[string]bool{
		"gzip;q=0, *":           false,
		"*, gzip;q=0":           false,
		"x-gzip;q=0, *;q=1":     false,
		"GZIP; Q=0, *":          false,
		"gzip, deflate;q=0":     true,
		"*;q=0, gzip":           true,
		"gzip;q=0.5, *;q=0":     true,
		"*;q=0":                 false,
		"br, *":                 true,
		"deflate;q=0, gzip;q=0": false,
	} {
		rec := getWith(t, srv, strikes, map[string]string{"Accept-Encoding": ae})
		if got := rec.Header().Get("Content-Encoding") == "gzip"; rec.Code != http.StatusOK || got != gzip {
			t.Errorf("Accept-Encoding %q: %d, gzip %v, want %v", ae, rec.Code, got, gzip)
		}
	}
}

// With CORS origins configured every answer varies by Origin (R12),
// whether the request named one or not, large (gzip-able) answers too,
// beside Accept-Encoding: before, a large answer's Vary was replaced by
// Accept-Encoding alone, and a shared cache could serve one origin's
// answer to another.
func TestVaryOriginOnEveryAnswer(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) { o.CORSOrigins = []string{"https://app.example"} })
	small := gateway.PathExerciseHistory + "?" + query(historyParams, "first", "1", false)
	for _, c := range []struct {
		name, path, origin string
		want               []string
	}{
		{"large, allowed origin", strikes, "https://app.example", []string{"Origin", "Accept-Encoding"}},
		{"large, other origin", strikes, "https://evil.example", []string{"Origin", "Accept-Encoding"}},
		{"large, no origin", strikes, "", []string{"Origin", "Accept-Encoding"}},
		{"small, allowed origin", small, "https://app.example", []string{"Origin"}},
		{"small, no origin", small, "", []string{"Origin"}},
	} {
		h := map[string]string{"Accept-Encoding": "gzip"}
		if c.origin != "" {
			h["Origin"] = c.origin
		}
		rec := getWith(t, srv, c.path, h)
		if got := rec.Header().Values("Vary"); rec.Code != http.StatusOK || strings.Join(got, ", ") != strings.Join(c.want, ", ") {
			t.Errorf("%s: %d, Vary %q, want %q", c.name, rec.Code, got, c.want)
		}
	}
}

// Every parameter of every route is given once (R15): a second value of
// any of them, optional ones and block included, is a 400 naming it.
// Before, a parser that read a value by lookup took the first
// (shares=max&shares=5 prepared a withdrawal of every share).
func TestEveryParameterGivenOnce(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	for _, r := range demo.Requests {
		u, err := url.Parse(r.Path)
		if err != nil || !strings.HasPrefix(u.Path, "/clamm/") || u.RawQuery == "" {
			continue
		}
		for _, pair := range append(strings.Split(u.RawQuery, "&"), "block=5") {
			name, _, _ := strings.Cut(pair, "=")
			path := r.Path + "&" + pair
			if name == "block" && !strings.Contains(r.Path, "block=") {
				path = r.Path + "&block=5&block=6"
			}
			rec := get(t, srv, path)
			if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Param != name || !strings.Contains(e.Message, "given 2 times") {
				t.Errorf("%s with %s twice: %d %+v", r.Name, name, rec.Code, e)
			}
		}
	}
	withdraw := gateway.PathWithdrawPrepare + "?chainId=42161&user=0xA11CE00000000000000000000000000000000001&handler=0x29BbF7EbB9C5146c98851e76A5529985E4052116" +
		"&pool=0xC6962004f452bE9203591991D15f6b388e09E8D0&hook=0x0000000000000000000000000000000000000000&tickLower=-196200&tickUpper=-196190&shares=max&shares=5"
	if rec := get(t, srv, withdraw); decodeError(t, rec).Param != "shares" {
		t.Errorf("shares=max&shares=5: %d %s", rec.Code, rec.Body)
	}
}

// A statistics fill has a byte bound of its own over all its pages and
// reads (R13): a subgraph answering each of them just under the body
// limit makes the answer 502 SUBGRAPH_ERROR, its reads past the body limit
// in all; before, they spent the memory budget shared by every fill, and
// the answer was 503 OVERLOADED as if the gateway were busy. A body limit
// of 64 KiB and a budget of 512 KiB stand for the 32 MiB and 192 MiB
// defaults.
func TestStatsFillHasAByteBoundOfItsOwn(t *testing.T) {
	t.Parallel()
	f := newFakesOnly(t)
	f.Subgraph.Rewrite = func(op string, body []byte) []byte {
		if !strings.HasPrefix(op, "Stats") || len(body) >= 60<<10 {
			return body
		}
		end := bytes.LastIndexByte(body, '}')
		return append(append(append([]byte{}, body[:end]...), bytes.Repeat([]byte(" "), 60<<10-len(body))...), body[end:]...)
	}
	srv := newApp(t, app.Options{Config: config.Default(), Transports: onFakes(f), MaxBody: 64 << 10, Budget: upstream.NewBudget(512 << 10)})
	path := gateway.PathStats + "?" + statsQuery + "&from=1700000000&to=1731622400"
	rec := get(t, srv, path)
	if e := decodeError(t, rec); rec.Code != http.StatusBadGateway || e.Code != "SUBGRAPH_ERROR" {
		t.Fatalf("%d %+v, want 502 SUBGRAPH_ERROR", rec.Code, e)
	}
	f.Subgraph.Rewrite = nil
	if rec := get(t, srv, path); rec.Code != http.StatusOK {
		t.Fatalf("with answers of their own size: %d %s", rec.Code, rec.Body)
	}
}

// A premium of 2^256-1 from the pricing read (R5): the most the purchase
// may cost is past what a uint256 holds, so no approval covers it and
// mintOption would revert; the prepare is refused 422 PURCHASE_WOULD_REVERT
// saying so. Before, the approval and mintOption encoded the amount
// modulo 2^256 while the JSON showed the whole number: the transaction
// did not do what its answer said.
func TestPurchaseCostPastUint256IsRefused(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	maxUint := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	f.Node.Rewrite = func(to common.Address, data, ret []byte) []byte {
		if _, _, _, ok := contracts.UnpackPricingReadCode(data); !ok || to != (common.Address{}) {
			return ret
		}
		h, answers, err := contracts.UnpackPricingRead(ret)
		if err != nil {
			return ret
		}
		for i := range answers {
			if answers[i].PremiumOk {
				answers[i].Premium = maxUint
			}
		}
		out, _ := contracts.PackPricingReadOutput(h, answers)
		return out
	}
	prepare := strings.Replace(quoteQuery, gateway.PathPurchaseQuote, gateway.PathPurchasePrepare, 1) + "&slippage=1"
	prepare = strings.Replace(prepare, "user=0x0000000000000000000000000000000000000000", "user=0xA11CE00000000000000000000000000000000001", 1)
	rec := get(t, srv, prepare)
	if e := decodeError(t, rec); rec.Code != http.StatusUnprocessableEntity || e.Code != "PURCHASE_WOULD_REVERT" || !strings.Contains(e.Message, "2^256-1") {
		t.Fatalf("%d %+v, want 422 PURCHASE_WOULD_REVERT naming 2^256-1", rec.Code, e)
	}
}
