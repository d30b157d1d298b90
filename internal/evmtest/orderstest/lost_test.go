package orderstest

import (
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders/pgtest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// bookStores are the stores a book runs on: the embedded SQLite (the
// world's) and a real PostgreSQL (pgtest: skipped on a machine without
// it, failed in CI).
var bookStores = []struct {
	name string
	open func(t *testing.T, w *world) orders.Repository
}{
	{"sqlite", func(_ *testing.T, w *world) orders.Repository { return w.repo }},
	{"postgres", func(t *testing.T, _ *world) orders.Repository {
		pg := pgtest.Start(t)
		r, err := orders.OpenPostgres(context.Background(), pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Shutdown() })
		return r
	}},
}

// logCounter counts the eth_getLogs a reader sends to the node; with
// blank set it answers each with no logs, as a node whose logs lag its
// state does. It has no batch call, so the reader sends each request of
// a batch alone and every one is counted.
//
// With refuse set, it answers every eth_getLogs of more than one block
// with that error, as a provider refusing ranges as too full, or rate
// limiting, does.
type logCounter struct {
	chain.Caller
	logs   atomic.Int64
	blank  atomic.Bool
	refuse atomic.Pointer[nodeRefusal]
}

// nodeRefusal is a node's JSON-RPC error answer.
type nodeRefusal struct {
	code int
	msg  string
}

func (e *nodeRefusal) Error() string  { return e.msg }
func (e *nodeRefusal) ErrorCode() int { return e.code }

func (c *logCounter) CallContext(ctx context.Context, result any, method string, args ...any) error {
	if method == "eth_getLogs" {
		c.logs.Add(1)
		if c.blank.Load() {
			return json.Unmarshal([]byte(`[]`), result)
		}
		q, _ := args[0].(map[string]any)
		from, _ := q["fromBlock"].(hexutil.Uint64)
		to, _ := q["toBlock"].(hexutil.Uint64)
		if e := c.refuse.Load(); e != nil && to > from {
			return e
		}
	}
	return c.Caller.CallContext(ctx, result, method, args...)
}

// narrowBook is the world's book on repo over a reader whose log reads
// ask one block each, one to a round trip: a read's bound (64 round
// trips) then stops 64 blocks below the head, as 7.68 million blocks
// below it do at the providers' usual cap.
func (w *world) narrowBook(t *testing.T, repo orders.Repository) (*orders.Orders, *logCounter) {
	t.Helper()
	return w.narrowBookOf(t, repo, 1)
}

// narrowBookOf is narrowBook reading logRange blocks to a round trip.
func (w *world) narrowBookOf(t *testing.T, repo orders.Repository, logRange uint64) (*orders.Orders, *logCounter) {
	t.Helper()
	c := &logCounter{Caller: w.p.Chain.RPC()}
	d := config.Default()
	r, err := chain.NewReader(c, chain.Options{Multicall3: w.multicall, CallTimeout: d.UpstreamTimeout.D(), ImmutablesTTL: d.ImmutablesTTL.D(),
		Swaps: chain.SwapLimits{LogRange: logRange, PerBatch: 1, MaxPerBatch: 1, Slack: 1}})
	if err != nil {
		t.Fatal(err)
	}
	up := *w.chains[chainID]
	up.Chain = r
	return orders.New(vocab.Chains{chainID: &up}, repo, orders.Limits{PerMaker: 10}), c
}

// cancelled is alice's take-profit, accepted by svc and then cancelled
// on chain, with the cancel's block.
func (w *world) cancelled(t *testing.T, svc *orders.Orders, minProfit int64) (orders.View, uint64) {
	t.Helper()
	v, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(minProfit), w.alice))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := svc.CancelPrepare(w.ctx, chainID, common.HexToHash(v.Hash))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := w.p.Chain.SendRaw(w.alice, common.HexToAddress(cp.Tx.To), hexutil.MustDecode(cp.Tx.Data), "cancel")
	if err != nil {
		t.Fatal(err)
	}
	return v, rc.BlockNumber.Uint64()
}

// listed is alice's book as svc lists it, by hash, and the eth_getLogs
// the list sent.
func (w *world) listed(t *testing.T, svc *orders.Orders, c *logCounter) (map[string]orders.View, int64) {
	t.Helper()
	before := c.logs.Load()
	vs, err := svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]orders.View{}
	for _, v := range vs {
		out[v.Hash] = v
	}
	return out, c.logs.Load() - before
}

// A used order whose cancel lies below the blocks one read of the book
// reaches (its bound of 64 round trips) is read for once: the first list
// sends the 64 eth_getLogs and keeps the order closed, invalid with why
// and the blocks read; later lists, and a restarted gateway on the same
// store, read it from the store with no eth_getLogs. The other orders
// are judged as ever.
func TestALostEventIsLookedForOnce(t *testing.T) {
	for _, st := range bookStores {
		t.Run(st.name, func(t *testing.T) {
			w := newWorld(t)
			repo := st.open(t, w)
			svc, c := w.narrowBook(t, repo)
			old, cancelAt := w.cancelled(t, svc, 10)
			fresh, _, err := svc.Submit(w.ctx, w.takeProfit(t, big.NewInt(11), w.alice))
			if err != nil {
				t.Fatal(err)
			}
			for range 70 {
				w.p.Chain.Commit()
			}
			head := w.p.Chain.BlockNumber()
			first, n := w.listed(t, svc, c)
			o := first[old.Hash]
			if n != 64 || o.Status != orders.StatusInvalid || o.Closed == nil || !strings.Contains(o.Reason, "its event was not found") {
				t.Fatalf("first list: %d eth_getLogs, %s %q %+v", n, o.Status, o.Reason, o.Closed)
			}
			if cl := o.Closed; cl.Status != orders.StatusInvalid || cl.SearchedTo != head || cl.SearchedFrom != head-63 || cl.Reason != o.Reason || cl.Event != "" {
				t.Fatalf("the kept closure %+v at head %d", cl, head)
			}
			if cancelAt >= o.Closed.SearchedFrom || first[fresh.Hash].Status != orders.StatusOpen {
				t.Fatalf("setup: the cancel at block %d, blocks %d on read; the fresh order %+v", cancelAt, o.Closed.SearchedFrom, first[fresh.Hash])
			}
			restarted, c2 := w.narrowBook(t, repo)
			for i, b := range []struct {
				svc *orders.Orders
				c   *logCounter
			}{{svc, c}, {restarted, c2}} {
				again, n := w.listed(t, b.svc, b.c)
				if a := again[old.Hash]; n != 0 || a.Status != o.Status || a.Reason != o.Reason || a.Closed == nil || *a.Closed != *o.Closed {
					t.Fatalf("list %d after: %d eth_getLogs, %+v", i+2, n, a)
				}
				if again[fresh.Hash].Status != orders.StatusOpen {
					t.Fatalf("list %d after: the fresh order %+v", i+2, again[fresh.Hash])
				}
			}
		})
	}
}

// A used order whose blocks the read covers whole without finding its
// event (a node whose logs lag its state) is not kept: every list reads
// again, and the one that finds the cancel closes the order cancelled.
func TestANodeBehindIsAskedAgain(t *testing.T) {
	for _, st := range bookStores {
		t.Run(st.name, func(t *testing.T) {
			w := newWorld(t)
			svc, c := w.narrowBook(t, st.open(t, w))
			old, _ := w.cancelled(t, svc, 10)
			c.blank.Store(true)
			for i := range 2 {
				vs, n := w.listed(t, svc, c)
				if o := vs[old.Hash]; n == 0 || o.Status != orders.StatusInvalid || o.Closed != nil || !strings.Contains(o.Reason, "since it was accepted") {
					t.Fatalf("list %d with the logs behind: %d eth_getLogs, %+v", i+1, n, o)
				}
			}
			c.blank.Store(false)
			vs, n := w.listed(t, svc, c)
			if o := vs[old.Hash]; n == 0 || o.Status != orders.StatusCancelled || o.Closed == nil || o.Closed.Event != "LogOrderCancelled" {
				t.Fatalf("once the logs caught up: %d eth_getLogs, %+v", n, o)
			}
		})
	}
}

// How deep one read of the book gets depends on the node during it, so
// a read stopped short by the node's answers keeps nothing: an order whose
// cancel lies within a clean read's depth (64 round trips of 2 blocks,
// 128 blocks) but below the blocks read reads again on the next list,
// which finds the cancel. A node refusing every 2-block window as too
// full costs the read three round trips per 2 blocks (42 blocks in 64
// trips): the order reads invalid, not kept. A node rate limiting them
// ("rate limit exceeded", -32005) is no range too large: the list fails
// RPC_UNAVAILABLE, as an outage, rather than halving windows.
func TestAReadStoppedShortKeepsNothing(t *testing.T) {
	for _, refusal := range []nodeRefusal{{-32005, "query returned more than 10000 results"}, {-32005, "rate limit exceeded"}} {
		t.Run(refusal.msg, func(t *testing.T) {
			w := newWorld(t)
			svc, c := w.narrowBookOf(t, w.repo, 2)
			old, cancelAt := w.cancelled(t, svc, 10)
			for range 100 {
				w.p.Chain.Commit()
			}
			head := w.p.Chain.BlockNumber()
			if cancelAt < head+1-128 || cancelAt >= head+1-42 {
				t.Fatalf("setup: the cancel at block %d, the head %d", cancelAt, head)
			}
			c.refuse.Store(&refusal)
			vs, err := svc.List(w.ctx, orders.ListRequest{ChainID: chainID, User: &w.alice.Addr})
			c.refuse.Store(nil)
			if strings.HasPrefix(refusal.msg, "rate") {
				if code(err) != "RPC_UNAVAILABLE" {
					t.Fatalf("a rate-limited read: %v", err)
				}
			} else if err != nil || len(vs) != 1 || vs[0].Status != orders.StatusInvalid || vs[0].Closed != nil ||
				!strings.Contains(vs[0].Reason, "a later read looks for it again") {
				t.Fatalf("a read stopped short: %v %+v", err, vs)
			}
			again, _ := w.listed(t, svc, c)
			if o := again[old.Hash]; o.Status != orders.StatusCancelled || o.Closed == nil || o.Closed.Block != cancelAt {
				t.Fatalf("a clean read after: %+v", o)
			}
		})
	}
}
