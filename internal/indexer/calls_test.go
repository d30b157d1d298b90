package indexer_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
)

// pricedCalls answers the handlers' pools' slot0() at a price of the block
// (plus 10^6 from block flipFrom on once flipped: another branch's
// state), and reverts at every block a multiple of 30 and for any other
// call: the answers a prefetch must reproduce, block by block.
func pricedCalls(flipped *atomic.Bool, flipFrom uint64, hs ...*indexertest.Handler) func(common.Address, []byte, uint64) ([]byte, bool) {
	return func(to common.Address, data []byte, n uint64) ([]byte, bool) {
		if n%30 == 0 {
			return nil, true
		}
		p := new(big.Int).Add(price, big.NewInt(int64(n)*1000))
		if flipped != nil && flipped.Load() && n >= flipFrom {
			p.Add(p, big.NewInt(1_000_000))
		}
		for i, h := range hs {
			if to == h.Pool {
				return h.Slot0(p.Add(p, big.NewInt(int64(i))), int64(n%100))(to, data, n)
			}
		}
		return nil, true
	}
}

// priced adds, at each step-th block of from..to, a deposit, a purchase
// and its donation on h's range (the deposit and the donation read the
// pool's price).
func priced(c *indexertest.Chain, h *indexertest.Handler, from, to, step uint64, liquidity int64) {
	for n := from; n <= to; n += step {
		tl := -200_000 + 10*int64(n%7)
		c.Add(n, &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, tl, liquidity+int64(n)), h.Use(tl, 10), h.Donate(tl, 3)}})
	}
}

// The mappings' eth_calls far below the head are asked ahead, in batches,
// and answer what the node answers at each block (prices that change
// every block, reverts): the store equals the reference's. A handler
// whose events switch to another pool wastes a few prefetched calls
// until the prediction follows.
func TestPrefetchedCallsAnswerAsTheNode(t *testing.T) {
	c, h := newChain(t, 3200)
	h2, err := indexertest.NewHandler(handlerAddr, common.HexToAddress("0xb0002"))
	if err != nil {
		t.Fatal(err)
	}
	c.Call = pricedCalls(nil, 0, h, h2)
	priced(c, h, 100, 1995, 5, 1_000_000)
	priced(c, h2, 2000, 3000, 5, 2_000_000)
	ix := open(t, c, filepath.Join(t.TempDir(), "p.sqlite"), indexer.Options{Range: 50, MaxRange: 50, Confirmations: 20})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	sameAnswers(t, "with prefetched calls", answers(t, ix), answers(t, reference(t, c)))

	n := ix.Counts()
	single, all := c.Requests()["eth_call"], c.Calls("eth_call")
	t.Logf("eth_calls: %d, %d of them alone; prefetched %d, used %d", all, single, n.CallsPrefetched, n.CallsUsed)
	if 2*n.CallsUsed < all || 2*single > all {
		t.Errorf("%d of %d eth_calls were sent alone (%d prefetched, %d used): the calls were not asked ahead", single, all, n.CallsPrefetched, n.CallsUsed)
	}
	if n.CallsUsed > n.CallsPrefetched || n.Requests["eth_call"] != all {
		t.Errorf("counts: %+v; the node answered %d eth_calls", n, all)
	}
	// after the switch to the second pool: the first pool's prediction
	// held for the ranges fetched ahead, then gave way to the second's
	wasted := n.CallsPrefetched - n.CallsUsed
	if wasted == 0 || 5*wasted > n.CallsPrefetched {
		t.Errorf("%d of %d prefetched calls unused: want some (the switch of pools), and few", wasted, n.CallsPrefetched)
	}
}

// callFault serves a chain but fails every batch that carries eth_calls:
// with an HTTP status (status set), or with a JSON-RPC error for each
// call.
type callFault struct {
	c      *indexertest.Chain
	status int
	// code and message: each call's error object (zero: -32603
	// "internal error"); only: the batches refused, the first that many
	// (0: all).
	code    int
	message string
	only    int64
	refused atomic.Int64
}

// body reads a request's body and puts it back for the chain to read.
func body(r *http.Request) []byte {
	raw, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw))
	return raw
}

func (f *callFault) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := body(r)
	var calls []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(raw, &calls) == nil && len(calls) > 0 && calls[0].Method == "eth_call" && (f.only == 0 || f.refused.Load() < f.only) {
		f.refused.Add(1)
		if f.status != 0 {
			http.Error(w, "upstream failed", f.status)
			return
		}
		out := make([]map[string]any, len(calls))
		for i, q := range calls {
			code, msg := -32603, "internal error"
			if f.message != "" {
				code, msg = f.code, f.message
			}
			out[i] = map[string]any{"jsonrpc": "2.0", "id": q.ID, "error": map[string]any{"code": code, "message": msg}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
		return
	}
	f.c.ServeHTTP(w, r)
}

// A prefetch the node fails (the whole batch, or each call in it) is no
// answer: the mappings ask those calls live, and the store equals the
// reference's. After eight ranges in a row without an answer, no more is
// asked ahead (but for one range in retryEvery, 32: more than this chain
// has far below the head).
func TestPrefetchFailuresAreAskedLive(t *testing.T) {
	for _, status := range []int{http.StatusInternalServerError, 0} {
		c, h := newChain(t, 1500)
		c.Call = pricedCalls(nil, 0, h)
		priced(c, h, 100, 1400, 5, 1_000_000)
		f := &callFault{c: c, status: status}
		ix := openOn(t, f, filepath.Join(t.TempDir(), "f.sqlite"), indexer.Options{Range: 50, MaxRange: 50, Confirmations: 20})
		runUntilSynced(t, ix, c)
		sameAnswers(t, "prefetches failing", answers(t, ix), answers(t, reference(t, c)))
		n := ix.Counts()
		// (ranges fetched at once, four, may each have sent one before)
		if r := f.refused.Load(); r < 8 || r > 8+3 || n.CallsPrefetched == 0 || n.CallsUsed != 0 {
			t.Errorf("status %d: %d batches failed, %d calls prefetched, %d used: want 8 failed prefetches (to 11), none used", status, f.refused.Load(), n.CallsPrefetched, n.CallsUsed)
		}
		_ = ix.Close()
	}
}

// A prefetch refused for the rate of requests (Infura's -32005) is not
// the node's refusal of batches: it does not count toward pausing, and
// every range far below the head still asks ahead.
func TestPrefetchRateLimitsDoNotPause(t *testing.T) {
	c, h := newChain(t, 1500)
	c.Call = pricedCalls(nil, 0, h)
	priced(c, h, 100, 1400, 5, 1_000_000)
	f := &callFault{c: c, code: -32005, message: "project ID request rate exceeded"}
	ix := openOn(t, f, filepath.Join(t.TempDir(), "f.sqlite"), indexer.Options{Range: 50, MaxRange: 50, Confirmations: 20})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	sameAnswers(t, "prefetches rate limited", answers(t, ix), answers(t, reference(t, c)))
	if r := f.refused.Load(); r <= 8+3 {
		t.Errorf("%d prefetches refused for the rate of requests: want more than 8 (to 11), one a range far below the head", r)
	}
}

// A node that failed every prefetch for giveUp ranges in a row, then
// answers, is asked ahead again: a paused prefetch tries one range in
// retryEvery, and an answer resumes it. (The node fails eleven batches:
// the eight that pause, the ranges fetched at once beside them, and the
// first tries while paused; the chain has room for four.)
func TestPrefetchResumesAfterFailures(t *testing.T) {
	c, h := newChain(t, 2500)
	c.Call = pricedCalls(nil, 0, h)
	priced(c, h, 100, 2400, 5, 1_000_000)
	f := &callFault{c: c, status: http.StatusInternalServerError, only: 11}
	ix := openOn(t, f, filepath.Join(t.TempDir(), "f.sqlite"), indexer.Options{Range: 10, MaxRange: 10, Confirmations: 20})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	sameAnswers(t, "prefetches failing, then answered", answers(t, ix), answers(t, reference(t, c)))
	if n := ix.Counts(); n.CallsUsed == 0 {
		t.Errorf("%d batches failed, %d calls prefetched, none used: prefetching never resumed", f.refused.Load(), n.CallsPrefetched)
	}
}

// reorgAfterPrefetch serves a chain and, once it has answered the prefetch
// of block at's calls, replaces the chain from block at (new hashes, new
// deposits, other prices): the prefetched answers are of blocks no longer
// on the chain.
type reorgAfterPrefetch struct {
	c       *indexertest.Chain
	at      uint64
	old     []byte
	once    sync.Once
	branch  func()
	flipped atomic.Bool
}

func (g *reorgAfterPrefetch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw := body(r)
	g.c.ServeHTTP(w, r)
	if bytes.HasPrefix(raw, []byte("[")) && bytes.Contains(raw, []byte(`"eth_call"`)) && bytes.Contains(raw, g.old) {
		g.once.Do(func() {
			g.c.Reorg(g.at)
			g.branch()
			g.flipped.Store(true)
		})
	}
}

// A reorg between a prefetch and the use of its answers: the range of
// the replaced blocks is applied with the answers of its own blocks, then
// dropped (the next range, near the head, does not link to it: the
// uncommitted ranges are discarded, or a committed one reverted), and the
// new branch is indexed with answers asked at its own blocks: the store
// equals the reference of the chain as it is.
func TestReorgAfterPrefetchIndexesTheNewBranch(t *testing.T) {
	c, h := newChain(t, 1000)
	g := &reorgAfterPrefetch{c: c, at: 690}
	g.old, _ = json.Marshal(c.Hash(690))
	g.branch = func() { priced(c, h, 690, 1000, 5, 5_000_000) }
	c.Call = pricedCalls(&g.flipped, g.at, h)
	priced(c, h, 100, 1000, 5, 1_000_000)
	// ranges of 50 blocks from 100; those up to 699 are far (1000 - 301):
	// 690 is in the last far one, which the next one, near, is linked to
	ix := openOn(t, g, filepath.Join(t.TempDir(), "r.sqlite"), indexer.Options{Range: 50, MaxRange: 50, Confirmations: 301})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	if !g.flipped.Load() {
		t.Fatal("block 690's call was never prefetched")
	}
	sameAnswers(t, "after a reorg past prefetched answers", answers(t, ix), answers(t, reference(t, c)))
}
