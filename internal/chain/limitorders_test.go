package chain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// capped is a node that refuses an eth_getLogs range wider than its cap,
// as providers do ("exceed maximum block range"), and notes the widest it
// answered.
type capped struct {
	node http.Handler
	cap  uint64
	// refusal, when set, is the error a range past the cap gets instead.
	refusal map[string]any
	mu      sync.Mutex
	widest  uint64
	asked   int // eth_getLogs answered
}

func (c *capped) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var reqs []json.RawMessage
	batch := json.Unmarshal(body, &reqs) == nil
	if !batch {
		reqs = []json.RawMessage{body}
	}
	out := make([]json.RawMessage, len(reqs))
	for i, raw := range reqs {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []struct {
				FromBlock hexutil.Uint64 `json:"fromBlock"`
				ToBlock   hexutil.Uint64 `json:"toBlock"`
			} `json:"params"`
		}
		_ = json.Unmarshal(raw, &req)
		if req.Method == "eth_getLogs" && len(req.Params) == 1 {
			width := uint64(req.Params[0].ToBlock) - uint64(req.Params[0].FromBlock) + 1
			if width > c.cap {
				refusal := c.refusal
				if refusal == nil {
					refusal = map[string]any{"code": -32000, "message": "exceed maximum block range: 4000"}
				}
				out[i], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": refusal})
				continue
			}
			c.mu.Lock()
			c.widest = max(c.widest, width)
			c.asked++
			c.mu.Unlock()
		}
		rec := httptest.NewRecorder()
		c.node.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(raw)))
		out[i] = bytes.TrimSpace(rec.Body.Bytes())
	}
	w.Header().Set("Content-Type", "application/json")
	if batch {
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	_, _ = w.Write(out[0])
}

// The fills and cancels of the limit-orders contract are read in windows
// the provider accepts: a range of 30,000 blocks from a node that refuses
// more than 4,000 at once is read whole, each window within the cap.
func TestOrderEventsArePagedByTheProvidersCap(t *testing.T) {
	node, contract := cancelsAt(t, 100, 25_100)
	c := &capped{node: node, cap: 4_000}
	client := dial(t, c)
	r := testenv.NewReader(t, client, node.Multicall3)
	got, reached, err := r.OrderEvents(context.Background(), contract, 1, 30_000, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reached != 1 {
		t.Fatalf("read whole, yet reached block %d", reached)
	}
	if len(got) != 2 || got[0].Event != "LogOrderCancelled" || got[1].Block+got[0].Block != 25_200 {
		t.Fatalf("events %+v", got)
	}
	if c.widest == 0 || c.widest > c.cap {
		t.Fatalf("widest range answered %d, cap %d", c.widest, c.cap)
	}
}

// A read longer than its bound of round trips is no failure: it returns
// what it found from the head down and the lowest block it read, so an
// event beyond the bound is one order's matter, never the whole book's.
// A read whose caller has what it wants stops there.
func TestOrderEventsBeyondTheBoundAreNoFailure(t *testing.T) {
	node, contract := cancelsAt(t, 100, 9_990)
	c := &capped{node: node, cap: 10}
	client := dial(t, c)
	r, err := chain.NewReader(client, chain.Options{Multicall3: node.Multicall3, CallTimeout: time.Minute, ImmutablesTTL: time.Hour,
		Swaps: chain.SwapLimits{LogRange: 10, PerBatch: 1, MaxPerBatch: 1, Slack: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// 64 round trips of one window of 10 blocks: blocks 9,361 to 10,000.
	got, reached, err := r.OrderEvents(context.Background(), contract, 1, 10_000, nil)
	if err != nil {
		t.Fatalf("a read past its bound fails: %v", err)
	}
	if reached != 9_361 || len(got) != 1 || got[0].Block != 9_990 || c.asked != 64 {
		t.Fatalf("reached %d, %d getLogs, events %+v", reached, c.asked, got)
	}
	c.asked = 0
	one := func(evs []chain.OrderEvent) bool { return len(evs) > 0 }
	got, reached, err = r.OrderEvents(context.Background(), contract, 1, 10_000, one)
	if err != nil || len(got) != 1 || reached != 9_981 || c.asked != 2 {
		t.Fatalf("stopped at the first event: %v reached %d, %d getLogs, events %+v", err, reached, c.asked, got)
	}
}

// How deep one read gets depends on the node during it: each window it
// refuses as too full is halved at the cost of a round trip, so the read
// stops higher than a clean one. OrderLogReach is the depth no read under
// the same limits passes, however the node answers: 64 round trips of one
// window of 10 blocks below block 10,000 is blocks 9,361 to 10,000, and at
// the default limits (12 windows of 10,000 blocks) 7,680,000 blocks.
func TestOrderLogReachBoundsEveryRead(t *testing.T) {
	node, contract := cancelsAt(t, 100)
	c := &capped{node: node, cap: 5, refusal: map[string]any{"code": -32005, "message": "query returned more than 10000 results"}}
	r, err := chain.NewReader(dial(t, c), chain.Options{Multicall3: node.Multicall3, CallTimeout: time.Minute, ImmutablesTTL: time.Hour,
		Swaps: chain.SwapLimits{LogRange: 10, PerBatch: 1, MaxPerBatch: 1, Slack: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.OrderLogReach(10_000); got != 9_361 {
		t.Fatalf("reach below 10,000: %d", got)
	}
	if got := r.OrderLogReach(639); got != 0 {
		t.Fatalf("reach below 639 (all of the chain within 640 blocks): %d", got)
	}
	// The first 10-block window refused, then its two halves answered and
	// every window after them cut to 5 blocks: 63 windows of 5 blocks in
	// the 63 trips after the refusal, blocks 9,686 to 10,000.
	_, reached, err := r.OrderEvents(context.Background(), contract, 1, 10_000, nil)
	if err != nil || reached != 9_686 {
		t.Fatalf("a read of a node refusing every window: %v, reached %d", err, reached)
	}
	def := testenv.NewReader(t, dial(t, node), node.Multicall3)
	if got := def.OrderLogReach(10_000_000); got != 10_000_000-7_680_000+1 {
		t.Fatalf("reach at the default limits: %d", got)
	}
}

// A provider capping ranges below LogRange is asked at its cap once a
// window was refused: the windows after a refused one are no wider than
// its halves, so the refusals cost a round trip per halving once, not on
// every window. Cap 10 under windows of 160 blocks, one window a trip: 160,
// 80, 40 and 20 refused in the first four trips, then 60 windows of 10
// blocks in the other 60, blocks 9,401 to 10,000, which holds the cancel
// at block 9,500. Halving each window anew (31 trips per 160 blocks) got
// down to block 9,681 only and missed it.
func TestOrderEventsKeepTheNarrowedWidth(t *testing.T) {
	node, contract := cancelsAt(t, 100, 9_500)
	c := &capped{node: node, cap: 10}
	r, err := chain.NewReader(dial(t, c), chain.Options{Multicall3: node.Multicall3, CallTimeout: time.Minute, ImmutablesTTL: time.Hour,
		Swaps: chain.SwapLimits{LogRange: 160, PerBatch: 1, MaxPerBatch: 1, Slack: 1}})
	if err != nil {
		t.Fatal(err)
	}
	got, reached, err := r.OrderEvents(context.Background(), contract, 1, 10_000, nil)
	if err != nil || reached != 9_401 || c.asked != 60 || c.widest != 10 {
		t.Fatalf("%v: reached %d, %d getLogs answered, widest %d", err, reached, c.asked, c.widest)
	}
	if len(got) != 1 || got[0].Block != 9_500 || got[0].Event != "LogOrderCancelled" {
		t.Fatalf("events %+v", got)
	}
}

// A node's rate limit in a batch answer ("rate limit exceeded", Infura's
// -32005) is no range too large, though its words hold "limit": the read
// fails as the outage it is (RPC_UNAVAILABLE) rather than halving windows
// and spending its round trips on a node refusing them, which left it
// stopped far above a clean read's depth.
func TestOrderEventsFailOnARateLimit(t *testing.T) {
	for _, msg := range []string{"rate limit exceeded", "Your app has exceeded its compute units per second capacity", "project ID request rate exceeded"} {
		node, contract := cancelsAt(t, 100)
		c := &capped{node: node, cap: 5, refusal: map[string]any{"code": -32005, "message": msg}}
		r, err := chain.NewReader(dial(t, c), chain.Options{Multicall3: node.Multicall3, CallTimeout: time.Minute, ImmutablesTTL: time.Hour,
			Swaps: chain.SwapLimits{LogRange: 10, PerBatch: 1, MaxPerBatch: 1, Slack: 1}})
		if err != nil {
			t.Fatal(err)
		}
		_, reached, err := r.OrderEvents(context.Background(), contract, 1, 10_000, nil)
		if p := problem.As(err); err == nil || p.Code != problem.RPCUnavailable || c.asked != 0 {
			t.Errorf("%q: reached %d after %d ranges answered, %v", msg, reached, c.asked, err)
		}
	}
}

// cancelsAt is a node whose limit-orders contract logged a cancel at each
// block given.
func cancelsAt(t *testing.T, blocks ...uint64) (*chaintest.Node, common.Address) {
	t.Helper()
	node := chaintest.NewNode(t)
	contract := common.HexToAddress("0x91e45D19861049f98bD9520042283Be9C7F960B5")
	ev := contracts.LimitOrders.Events["LogOrderCancelled"]
	var logs []types.Log
	for i, blk := range blocks {
		data, err := ev.Inputs.Pack(contracts.LimitOrder{CreatedAt: big.NewInt(int64(i + 1)), Deadline: big.NewInt(1 << 40),
			Maker: common.Address{1}, Flags: 0x110, Data: make([]byte, 96)})
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, types.Log{Address: contract, Topics: []common.Hash{ev.ID}, Data: data, BlockNumber: blk,
			TxHash: common.Hash{byte(i + 1)}, BlockHash: node.HashOf(blk)})
	}
	node.History = &chaintest.History{Logs: logs}
	return node, contract
}

// dial is a client of h served on 127.0.0.1 for the test.
func dial(t *testing.T, h http.Handler) *rpc.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client, err := rpc.DialHTTP(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	return client
}
