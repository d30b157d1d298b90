package systemtest

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

const aliceHistory = gateway.PathExerciseHistory + "?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=" + wethUSDC + "&first=5&skip=0"

// pinnedApp is the gateway over the demo scenario's fakes, with no memo of
// heads or block hashes (nothing moves a clock here).
func pinnedApp(t *testing.T) (*app.App, *scenario.Fakes) {
	t.Helper()
	f := newFakesOnly(t)
	a, err := app.New(app.Options{Config: config.Default(), Transports: onFakes(f)})
	if err != nil {
		t.Fatal(err)
	}
	a.Pins.SetHeadAges(block.HeadAges{})
	return a, f
}

// onlyAt makes the fake node answer eth_call at block n only: any read of
// an answer made elsewhere (the head included) fails it.
func onlyAt(f *scenario.Fakes, n uint64) {
	f.Node.Lock()
	f.Node.OnlyAt, f.Node.CallBlocks = n, nil
	f.Node.Unlock()
}

// checkNamed fails unless the answer names block n (number, the fake
// node's hash of it, a time) in its headers and, for an object, in asOf.
func checkNamed(t *testing.T, f *scenario.Fakes, path string, rec *http.Response, body []byte, n uint64) {
	t.Helper()
	h := rec.Header
	wantHash := strings.ToLower(f.Node.HashOf(n).Hex())
	if h.Get("X-Block-Number") != strconv.FormatUint(n, 10) || h.Get("X-Block-Hash") != wantHash || h.Get("X-Block-Timestamp") == "" {
		t.Errorf("%s: X-Block-Number %q X-Block-Hash %q X-Block-Timestamp %q, want %d %s", path,
			h.Get("X-Block-Number"), h.Get("X-Block-Hash"), h.Get("X-Block-Timestamp"), n, wantHash)
	}
	if sb := h.Get("X-Subgraph-Block"); sb != "" && sb != strconv.FormatUint(n, 10) {
		t.Errorf("%s: X-Subgraph-Block %s, X-Block-Number %d", path, sb, n)
	}
	if len(body) > 0 && body[0] == '{' {
		var env struct {
			AsOf struct {
				Number    uint64 `json:"number"`
				Hash      string `json:"hash"`
				Timestamp int64  `json:"timestamp"`
			} `json:"asOf"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.AsOf.Number != n || env.AsOf.Hash != wantHash || strconv.FormatInt(env.AsOf.Timestamp, 10) != h.Get("X-Block-Timestamp") {
			t.Errorf("%s: asOf %+v (%v), want block %d %s", path, env.AsOf, err, n, wantHash)
		}
	}
}

// Every route's answer is read at the block it names: the fake node
// answers eth_call at that block only, and the subgraph's pinned pages
// ask it. The node is five blocks past the subgraph: answers that read the
// subgraph are at its indexed block (the node refuses the head), prepared
// exercises, delegate prepares, the mark price and candles, which read the
// chain only, at the node's head.
func TestEveryAnswerIsReadAtTheBlockItNames(t *testing.T) {
	a, f := pinnedApp(t)
	indexed := f.Node.BlockNumber
	f.Node.Lock()
	f.Node.BlockNumber += 5
	f.Node.BlockTimestamp += 5
	f.Node.Unlock()
	for _, r := range demo.Requests {
		if r.Status() != http.StatusOK || !strings.HasPrefix(r.Path, "/clamm/") || strings.Contains(r.Path, "block=") {
			continue
		}
		at := indexed
		chainOnly := strings.HasPrefix(r.Path, gateway.PathExercisePrepare) || strings.HasPrefix(r.Path, gateway.PathDelegatePrepare) || strings.HasPrefix(r.Path, gateway.PathMarkPrice)
		candles := strings.HasPrefix(r.Path, gateway.PathCandles)
		if chainOnly || candles {
			at = indexed + 5 // the routes that read the chain only: at its head
		}
		onlyAt(f, at)
		simulatesAtHead(f, r.Path)
		rec := get(t, a.Server, r.Path)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", r.Name, rec.Code, rec.Body)
			continue
		}
		checkNamed(t, f, r.Name, rec.Result(), rec.Body.Bytes(), at)
		f.Node.Lock()
		blocks := maps.Clone(f.Node.CallBlocks)
		f.Node.Unlock()
		if chainOnly {
			// Its first read (a prepared exercise's position, a prepared
			// delegation's view, the mark price's slot0) runs at "latest"
			// in one batch with the head's header, and counts only when it
			// ran at the header's block (the node answers none other).
			if blocks["latest"] != 1 {
				t.Errorf("%s: %d eth_calls at latest, want the first read's", r.Name, blocks["latest"])
			}
			delete(blocks, "latest")
		}
		if candles {
			// its one eth_call is the pool's price before its window, at
			// the block before it (refused here as pruned: the series then
			// opens at the window's first swap); its logs end at the head
			blocks = nil
		}
		headReads(blocks, r.Path, indexed+5)
		if len(blocks) > 1 || (len(blocks) == 1 && blocks[hexutil.EncodeUint64(at)] == 0) {
			t.Errorf("%s: eth_calls at %v, want all at %d", r.Name, blocks, at)
		}
	}
	// The strikes chain's subgraph pages ask the block by number.
	if v, _ := f.Subgraph.LastVariables("Strikes")["block"].(map[string]any); v == nil || v["number"] != float64(indexed) {
		t.Errorf("strikes pages asked block %v, want %d", v, indexed)
	}
}

// With block, every route answers at that block: the node answers there
// only, and the answer names it.
func TestEveryRouteAnswersAtTheBlockAsked(t *testing.T) {
	a, f := pinnedApp(t)
	at := f.Node.BlockNumber - 3
	onlyAt(f, at)
	for _, r := range demo.Requests {
		if r.Status() != http.StatusOK || !strings.HasPrefix(r.Path, "/clamm/") || strings.Contains(r.Path, "block=") {
			continue
		}
		path := r.Path + "&block=" + strconv.FormatUint(at, 10)
		simulatesAtHead(f, path)
		rec := get(t, a.Server, path)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d %s", r.Name, rec.Code, rec.Body)
			continue
		}
		checkNamed(t, f, r.Name, rec.Result(), rec.Body.Bytes(), at)
	}
	for _, op := range []string{"Strikes", "ExerciseHistory", "PurchaseHistory", "PurchasePositions", "OptionMarkets", "StatsDays"} {
		if v, _ := f.Subgraph.LastVariables(op)["block"].(map[string]any); v == nil || v["number"] != float64(at) {
			t.Errorf("%s asked block %v, want %d", op, f.Subgraph.LastVariables(op)["block"], at)
		}
	}
}

// An answer asked at a block is cached under that block's hash: after a
// reorg replaced the block, the same request is built again and names the
// new hash; a block past the node's head is BLOCK_NOT_FOUND, one past the
// subgraph's BLOCK_NOT_INDEXED, one the node has pruned BLOCK_PRUNED.
func TestBlockAskedIsCheckedAgainstTheChain(t *testing.T) {
	a, f := pinnedApp(t)
	head := f.Node.BlockNumber
	path := strikes + "&block=" + strconv.FormatUint(head-1, 10)
	first := get(t, a.Server, path)
	again := get(t, a.Server, path)
	if first.Code != http.StatusOK || again.Header().Get("X-Cache") != "HIT" {
		t.Fatalf("%d %s; again %s", first.Code, first.Body, again.Header().Get("X-Cache"))
	}
	f.Node.Lock()
	f.Node.Fork = 1
	f.Node.Unlock()
	after := get(t, a.Server, path)
	if after.Code != http.StatusOK || after.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("after the reorg: %d %s %s", after.Code, after.Header().Get("X-Cache"), after.Body)
	}
	checkNamed(t, f, "after the reorg", after.Result(), after.Body.Bytes(), head-1)

	for _, c := range []struct {
		name, path, code string
		setup            func()
	}{
		{"past the node's head", strikes + "&block=" + strconv.FormatUint(head+1, 10), "BLOCK_NOT_FOUND", func() {}},
		{"past the subgraph's head", aliceHistory + "&block=" + strconv.FormatUint(head+1, 10), "BLOCK_NOT_INDEXED", func() {
			f.Node.Lock()
			f.Node.BlockNumber = head + 2
			f.Node.Unlock()
		}},
		{"pruned by the node", strikes + "&block=" + strconv.FormatUint(head-7, 10), "BLOCK_PRUNED", func() { onlyAt(f, head) }},
	} {
		c.setup()
		rec := get(t, a.Server, c.path)
		if e := decodeError(t, rec); rec.Code != http.StatusUnprocessableEntity || e.Code != c.code {
			t.Errorf("%s: %d %s, want 422 %s", c.name, rec.Code, rec.Body, c.code)
		}
	}
	if rec := get(t, a.Server, strikes+"&block=0"); rec.Code != http.StatusBadRequest || decodeError(t, rec).Param != "block" {
		t.Errorf("block=0: %d %s", rec.Code, rec.Body)
	}
}

// The LP routes are table entries like any other: pinned without code of
// their own. Every eth_call but the simulation's was at the subgraph's
// indexed block (the node, five blocks ahead, answers nowhere else but at
// its head for the simulation): the deposit is read there and simulated
// at the head (approval and multicall together, on alice's stated
// balances); the withdrawal finds no position; both take block like every
// route.
func TestLPRoutesArePinned(t *testing.T) {
	a, f := pinnedApp(t)
	indexed := f.Node.BlockNumber
	f.Node.Lock()
	f.Node.BlockNumber += 5
	f.Node.Unlock()
	for _, c := range []struct {
		path   string
		status int
	}{{depositQry, http.StatusOK}, {withdrawQry, http.StatusNotFound}} {
		onlyAt(f, indexed)
		simulatesAtHead(f, c.path)
		rec := get(t, a.Server, c.path)
		f.Node.Lock()
		blocks := maps.Clone(f.Node.CallBlocks)
		f.Node.Unlock()
		headReads(blocks, c.path, indexed+5)
		if rec.Code != c.status || len(blocks) != 1 || blocks[hexutil.EncodeUint64(indexed)] == 0 {
			t.Errorf("%s: %d %s; eth_calls at %v, want all at %d", c.path, rec.Code, rec.Body, blocks, indexed)
		}
		if rec.Code == http.StatusOK {
			checkNamed(t, f, c.path, rec.Result(), rec.Body.Bytes(), indexed)
		}
		past := c.path + "&block=" + strconv.FormatUint(indexed+6, 10)
		if rec := get(t, a.Server, past); decodeError(t, rec).Code != "BLOCK_NOT_FOUND" {
			t.Errorf("%s: %d %s", past, rec.Code, rec.Body)
		}
	}
}

// headReads drops from blocks the eth_calls an LP or purchase prepare
// makes at the chain's head (head: its number) beside its answer's reads:
// the block numbers its code sees there, read at "latest" (and again at
// the head's number when a block landed in between, or the node refused):
// where its transactions are simulated, named by simulatedAt.
func headReads(blocks map[string]int, path string, head uint64) {
	if probesAtHead(path) {
		delete(blocks, "latest")
		delete(blocks, hexutil.EncodeUint64(head))
	}
}

// simulatesAtHead lets the node answer at its head too for an LP or
// purchase prepare, whose transactions are simulated there (simulatedAt)
// while every figure is read at the answer's block; for any other route
// only that block.
func simulatesAtHead(f *scenario.Fakes, path string) {
	f.Node.Lock()
	f.Node.HeadToo = probesAtHead(path)
	f.Node.Unlock()
}

// probesAtHead says whether a route simulates its transactions with the
// ActionProbe at the chain's head (an approval and what spends it, a
// liquidity provider's steps).
func probesAtHead(path string) bool {
	for _, p := range []string{gateway.PathDepositPrepare, gateway.PathWithdrawPrepare, gateway.PathPurchasePrepare} {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}
