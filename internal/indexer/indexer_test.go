package indexer_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

const chainID = 42161

type typesLog = types.Log

var (
	handlerAddr = common.HexToAddress("0x00000000000000000000000000000000000a0001")
	poolAddr    = common.HexToAddress("0x00000000000000000000000000000000000b0001")
	lp          = common.HexToAddress("0x1111111111111111111111111111111111111111")
	price       = new(big.Int).Lsh(big.NewInt(1), 96)
)

// history puts a handler's deposits, uses, donations and its pool's swaps
// into blocks from..to of c, every step blocks.
func history(t testing.TB, c *indexertest.Chain, h *indexertest.Handler, from, to, step uint64) {
	t.Helper()
	i := int64(0)
	for n := from; n <= to; n += step {
		tl := -200_000 + 10*(i%7)
		c.Add(n, &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{h.Mint(lp, tl, 1_000_000+i), h.Use(tl, 10+i), h.Donate(tl, 3)}})
		if i%3 == 0 {
			c.Add(n, &indexertest.Tx{From: lp, To: poolAddr, Logs: []typesLog{h.Swap(lp, new(big.Int).Add(price, big.NewInt(i)), i)}})
		}
		i++
	}
}

func newChain(t testing.TB, head uint64) (*indexertest.Chain, *indexertest.Handler) {
	t.Helper()
	h, err := indexertest.NewHandler(handlerAddr, poolAddr)
	if err != nil {
		t.Fatal(err)
	}
	c := indexertest.New(chainID, head)
	c.Call = h.Slot0(price, 0)
	return c, h
}

// sources index the synthetic handler from its template.
var sources = []mapping.Watched{{Address: handlerAddr, Name: "HandlerV2", Start: 100}}

func open(t testing.TB, c *indexertest.Chain, path string, o indexer.Options) *indexer.Indexer {
	t.Helper()
	return openOn(t, c, path, o)
}

// openOn opens an indexer of the synthetic handler over the node node.
// It dials the node as ForChain does (DialNode: answers bounded,
// Retry-After obeyed), unless o.RPC is set.
func openOn(t testing.TB, node http.Handler, path string, o indexer.Options) *indexer.Indexer {
	t.Helper()
	if o.RPC == nil {
		o.RPC = dial(t, node, 0)
	}
	o.ChainID, o.Path = chainID, path
	if o.Sources == nil {
		o.Sources = sources
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if o.Poll == 0 {
		o.Poll = 5 * time.Millisecond
	}
	ix, err := indexer.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// dial serves node and dials it with answers bounded to maxAnswer bytes
// (0: indexer.MaxAnswer).
func dial(t testing.TB, node http.Handler, maxAnswer int64) *indexer.Client {
	t.Helper()
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	rc, err := indexer.DialNode(context.Background(), srv.URL, nil, maxAnswer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	return rc
}

// testLog writes the indexer's log into the test's.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// runUntilSynced runs ix until it has indexed the chain's head, then stops
// it.
func runUntilSynced(t testing.TB, ix *indexer.Indexer, c *indexertest.Chain) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ix.Run(ctx) }()
	var failed string
	ended := false
	eventually.True(t, "the index synced to the node's head", func() bool {
		select {
		case err := <-done:
			failed, ended = fmt.Sprintf("Run returned %v before the head", err), true
			return true // stop waiting: reported below
		default:
		}
		if st := ix.Status(); st.State == indexer.StateFailed {
			failed = "indexing failed: " + st.Error
		} else {
			return st.State == indexer.StateSynced && st.Block >= c.Head()
		}
		return true
	})
	cancel()
	var err error
	if !ended {
		err = <-done
	}
	if failed != "" {
		t.Fatal(failed)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// reference indexes the chain's logs straight into the emulator's
// in-memory store, block by block, as the pipeline tests do.
func reference(t testing.TB, c *indexertest.Chain) *graphnode.Store {
	t.Helper()
	st, err := c.Reference(sources)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var queries = []string{
	`{ strikes(first: 1000, orderBy: id) { id tokenId totalLiquidity usedLiquidity tickLower tickUpper pool } }`,
	`{ pools { id sqrtPriceX96 tick } dailyDonations(first: 1000, orderBy: id) { id donation sqrtPriceX96 start } }`,
	`{ strikes(first: 5, orderBy: totalLiquidity, orderDirection: desc, block: {number: 300}) { id totalLiquidity } }`,
}

func answers(t testing.TB, q graphnode.Querier) []string {
	t.Helper()
	var out []string
	for _, query := range queries {
		r := q.QueryContext(context.Background(), graphnode.Request{Query: query})
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %v", query, r.Errors)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func sameAnswers(t testing.TB, what string, got, want []string) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s, query %d:\n indexer   %.400s\n reference %.400s", what, i, got[i], want[i])
		}
	}
}

// The indexer, given only the node, writes what the mappings write when
// fed every block directly: with a node that refuses large answers and
// wide ranges, it splits its ranges and reads everything once; a restart
// resumes from the last block committed.
func TestIndexesAsTheMappingsAndResumes(t *testing.T) {
	c, h := newChain(t, 3000)
	history(t, c, h, 100, 2000, 7)
	c.MaxLogs, c.MaxRange = 40, 1500
	path := filepath.Join(t.TempDir(), "42161.sqlite")
	ix := open(t, c, path, indexer.Options{Range: 1000})
	runUntilSynced(t, ix, c)
	want := answers(t, reference(t, c))
	sameAnswers(t, "after backfill", answers(t, ix), want)
	if got, want := ix.Counts().Events, int64(c.EventsOf(handlerAddr)); got != want {
		t.Errorf("%d events indexed, the handler logged %d", got, want)
	}
	// Every block with the handler's logs is read once (the pool's swaps
	// are not indexed: no data source follows a pool).
	if got, want := c.Calls(indexertest.FullBlocks), int64((2000-100)/7+1); got != want {
		t.Errorf("%d blocks read with their transactions, %d hold logs", got, want)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// More blocks, then a restart: it reads only what is new.
	history(t, c, h, 3001, 3100, 9)
	c.SetHead(3200)
	before := c.Calls("eth_getLogs")
	again := open(t, c, path, indexer.Options{Range: 1000})
	defer again.Close()
	runUntilSynced(t, again, c)
	if st := again.Status(); st.Block != 3200 {
		t.Errorf("resumed to block %d", st.Block)
	}
	if n := c.Calls("eth_getLogs") - before; n > 3 {
		t.Errorf("the restart asked eth_getLogs %d times for 200 new blocks: it read from the start again", n)
	}
	sameAnswers(t, "after the restart", answers(t, again), answers(t, reference(t, c)))
}

// A reorg of several blocks reverts what the orphaned blocks wrote and
// indexes the new branch: the store then equals a fresh index of the
// chain as it now is.
func TestReorgEqualsFreshIndex(t *testing.T) {
	c, h := newChain(t, 400)
	history(t, c, h, 100, 400, 3)
	dir := t.TempDir()
	ix := open(t, c, filepath.Join(dir, "a.sqlite"), indexer.Options{})
	defer ix.Close()
	runUntilSynced(t, ix, c)

	c.Reorg(395)
	history(t, c, h, 396, 410, 2)
	runUntilSynced(t, ix, c)
	if ix.Counts().Reorgs == 0 {
		t.Fatal("no reorg seen")
	}
	sameAsFresh(t, "after the reorg", ix, c)
}

// A mapping that fails stops the chain's indexing at that block, naming
// the block, data source, handler and message; what was indexed before
// stays served.
func TestMappingErrorStopsWithWhere(t *testing.T) {
	c, h := newChain(t, 300)
	history(t, c, h, 100, 200, 10)
	// An event the handler's mapping refuses: LogUsePosition of a range
	// never deposited makes it log an error and go on; a LogDonation
	// with data that does not decode fails the trigger.
	bad := h.Donate(-200_000, 1)
	bad.Data = bad.Data[:32]
	c.Add(250, &indexertest.Tx{From: lp, To: handlerAddr, Logs: []typesLog{bad}})
	ix := open(t, c, filepath.Join(t.TempDir(), "s.sqlite"), indexer.Options{})
	defer ix.Close()
	err := ix.Run(context.Background())
	var he *mapping.HandlerError
	if !errors.As(err, &he) {
		t.Fatalf("Run returned %v, want a mapping error", err)
	}
	st := ix.Status()
	if st.State != indexer.StateFailed || !strings.Contains(st.Error, "block 250") || !strings.Contains(st.Error, "handleDonation") {
		t.Errorf("status %+v", st)
	}
	if st.Block >= 250 {
		t.Errorf("indexed up to %d, past the failing block", st.Block)
	}
	if r := ix.Query(graphnode.Request{Query: `{ strikes { id } }`}); len(r.Errors) > 0 {
		t.Errorf("the store stopped answering: %v", r.Errors)
	}
}

// A node without the state of old blocks (a pruned full node) cannot
// answer the mappings' calls at the trigger's block: indexing stops there
// and says an archive node is needed, rather than retrying forever or
// indexing wrong values.
func TestPrunedNodeNeedsAnArchive(t *testing.T) {
	c, h := newChain(t, 300)
	history(t, c, h, 100, 200, 10)
	c.StateFrom = 250
	ix := open(t, c, filepath.Join(t.TempDir(), "p.sqlite"), indexer.Options{})
	defer ix.Close()
	err := ix.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "archive node") {
		t.Fatalf("Run returned %v, want a pruned node's error", err)
	}
	st := ix.Status()
	if st.State != indexer.StateFailed || !strings.Contains(st.Error, "no state at block 100") || !strings.Contains(st.Error, "archive node") {
		t.Errorf("status %+v", st)
	}
	if c.Calls("eth_call") > 4 { // the first, then 3 over about 4 s (S5)
		t.Errorf("%d eth_calls: a pruned node's refusal was retried", c.Calls("eth_call"))
	}
}

// A node that answers only part of a batch of block receipts (geth past
// 25 MB of answers in one batch: -32003 "response too large" for the
// rest) is asked the rest in smaller batches: the index syncs and answers
// as the reference does, rather than retrying the same range for ever.
func TestReceiptBatchesTooLargeAreSplit(t *testing.T) {
	c, h := newChain(t, 1000)
	history(t, c, h, 100, 900, 4)
	c.MaxBatchReceipts = 3
	ix := open(t, c, filepath.Join(t.TempDir(), "r.sqlite"), indexer.Options{Batch: 7})
	defer ix.Close()
	runUntilSynced(t, ix, c) // over a node answering 3 block receipts a batch
	sameAnswers(t, "after backfill", answers(t, ix), answers(t, reference(t, c)))
}

// Receipts are read in batches over the blocks of a range, and no batch
// carries more calls than Options.Batch; on a node without
// eth_getBlockReceipts (asked once, then not again) each transaction's
// receipt is read instead, and the index is the same.
func TestReceiptsInBatchesAndWithoutBlockReceipts(t *testing.T) {
	for _, noBlockReceipts := range []bool{false, true} {
		t.Run(fmt.Sprintf("noBlockReceipts=%v", noBlockReceipts), func(t *testing.T) {
			c, h := newChain(t, 1000)
			history(t, c, h, 100, 900, 4)
			c.NoBlockReceipts = noBlockReceipts
			ix := open(t, c, filepath.Join(t.TempDir(), "r.sqlite"), indexer.Options{Batch: 7})
			defer ix.Close()
			runUntilSynced(t, ix, c)
			sameAnswers(t, "after backfill", answers(t, ix), answers(t, reference(t, c)))
			if got := c.LargestBatch(); got > 7 {
				t.Errorf("a request carried %d calls, over the batch size 7", got)
			}
			blocks, txs := c.Calls("eth_getBlockReceipts"), c.Calls("eth_getTransactionReceipt")
			var sent, refused int64
			for methods, n := range c.Requests() {
				if strings.Contains(methods, "Receipt") {
					sent += n
				}
				if strings.Contains(methods, "eth_getBlockReceipts") {
					refused += n
				}
			}
			if noBlockReceipts {
				// once refused, not asked again (but by the ranges
				// fetched at the same time: four ahead and one applied)
				if refused > 5 || txs < 100 {
					t.Errorf("eth_getBlockReceipts asked in %d requests, eth_getTransactionReceipt %d times: want at most 5 and one a deposit", refused, txs)
				}
			} else if blocks < 100 || txs != 0 {
				t.Errorf("eth_getBlockReceipts asked %d times, eth_getTransactionReceipt %d: want one a block with a deposit and none", blocks, txs)
			}
			if n := blocks + txs; sent*4 > n {
				t.Errorf("%d receipt calls in %d requests: not batched", n, sent)
			}
			// The indexer's count of HTTP requests (clamm_index_rpc_http_requests_total)
			// against the node's own; one more on the indexer's side is a
			// request counted as Run was cancelled, before it was sent.
			var answered int64
			for _, n := range c.Requests() {
				answered += n
			}
			if got := ix.Counts().HTTPRequests; got < answered || got > answered+1 {
				t.Errorf("the indexer counts %d HTTP requests, the node answered %d", got, answered)
			}
		})
	}
}

// A far range's blocks and the receipts its handlers read (a deposit's
// LogMintedPosition) are asked in one batch once the node has answered
// eth_getBlockReceipts whole: a request a range for both, not two.
func TestFarRangeAsksBlocksAndReceiptsTogether(t *testing.T) {
	c, h := newChain(t, 30_000)
	history(t, c, h, 100, 20_000, 50)
	c.MaxRange = 2000
	ix := open(t, c, filepath.Join(t.TempDir(), "r.sqlite"), indexer.Options{Range: 2000, MaxRange: 2000, Ahead: 1})
	runUntilSynced(t, ix, c)
	sameAnswers(t, "after backfill", answers(t, ix), answers(t, reference(t, c)))
	req := c.Requests()
	together, alone := req["eth_getBlockByNumber+eth_getBlockReceipts"], req["eth_getBlockReceipts"]
	if together < 5 || alone > 2 {
		t.Errorf("receipts asked with their blocks in %d requests, alone in %d (the probes): %v", together, alone, req)
	}
}
