package indexer_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

// The tests of this file replay attack 5's hostile node (S1-S15 of
// ../shared/spec/attack-5.md) with indexertest.Hostile: after each fault
// the store equals a fresh index of the same chain, entity version by
// entity version, and the node was asked no more than the fix needs.

// running is an indexer's Run in the background.
type running struct {
	cancel context.CancelFunc
	done   chan error
}

func start(ix *indexer.Indexer) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- ix.Run(ctx) }()
	return r
}

func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	if err := <-r.done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// synced waits until ix has indexed c's head.
func synced(t testing.TB, ix *indexer.Indexer, c *indexertest.Chain) {
	t.Helper()
	eventually.True(t, "the index synced to the node's head", func() bool {
		st := ix.Status()
		if st.State == indexer.StateFailed {
			t.Fatalf("indexing failed: %s", st.Error)
		}
		return st.State == indexer.StateSynced && st.Block >= c.Head() && st.ChainHead == c.Head()
	})
}

// requestsMore waits until the node has received n more requests.
func requestsMore(t testing.TB, h *indexertest.Hostile, n int64) {
	t.Helper()
	from := h.Sent()
	eventually.True(t, fmt.Sprintf("%d more requests to the node", n), func() bool { return h.Sent() >= from+n })
}

// sameAsFresh compares ix's store with a fresh index of c, entity version
// by entity version, and their answers with the reference's.
func sameAsFresh(t testing.TB, what string, ix *indexer.Indexer, c *indexertest.Chain) {
	t.Helper()
	fresh := open(t, c, filepath.Join(t.TempDir(), "fresh.sqlite"), indexer.Options{})
	defer fresh.Close()
	runUntilSynced(t, fresh, c)
	got, err := ix.Store().Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Store().Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: the store differs from a fresh index: %d versions, a fresh index %d", what, len(got), len(want))
	}
	sameAnswers(t, what, answers(t, ix), answers(t, reference(t, c)))
}

// syncedBehind is a chain of 400 blocks with the handler's history, an
// indexer synced to it through a Hostile node (honest until Set).
func syncedBehind(t *testing.T) (*indexertest.Chain, *indexertest.Handler, *indexertest.Hostile, *indexer.Indexer) {
	t.Helper()
	c, h := newChain(t, 400)
	history(t, c, h, 100, 400, 3)
	node := indexertest.NewHostile(c)
	ix := openOn(t, node, filepath.Join(t.TempDir(), "a.sqlite"), indexer.Options{})
	t.Cleanup(func() { _ = ix.Close() })
	runUntilSynced(t, ix, c)
	return c, h, node, ix
}

// deposit adds a deposit at each block of from..to.
func deposits(c *indexertest.Chain, h *indexertest.Handler, from, to uint64, liquidity int64) {
	for n := from; n <= to; n++ {
		c.Add(n, &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, -199_000, liquidity+int64(n))}})
	}
}

// S1 (M30): a node whose eth_getLogs leaves out the newest block's logs (a
// provider whose log index trails its blocks) while the chain grows a
// block at a time, each with a deposit: no deposit is lost, and each left
// out is read again by its block's hash, once.
func TestS1LogsLaggingTheBlocksLoseNothing(t *testing.T) {
	c, h, node, ix := syncedBehind(t)
	node.Set(func(f *indexertest.Faults) { f.LogsLag = 1 })
	r := start(ix)
	byHash := 0
	for n := uint64(401); n <= 440; n++ {
		deposits(c, h, n, n, 5_000_000)
		before := c.Calls("eth_getLogs")
		synced(t, ix, c)
		byHash += int(c.Calls("eth_getLogs") - before)
	}
	node.Set(func(f *indexertest.Faults) { f.LogsLag = 0 })
	deposits(c, h, 441, 445, 5_000_000)
	synced(t, ix, c)
	r.stop(t)
	sameAsFresh(t, "after 40 blocks of lagging logs", ix, c)
	// each block: its range (left short) and its logs read again by hash,
	// maybe over several steps of the poll
	if byHash > 40*2*3 {
		t.Errorf("%d eth_getLogs for 40 blocks", byHash)
	}
}

// S1: the contract-behaviour audit's reproduction (M30): one eth_getLogs
// answer without block 410's logs, no error.
func TestS1OneShortAnswerAtTheHead(t *testing.T) {
	c, h, node, ix := syncedBehind(t)
	history(t, c, h, 410, 410, 1)
	c.SetHead(420)
	node.Set(func(f *indexertest.Faults) { f.LogsLag = 11 }) // 410 and after: left out once
	node.OnRequest(func(ms []string) {
		for _, m := range ms {
			if m == "eth_getLogs" {
				node.Set(func(f *indexertest.Faults) { f.LogsLag = 0 })
			}
		}
	})
	runUntilSynced(t, ix, c)
	sameAsFresh(t, "after one short answer", ix, c)
}

// S1: the chain reorganises between the indexer's eth_getLogs (the old
// branch: no logs at 420) and its headers (the new branch: a deposit at
// 420): the deposit is indexed.
func TestS1ReorgBetweenLogsAndHeaders(t *testing.T) {
	c, h, node, ix := syncedBehind(t)
	node.Set(func(f *indexertest.Faults) {
		f.Race = 420
		f.OnRace = func(c *indexertest.Chain) { deposits(c, h, 420, 420, 777_777) }
	})
	c.SetHead(450)
	runUntilSynced(t, ix, c)
	sameAsFresh(t, "after a reorg between the logs and the headers", ix, c)
}

// S2: a node behind the store (a replica still syncing at block 50, then
// one 20 blocks behind, then one whose newest 5 headers are null) is
// waited for: nothing is reverted, the store keeps every block, and the
// status says why it waits.
func TestS2NodeBehindIsWaitedForNeverReverted(t *testing.T) {
	c, h, node, ix := syncedBehind(t)
	r := start(ix)
	for _, behind := range []func(*indexertest.Faults){
		func(f *indexertest.Faults) { f.HeadAt = 50 },
		func(f *indexertest.Faults) { f.HeadAt = 380 },
		func(f *indexertest.Faults) { f.HeadersBehind = 5 },
	} {
		node.Set(behind)
		deposits(c, h, c.Head()+1, c.Head()+3, 1_000)
		requestsMore(t, node, 20)
		st := ix.Status()
		if st.Block < 400 || !strings.Contains(st.Error, "the node has no block") {
			t.Errorf("while the node is behind: %+v", st)
		}
		if n := ix.Counts().Reorgs; n != 0 {
			t.Fatalf("%d reorgs reverted for a node behind", n)
		}
		node.Set(func(f *indexertest.Faults) { *f = indexertest.Faults{} })
		synced(t, ix, c)
	}
	r.stop(t)
	sameAsFresh(t, "after the node was behind", ix, c)
}

// S10: a node that repeats a log in its eth_getLogs answers, and one that
// answers eth_getBlockByNumber(n) with block n+30: the log is applied
// once, the header refused (never a reset), and the store ends equal to a
// fresh index.
func TestS10LyingNodeIsNotBelieved(t *testing.T) {
	c, h := newChain(t, 400)
	history(t, c, h, 100, 400, 3)
	node := indexertest.NewHostile(c)
	node.Set(func(f *indexertest.Faults) { f.DupLog = true })
	ix := openOn(t, node, filepath.Join(t.TempDir(), "a.sqlite"), indexer.Options{})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	sameAsFresh(t, "with every range's last log repeated", ix, c)

	node.Set(func(f *indexertest.Faults) { *f = indexertest.Faults{HeaderAhead: 30} })
	deposits(c, h, 401, 480, 1_000)
	r := start(ix)
	eventually.True(t, "a header of another number refused", func() bool { return strings.Contains(ix.Status().Error, "answered block") })
	if n := ix.Counts().Reorgs; n != 0 {
		t.Errorf("%d reorgs for a header of another number", n)
	}
	node.Set(func(f *indexertest.Faults) { *f = indexertest.Faults{} })
	synced(t, ix, c)
	r.stop(t)
	sameAsFresh(t, "after headers of other numbers", ix, c)
}

// freshBehind is a chain of 3000 blocks with the handler's history to
// 2500 and an indexer of it, not started, behind a Hostile node with the
// faults f from its first request.
func freshBehind(t *testing.T, o indexer.Options, f func(*indexertest.Faults)) (*indexertest.Chain, *indexertest.Hostile, *indexer.Indexer) {
	t.Helper()
	c, h := newChain(t, 3000)
	history(t, c, h, 100, 2500, 7)
	node := indexertest.NewHostile(c)
	node.Set(f)
	if o.RPC == nil {
		o.RPC = dial(t, node, 0)
	}
	ix := openOn(t, node, filepath.Join(t.TempDir(), "a.sqlite"), o)
	t.Cleanup(func() { _ = ix.Close() })
	return c, node, ix
}

// S5: the first eth_call at each block hash answers -32000 "header not
// found" (a backend that has not seen the block yet): asked again, not
// taken for a pruned node; each call asked at most twice.
func TestS5TransientHeaderNotFoundIsRetried(t *testing.T) {
	// every block with a priced event asks slot0 at its hash: a short
	// pause, the same rule
	t.Cleanup(indexer.SetCallRetries(time.Millisecond, time.Millisecond, time.Millisecond))
	c, _, ix := freshBehind(t, indexer.Options{}, func(f *indexertest.Faults) { f.CallHeaderNotFound = true })
	runUntilSynced(t, ix, c)
	calls := c.Calls("eth_call")
	sameAsFresh(t, "after transient header-not-found answers", ix, c)
	if fresh := c.Calls("eth_call") - calls; calls == 0 || calls > 2*fresh {
		t.Errorf("%d eth_calls, a fresh index asks %d", calls, fresh)
	}
}

// S6: eth_getLogs answers padded past the bound on a node's answer are
// refused as they are read (never held whole), the range halved; once the
// node answers normally the index completes.
func TestS6AnswersPastTheBoundAreRefused(t *testing.T) {
	var node *indexertest.Hostile
	c, h := newChain(t, 3000)
	history(t, c, h, 100, 2500, 7)
	node = indexertest.NewHostile(c)
	node.Set(func(f *indexertest.Faults) { f.PadMiB = 2 })
	ix := openOn(t, node, filepath.Join(t.TempDir(), "a.sqlite"), indexer.Options{RPC: dial(t, node, 1<<20)})
	defer ix.Close()
	r := start(ix)
	eventually.True(t, "an answer past 1 MiB refused", func() bool { return strings.Contains(ix.Status().Error, "too large") })
	if st := ix.Status(); st.Block != 0 {
		t.Errorf("indexed to %d from padded answers", st.Block)
	}
	node.Set(func(f *indexertest.Faults) { f.PadMiB = 0 })
	synced(t, ix, c)
	r.stop(t)
	sameAsFresh(t, "after answers past the bound", ix, c)
}

// lines is a log that keeps its lines.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, string(p))
	return len(p), nil
}

func (l *lines) longest() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.all {
		n = max(n, len(s))
	}
	return n
}

// S7: a node's error text of a megabyte reaches the log and the status
// (/readyz) scrubbed and cut.
func TestS7NodeErrorTextIsScrubbedAndCut(t *testing.T) {
	log := &lines{}
	o := indexer.Options{Logger: slog.New(slog.NewJSONHandler(log, nil))}
	c, node, ix := freshBehind(t, o, func(f *indexertest.Faults) { f.ErrKiB = 1024 })
	r := start(ix)
	eventually.True(t, "the node's error shown", func() bool { return strings.Contains(ix.Status().Error, "more than 10000 results") })
	if n := len(ix.Status().Error); n > 600 {
		t.Errorf("status error of %d bytes", n)
	}
	node.Set(func(f *indexertest.Faults) { f.ErrKiB = 0 })
	synced(t, ix, c)
	r.stop(t)
	if n := log.longest(); n > 4<<10 {
		t.Errorf("a log line of %d bytes", n)
	}
	sameAsFresh(t, "after huge error texts", ix, c)
}

// S8: a 429 with Retry-After in the middle of the backfill: nothing the
// indexer asks for after it has seen the 429 is sent to the node until the
// Retry-After has run out (counted from the 429's receipt), and the
// eth_getLogs range is kept (a rate limit is not a range too large).
//
// It is measured on the client's side of the wire, on both sides of the
// back-off gate (indexer.NodeTransport): a request asked for before the
// 429 came back may pass the gate and be sent later, on a slow scheduler
// much later, and is no fault; one asked for after is the gate's to hold.
func TestS8RetryAfterIsObeyedAndKeepsTheRange(t *testing.T) {
	c, h := newChain(t, 3000)
	history(t, c, h, 100, 2500, 7)
	node := indexertest.NewHostile(c)
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	w := &gateWatch{}
	below := gateBelow{w: w, rt: http.DefaultTransport.(*http.Transport).Clone()}
	rc, err := rpc.DialOptions(context.Background(), srv.URL, rpc.WithHTTPClient(&http.Client{Transport: gateAbove{w: w, rt: indexer.NodeTransport(below, 0)}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	ix := openOn(t, node, filepath.Join(t.TempDir(), "a.sqlite"), indexer.Options{Range: 500, RPC: rc})
	t.Cleanup(func() { _ = ix.Close() })
	var once sync.Once
	node.OnRequest(func(ms []string) {
		if slices.Contains(ms, "eth_getLogs") {
			once.Do(func() {
				node.Set(func(f *indexertest.Faults) { f.Refuse429, f.RetryAfter, f.RefuseMethod = 1, "3", "eth_getLogs" })
			})
		}
	})
	runUntilSynced(t, ix, c)
	w.check(t, 3*time.Second)
	refused := 0
	for _, s := range node.Seen() {
		if s.Refused {
			refused++
		}
		final := c.Head() - 250
		if s.From > 0 && s.To-s.From+1 < 500 && s.To != final && s.To != c.Head() {
			t.Errorf("eth_getLogs [%d, %d] after a rate limit: the range shrank", s.From, s.To)
		}
	}
	if refused != 1 {
		t.Errorf("%d requests refused, want 1", refused)
	}
	sameAsFresh(t, "after a rate limit", ix, c)
}

// asked is one request of the indexer's client: when the indexer asked
// for it (above the back-off gate), when it was sent (below it; zero if
// the gate held it back), and for a 429 when its answer was received
// (below) and when the indexer had it (above: the gate closed by then).
type asked struct {
	asked, sent    time.Time
	refused        bool
	received, seen time.Time
}

// gateWatch is the record of S8's requests on both sides of the gate.
type gateWatch struct {
	mu      sync.Mutex
	log     []*asked
	unasked int // sent without passing gateAbove (none should)
}

type askedKey struct{}

// gateAbove is the transport the indexer's client calls: it stamps each
// request with its record.
type gateAbove struct {
	w  *gateWatch
	rt http.RoundTripper
}

func (a gateAbove) RoundTrip(r *http.Request) (*http.Response, error) {
	q := &asked{asked: time.Now()}
	a.w.mu.Lock()
	a.w.log = append(a.w.log, q)
	a.w.mu.Unlock()
	resp, err := a.rt.RoundTrip(r.WithContext(context.WithValue(r.Context(), askedKey{}, q)))
	now := time.Now()
	a.w.mu.Lock()
	if q.refused {
		q.seen = now
	}
	a.w.mu.Unlock()
	return resp, err
}

// gateBelow is the transport under the gate: what reaches it is sent.
type gateBelow struct {
	w  *gateWatch
	rt http.RoundTripper
}

func (b gateBelow) RoundTrip(r *http.Request) (*http.Response, error) {
	q, _ := r.Context().Value(askedKey{}).(*asked)
	now := time.Now()
	b.w.mu.Lock()
	if q != nil {
		q.sent = now
	} else {
		b.w.unasked++
	}
	b.w.mu.Unlock()
	resp, err := b.rt.RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests && q != nil {
		now := time.Now()
		b.w.mu.Lock()
		q.refused, q.received = true, now
		b.w.mu.Unlock()
	}
	return resp, err
}

// check holds the record to one 429 with a Retry-After of wait: every
// request asked for after the indexer had the 429 and sent was sent at
// least wait after the 429 was received, and some were (the backfill went
// on). Requests asked for before, in flight, may be sent any time.
func (w *gateWatch) check(t *testing.T, wait time.Duration) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unasked > 0 {
		t.Errorf("%d requests sent that the indexer's client did not ask for", w.unasked)
	}
	var refusal *asked
	for _, q := range w.log {
		if q.refused {
			if refusal != nil {
				t.Fatalf("a second 429 received: the node refuses once")
			}
			refusal = q
		}
	}
	if refusal == nil {
		t.Fatal("no 429 received")
	}
	after, held := 0, 0
	for _, q := range w.log {
		switch {
		case q.asked.Before(refusal.seen):
			continue // asked for before the 429 was seen: in flight
		case q.sent.IsZero():
			held++
		default:
			after++
			if d := q.sent.Sub(refusal.received); d < wait {
				t.Errorf("a request asked for after the 429 was seen was sent %v after it arrived, with Retry-After: %v", d, wait)
			}
		}
	}
	if after == 0 {
		t.Errorf("nothing sent after the 429 was seen")
	}
	t.Logf("after the 429: %d requests sent, %d held back by the gate", after, held)
}

// S9: a node that refuses JSON-RPC batches is indexed with its calls sent
// one at a time (with the batch size 1 or the default); a node answering
// eth_getBlockReceipts null has the receipts read per transaction, in
// batches, after asking it once (or by the ranges fetched at once).
func TestS9NodeCapabilitiesAreProbedOnce(t *testing.T) {
	for _, k := range []struct{ batch, status int }{{1, 0}, {0, 0}, {0, http.StatusBadRequest}} {
		batch := k.batch
		c, node, ix := freshBehind(t, indexer.Options{Batch: batch}, func(f *indexertest.Faults) { f.NoBatch, f.NoBatchStatus = true, k.status })
		runUntilSynced(t, ix, c)
		batches := 0
		for _, s := range node.Seen() {
			if s.Refused {
				batches++
			}
		}
		if batches > 1 {
			t.Errorf("batch %d: %d batches sent to a node refusing them: want the probe alone", batch, batches)
		}
		sameAsFresh(t, fmt.Sprintf("without batches (batch size %d, refused with %d)", batch, k.status), ix, c)
	}
	c, node, ix := freshBehind(t, indexer.Options{Batch: 7}, func(f *indexertest.Faults) { f.ReceiptsNull = true })
	runUntilSynced(t, ix, c)
	blocks, txs := c.Calls("eth_getBlockReceipts"), c.Calls("eth_getTransactionReceipt")
	var sent int64
	for _, s := range node.Seen() {
		if slices.Contains(s.Methods, "eth_getTransactionReceipt") {
			sent++
		}
	}
	if blocks > 5*7 || txs < 100 || sent*4 > txs {
		t.Errorf("eth_getBlockReceipts %d calls; eth_getTransactionReceipt %d calls in %d requests", blocks, txs, sent)
	}
	sameAsFresh(t, "with eth_getBlockReceipts null", ix, c)
}

// S13: a data source given twice with two start blocks (which the
// configuration now refuses) is indexed once from the earlier: the store
// equals a fresh index of the source given once. Before, the later start
// won and the blocks before it were not indexed.
func TestS13SourceGivenTwiceIsIndexedFromTheEarliest(t *testing.T) {
	c, h := newChain(t, 400)
	history(t, c, h, 100, 400, 3)
	twice := []mapping.Watched{{Address: handlerAddr, Name: "HandlerV2", Start: 100}, {Address: handlerAddr, Name: "HandlerV2", Start: 200}}
	ix := open(t, c, filepath.Join(t.TempDir(), "a.sqlite"), indexer.Options{Sources: twice})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	sameAsFresh(t, "with the source given twice", ix, c)
}

// S15: a store damaged while the gateway was down (64 KiB of garbage
// written in its middle) is refused at start naming the file, where it
// opened and then failed every query; a store that fails a read while
// serving says so in Status (StoreError: /readyz not ready).
func TestS15DamagedStoreIsRefusedAndFailedReadsAreNotReady(t *testing.T) {
	c, h := newChain(t, 3000)
	history(t, c, h, 100, 2500, 2) // a block in two: each prices its events by eth_call
	path := filepath.Join(t.TempDir(), "a.sqlite")
	ix := open(t, c, path, indexer.Options{})
	runUntilSynced(t, ix, c)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	garbage := make([]byte, 64<<10)
	rng := rand.New(rand.NewPCG(5, 11)) // a fixed seed: the same damage each run
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	if _, err := f.WriteAt(garbage, fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = indexer.Open(context.Background(), indexer.Options{ChainID: chainID, RPC: dial(t, c, 0), Path: path, Sources: sources})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged store opened: %v", err)
	}

	_, _, _, served := syncedBehind(t)
	if st := served.Status(); st.StoreError != "" {
		t.Fatalf("a store error before any failed: %+v", st)
	}
	_ = served.Store().Close() // every read fails from now on
	if r := served.Query(graphnode.Request{Query: `{ strikes { id } }`}); len(r.Errors) == 0 {
		t.Fatal("a closed store answered")
	}
	if st := served.Status(); !strings.Contains(st.StoreError, "Store error") {
		t.Errorf("a failed read not in the status: %+v", st)
	}
}

// Readiness: an index whose steps keep failing says it is stalled once
// StallAfter has passed, and stops saying so once a step succeeds.
func TestStalledIndexSaysSo(t *testing.T) {
	c, node, ix := freshBehind(t, indexer.Options{StallAfter: 50 * time.Millisecond}, func(f *indexertest.Faults) { f.ErrKiB = 1 })
	r := start(ix)
	eventually.True(t, "the index stalled", func() bool { return ix.Status().Stalled })
	node.Set(func(f *indexertest.Faults) { f.ErrKiB = 0 })
	synced(t, ix, c)
	eventually.True(t, "no longer stalled", func() bool { return !ix.Status().Stalled })
	r.stop(t)
}

// A start says where it indexes from and to, and says once when it has
// caught up: a backfill shorter than the progress period logged nothing,
// and reaching the head was never said.
func TestStartAndCaughtUpAreLogged(t *testing.T) {
	log := &lines{}
	o := indexer.Options{Logger: slog.New(slog.NewJSONHandler(log, nil))}
	c, _, ix := freshBehind(t, o, func(*indexertest.Faults) {})
	r := start(ix)
	synced(t, ix, c)
	eventually.True(t, "the caught-up line", func() bool { return log.count(`"msg":"caught up`) > 0 })
	r.stop(t)
	if n := log.count(`"msg":"indexing to the chain's head"`); n != 1 {
		t.Errorf("%d start lines, want 1", n)
	}
	if n := log.count(`"msg":"caught up`); n != 1 {
		t.Errorf("%d caught-up lines, want 1 (said once, not at every poll)", n)
	}
}

func (l *lines) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.all {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}
