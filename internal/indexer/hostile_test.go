package indexer_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

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
