package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
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
	eventually(t, "every request to be reading its header or answered", func() bool {
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
	eventually(t, "the header read of the block", func() bool { inFlight, _, _ := h.state(); return inFlight > 0 })
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
	eventually(t, "the header read", func() bool { inFlight, _, _ := h.state(); return inFlight == 1 })
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
