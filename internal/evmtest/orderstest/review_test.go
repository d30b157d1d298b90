package orderstest

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// spyChain notes the book's chain calls in order.
type spyChain struct {
	vocab.Chain
	mu    sync.Mutex
	calls []string
	// simErr, when set, is every SimulateCall's answer (a node's error).
	simErr error
	// reach, when set, is the lowest block an OrderEvents read gets to
	// (a read's bound of round trips, from a head far above the order).
	reach uint64
}

func (c *spyChain) note(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, name)
}

func (c *spyChain) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, s := range c.calls {
		if s == name {
			n++
		}
	}
	return n
}

func (c *spyChain) BlockNumber(ctx context.Context) (uint64, error) {
	c.note("BlockNumber")
	return c.Chain.BlockNumber(ctx)
}

func (c *spyChain) OrderStates(ctx context.Context, qs []chain.OrderQuery) (int64, []chain.OrderState, error) {
	c.note("OrderStates")
	return c.Chain.OrderStates(ctx, qs)
}

func (c *spyChain) SimulateCall(ctx context.Context, from, to common.Address, data []byte) ([]byte, error) {
	c.note("SimulateCall")
	if c.simErr != nil {
		return nil, c.simErr
	}
	return c.Chain.SimulateCall(ctx, from, to, data)
}

func (c *spyChain) OrderEvents(ctx context.Context, contract common.Address, from, to uint64, enough func([]chain.OrderEvent) bool) ([]chain.OrderEvent, uint64, error) {
	evs, reached, err := c.Chain.OrderEvents(ctx, contract, max(from, c.reach), to, enough)
	return evs, max(reached, c.reach), err
}

// OrderLogReach is reach when set: the spy's reads stop there as a
// read's bound does, whatever the node answers.
func (c *spyChain) OrderLogReach(to uint64) uint64 {
	return max(c.Chain.OrderLogReach(to), c.reach)
}

// spied is the world's book over a spy of its chain, with limits.
func (w *world) spied(limits orders.Limits) (*orders.Orders, *spyChain) {
	up := *w.chains[chainID]
	spy := &spyChain{Chain: up.Chain}
	up.Chain = spy
	return orders.New(vocab.Chains{chainID: &up}, w.repo, limits), spy
}

// The block an accepted order states is read before the state the book
// checked, so it is never newer than that state (a fill or cancel
// between the two reads would otherwise fall before the range searched).
func TestAcceptedBlockIsReadBeforeTheState(t *testing.T) {
	w := newWorld(t)
	svc, spy := w.spied(orders.Limits{})
	so := w.takeProfit(t, big.NewInt(10), w.alice)
	if _, _, err := svc.Submit(w.ctx, so); err != nil {
		t.Fatal(err)
	}
	first := map[string]int{}
	for i, c := range spy.calls {
		if _, ok := first[c]; !ok {
			first[c] = i
		}
	}
	if b, s := first["BlockNumber"], first["OrderStates"]; spy.count("BlockNumber") == 0 || b > s {
		t.Fatalf("calls %v: the block is read after the state", spy.calls)
	}
}

// One fillable answer simulates at most Limits.Simulations orders,
// however many open ones sit below their minimum.
func TestFillableBoundsItsSimulations(t *testing.T) {
	w := newWorld(t)
	svc, spy := w.spied(orders.Limits{PerMaker: 10, Simulations: 2})
	for i := 0; i < 3; i++ {
		if _, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(50_000_000+int64(i)), w.alice)); err != nil {
			t.Fatal(err)
		}
	}
	fs, err := svc.Fillable(w.ctx, orders.FillableRequest{ChainID: chainID, SwapperID: w.swapperID, Filler: w.filler.Addr})
	if err != nil || len(fs) != 0 {
		t.Fatalf("below the minimum: %v %+v", err, fs)
	}
	if n := spy.count("SimulateCall"); n != 2 {
		t.Fatalf("%d simulations for three orders under a bound of 2", n)
	}
}

// An order the book cannot judge for its own fault (its market is not a
// market, its body does not parse) reads invalid with why; the others
// are judged as ever, and the fillable answer does not fail.
func TestOneBadOrderFailsNoAnswer(t *testing.T) {
	w := newWorld(t)
	so := w.takeProfit(t, big.NewInt(10), w.alice)
	good, _, err := w.svc.Submit(w.ctx, so)
	if err != nil {
		t.Fatal(err)
	}
	notAMarket := so
	notAMarket.Data = hexutil.Encode(append(common.LeftPadBytes(big.NewInt(10).Bytes(), 32), append(common.LeftPadBytes(w.id.Bytes(), 32),
		common.LeftPadBytes(w.p.PutAsset.Bytes(), 32)...)...))
	body, _ := json.Marshal(notAMarket)
	for i, b := range [][]byte{body, []byte(`{"deadline": 12`)} {
		rec := orders.Record{ChainID: chainID, Hash: common.Hash{byte(i + 1)}, Contract: w.p.LimitOrders, Kind: orders.KindExercise,
			Maker: w.alice.Addr, Market: w.p.PutAsset, TokenID: w.id.String(), Body: b, AcceptedAt: 1, AcceptedBlock: 1, Deadline: 1 << 40}
		if _, _, err := w.repo.Insert(w.ctx, rec, 100); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := w.svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr})
	if err != nil || len(vs) != 3 {
		t.Fatalf("list: %v %d", err, len(vs))
	}
	for _, v := range vs {
		switch {
		case v.Hash == good.Hash && v.Status != orders.StatusOpen:
			t.Errorf("the good order: %+v", v)
		case v.Hash != good.Hash && (v.Status != orders.StatusInvalid || !strings.HasPrefix(v.Reason, "the book cannot judge this order")):
			t.Errorf("a bad order: %s %q", v.Status, v.Reason)
		}
	}
	if _, err := w.svc.Fillable(w.ctx, orders.FillableRequest{ChainID: chainID, SwapperID: w.swapperID}); err != nil {
		t.Fatalf("fillable: %v", err)
	}
}

// A node's error answer to an order's own call (a passing 502) is the
// node's fault, not the order's: the fillable answer fails RPC_ERROR
// rather than hiding the order as if it reverted.
func TestANodesErrorIsNoOrdersFault(t *testing.T) {
	w := newWorld(t)
	svc, spy := w.spied(orders.Limits{PerMaker: 10, Simulations: 2})
	if _, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(10), w.alice)); err != nil {
		t.Fatal(err)
	}
	spy.simErr = problem.New(problem.RPCError, "the rpc node answered with an error: bad gateway")
	if _, err := svc.Fillable(w.ctx, orders.FillableRequest{ChainID: chainID, SwapperID: w.swapperID, Filler: w.filler.Addr}); code(err) != "RPC_ERROR" {
		t.Fatalf("fillable over a node's error: %v", err)
	}
}

// A used order whose closing event lies below the blocks one read gets
// to (its bound of round trips) reads invalid with why; the rest of the
// book is answered, and the order is kept so (TestALostEventIsLookedForOnce
// counts the reads): a later read does not look for its event again.
func TestAnEventBeyondTheReadIsOneOrdersMatter(t *testing.T) {
	w := newWorld(t)
	svc, spy := w.spied(orders.Limits{PerMaker: 10})
	old, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(10), w.alice))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := svc.CancelPrepare(w.ctx, chainID, common.HexToHash(old.Hash))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.p.Chain.SendRaw(w.alice, common.HexToAddress(cp.Tx.To), hexutil.MustDecode(cp.Tx.Data), "cancel"); err != nil {
		t.Fatal(err)
	}
	fresh, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(11), w.alice))
	if err != nil {
		t.Fatal(err)
	}
	head, err := spy.Chain.BlockNumber(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	spy.reach = head + 1
	vs, err := svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr})
	if err != nil || len(vs) != 2 {
		t.Fatalf("list: %v %d", err, len(vs))
	}
	for _, v := range vs {
		switch {
		case v.Hash == fresh.Hash && v.Status != orders.StatusOpen:
			t.Errorf("the fresh order: %+v", v)
		case v.Hash == old.Hash && (v.Status != orders.StatusInvalid || !strings.Contains(v.Reason, "not found in the blocks read back from the head")):
			t.Errorf("the order closed below the read: %s %q", v.Status, v.Reason)
		}
	}
	spy.reach = 0
	vs, err = svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr, Status: orders.StatusInvalid})
	if err != nil || len(vs) != 1 || vs[0].Hash != old.Hash || vs[0].Closed == nil {
		t.Fatalf("kept: %v %+v", err, vs)
	}
}

// indexed is a subgraph that indexes only the markets listed.
type indexed struct {
	vocab.Subgraph
	markets []common.Address
}

func (s indexed) OptionMarkets(context.Context) ([]subgraph.Market, subgraph.Meta, error) {
	out := make([]subgraph.Market, len(s.markets))
	for i, m := range s.markets {
		out[i].ID = subgraph.Address(m)
	}
	return out, subgraph.Meta{}, nil
}

// An order of a market the chain's subgraph does not index is refused
// (404 MARKET_NOT_FOUND) and nothing stored; once indexed, it is kept.
func TestOrderOfAnUnknownMarketIsRefused(t *testing.T) {
	w := newWorld(t)
	so := w.takeProfit(t, big.NewInt(10), w.alice)
	up := *w.chains[chainID]
	up.Subgraph = indexed{markets: []common.Address{w.p.Pool}}
	svc := orders.New(vocab.Chains{chainID: &up}, w.repo, orders.Limits{})
	if _, _, err := svc.Submit(w.ctx, so); code(err) != "MARKET_NOT_FOUND" {
		t.Fatalf("an order of a market the subgraph does not index: %v", err)
	}
	if n, _ := w.repo.Count(w.ctx); n != 0 {
		t.Fatalf("the book holds %d orders", n)
	}
	up.Subgraph = indexed{markets: []common.Address{w.p.Pool, w.p.Market}}
	if _, created, err := svc.Submit(w.ctx, so); err != nil || !created {
		t.Fatalf("once indexed: %v %v", created, err)
	}
}
