// Package livetest runs the gateway live on the simulated EVM (the test
// protocol of internal/evmtest/protocoltest, served over JSON-RPC) with
// nothing but the node's URL, indexed by the embedded indexer, against the
// same gateway reading the same history through the Graph Node emulator.
// It builds the EVM and the indexer: heavy, so it has a package of its own.
package livetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/evmtest/pipeline"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

const chainID = pt.ChainID

func e18(n int64) *big.Int { return new(big.Int).Mul(big.NewInt(n), big.NewInt(1e18)) }

// counting serves the simulated node over HTTP and counts calls by method.
type counting struct {
	next  http.Handler
	calls map[string]*atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var one struct{ Method string }
	var many []struct{ Method string }
	if json.Unmarshal(body, &many) != nil {
		_ = json.Unmarshal(body, &one)
		many = append(many, one)
	}
	for _, q := range many {
		if n := c.calls[q.Method]; n != nil {
			n.Add(1)
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.next.ServeHTTP(w, r)
}

func (c *counting) count(method string) int64 { return c.calls[method].Load() }

// world is the protocol, its node, and what the gateways are configured
// with.
type world struct {
	t        *testing.T
	p        *pt.Protocol
	node     *counting
	nodeURL  string
	mc       common.Address
	users    []*pt.Account
	options  []*big.Int
	exercise []*big.Int
	// the ranges of the history's deposits
	rCall, rPut pt.Range
}

func newWorld(t *testing.T) *world {
	p := pt.Deploy(t, pt.Config{})
	w := &world{t: t, p: p, mc: p.DeployMulticall3(), users: p.Users[:4]}
	w.node = &counting{next: pipeline.RPCHandler(p.Chain.RPC()), calls: map[string]*atomic.Int64{}}
	for _, m := range []string{"eth_getLogs", "eth_getBlockByNumber", "eth_getBlockReceipts", "eth_call"} {
		w.node.calls[m] = new(atomic.Int64)
	}
	srv := httptest.NewServer(w.node)
	t.Cleanup(srv.Close)
	w.nodeURL = srv.URL
	return w
}

// history deposits on both sides, buys calls and puts (one through a
// split), swaps the price into the call, exercises part of it, transfers
// an option and lets an LP withdraw.
func (w *world) history() {
	t, p := w.t, w.p
	lp, buyer, trader, other := w.users[0], w.users[1], w.users[2], w.users[3]
	p.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{3600: 50, 86400: 45}, FeePercentage: 340000})
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	rCall := pt.Range{TickLower: base + 10*p.TickSpacing, TickUpper: base + 11*p.TickSpacing}
	rPut := pt.Range{TickLower: base - 11*p.TickSpacing, TickUpper: base - 10*p.TickSpacing}
	w.rCall, w.rPut = rCall, rPut
	_, lCall, err := p.Deposit(lp, rCall, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	_, lPut, err := p.Deposit(lp, rPut, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.Deposit(other, rCall, e18(1)); err != nil {
		t.Fatal(err)
	}
	call, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: rCall.TickLower, TickUpper: rCall.TickUpper, TTL: 3600,
		Legs: []pt.Leg{{Range: rCall, Liquidity: lCall}}})
	if err != nil {
		t.Fatal(err)
	}
	put, _, err := p.Buy(trader, pt.Option{IsCall: false, TickLower: rPut.TickLower, TickUpper: rPut.TickUpper, TTL: 3600,
		Legs: []pt.Leg{{Range: rPut, Liquidity: new(big.Int).Div(lPut, big.NewInt(2))}}})
	if err != nil {
		t.Fatal(err)
	}
	// through a router, which the market mints to and which hands the
	// option on: who holds it is read from the purchase's receipt
	routed, _, err := p.BuyVia(p.DeployRouter(), trader, trader.Addr, pt.Option{IsCall: false, TickLower: rPut.TickLower, TickUpper: rPut.TickUpper,
		TTL: 3600, MaxCost: big.NewInt(1e12), Legs: []pt.Leg{{Range: rPut, Liquidity: new(big.Int).Div(lPut, big.NewInt(4))}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(trader, p.Fee, tick+300); err != nil {
		t.Fatal(err)
	}
	split, _, err := p.Split(buyer, call, other.Addr, []*big.Int{new(big.Int).Div(lCall, big.NewInt(2))})
	if err != nil {
		t.Fatal(err)
	}
	swap := pt.UniV3SwapData(p.Fee, big.NewInt(0))
	if _, err := p.Exercise(buyer, call, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: new(big.Int).Div(lCall, big.NewInt(6))}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Transfer(trader, buyer.Addr, put); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Withdraw(other, rCall, big.NewInt(1000)); err != nil {
		t.Fatal(err)
	}
	w.options = []*big.Int{call, put, split, routed}
	w.exercise = []*big.Int{call}
}

// config is the gateway's configuration for the simulated chain: the
// Arbitrum defaults under the simulated chain's id, the test protocol's
// handler, hooks, swapper and Multicall3, the node's URL; the subgraph URL
// is sub ("" for the embedded index, which then indexes the protocol's
// position manager from block 0).
func (w *world) config(sub, dir string) *config.Config {
	p := w.p
	cfg := config.Default()
	ch := *cfg.Chains[42161]
	ch.ID, ch.Name, ch.SubgraphURL, ch.RPCURL, ch.Multicall3 = chainID, "simulated", sub, w.nodeURL, w.mc
	ch.Handlers = map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}}
	ch.Hooks = map[common.Address]config.HookRules{
		p.Hook24h:   {Name: "BoundedTTLHook_0Day", MaxTTL: config.Duration(24 * time.Hour)},
		p.Hook1Week: {Name: "BoundedTTLHook_1Week", MaxTTL: config.Duration(7 * 24 * time.Hour)},
	}
	ch.Swappers = map[string]*config.Swapper{"uni-v3": {Kind: "uniswap-v3", Address: p.Swapper, Quoter: p.Quoter}}
	ch.AutoExerciser, ch.Settlers = p.AutoExercise, []common.Address{p.Owner.Addr}
	ch.MarketPools, ch.PoolDex = nil, nil // Arbitrum's pools are not on the simulated chain
	if sub == "" {
		ch.IndexSources = []string{"PositionManager:" + p.PositionManager.Hex() + "@0"}
	}
	cfg.Chains = map[uint64]*config.Chain{chainID: &ch}
	cfg.IndexDir = dir
	if err := cfg.Validate(); err != nil {
		w.t.Fatal(err)
	}
	// a test's quick poll, below the least a configuration may set
	cfg.IndexPoll = config.Duration(5 * time.Millisecond)
	return cfg
}

// testLog writes the indexer's log into the test's.
type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// indexed is the gateway given only the node: it indexes the chain
// itself into dir, and runs until the test ends or stop is called.
type indexed struct {
	app  *app.App
	stop func()
}

func (w *world) indexed(dir string) *indexed {
	g := w.opened(dir)
	g.run()
	return g.indexed
}

// opened is the gateway given only the node, its index opened but not
// yet running (run starts it).
func (w *world) opened(dir string) *opened { return w.openedWith(w.config("", dir)) }

// openedWith is opened with a configuration of the caller's.
func (w *world) openedWith(cfg *config.Config) *opened {
	t := w.t
	logger := slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, err := app.New(app.Options{Config: cfg, Logger: logger, Metrics: metrics.New(), Index: func(ctx context.Context, ch *config.Chain) (app.Index, error) {
		return indexer.ForChain(ctx, ch, indexer.ChainOptions{Dir: cfg.IndexDir, Range: cfg.IndexRange, MaxRange: cfg.IndexMaxRange, Batch: cfg.IndexBatch,
			Poll: cfg.IndexPoll.D(), Logger: logger})
	}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Modes[chainID] != app.ModeIndexed {
		t.Fatalf("chain served as %q", a.Modes[chainID])
	}
	g := &opened{indexed: &indexed{app: a}}
	cancel, wait := func() {}, func() {}
	g.run = func() {
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		wait = a.RunIndexes(ctx)
	}
	g.stop = func() {
		cancel()
		wait()
		if err := a.Close(); err != nil {
			t.Error(err)
		}
		g.stop = func() {}
	}
	t.Cleanup(func() { g.stop() })
	return g
}

type opened struct {
	*indexed
	run func()
}

// synced waits until the index has reached the chain's head.
func (g *indexed) synced(t *testing.T, head uint64) graphnode.Indexing {
	t.Helper()
	idx := g.app.Indexes[chainID]
	var st graphnode.Indexing
	eventually.True(t, fmt.Sprintf("the index synced at block %d", head), func() bool {
		st = idx.Status()
		if st.State == graphnode.IndexingFailed {
			t.Fatalf("indexing failed: %s", st.Error)
		}
		return st.State == graphnode.IndexingSynced && st.Block >= head
	})
	return st
}

// emulated is the gateway reading the same chain through the Graph Node
// emulator over what the compiled mappings write when fed every block.
func (w *world) emulated() *app.App {
	ix := pipeline.New(w.t, w.p)
	ix.Sync()
	sub := httptest.NewServer(ix.Serve())
	w.t.Cleanup(sub.Close)
	a, err := app.New(app.Options{Config: w.config(sub.URL, w.t.TempDir())})
	if err != nil {
		w.t.Fatal(err)
	}
	if a.Modes[chainID] != app.ModeLive {
		w.t.Fatalf("chain served as %q", a.Modes[chainID])
	}
	return a
}

// get is one request's status and body.
func get(h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// strikes are a call's and a put's strike of the strikes chain the
// emulated gateway answers.
func (w *world) strikes(t *testing.T) (call, put string) {
	t.Helper()
	_, body := get(w.emulated().Server, gateway.PathStrikesChain+fmt.Sprintf("?chainId=%d&optionMarket=%s&callsReach=20&putsReach=20", chainID, w.p.Market.Hex()))
	var chain []map[string]struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(body), &chain); err != nil {
		t.Fatalf("strikes chain %s: %v", body, err)
	}
	for _, entry := range chain {
		for strike, s := range entry {
			if s.Type == "call" && call == "" {
				call = strike
			}
			if s.Type == "put" && put == "" {
				put = strike
			}
		}
	}
	return call, put
}

// requests are every API route over the history: each user's histories
// and positions, every option's exercise, quotes and purchases at a call
// and a put strike, deposits and withdrawals, the markets and statistics.
func (w *world) requests(call, put string) []string {
	p := w.p
	id := fmt.Sprintf("chainId=%d", chainID)
	m := "&optionMarket=" + p.Market.Hex()
	out := []string{
		gateway.PathStrikesChain + "?" + id + m + "&callsReach=20&putsReach=20",
		gateway.PathOptionMarkets + "?" + id,
		gateway.PathOptionsChain + "?" + id + m + "&callsReach=5&putsReach=5&ttls=3600,86400",
		gateway.PathStats + "?" + id + m + fmt.Sprintf("&from=%d&to=%d", w.now()-7*86400, w.now()+1),
		gateway.PathExpiringOptions + "?" + id + m + "&within=86400&first=100&skip=0",
	}
	for _, u := range w.users {
		q := id + "&user=" + u.Addr.Hex()
		out = append(out,
			gateway.PathExerciseHistory+"?"+q+m+"&first=10&skip=0",
			gateway.PathPurchaseHistory+"?"+q+m+"&first=100&skip=0",
			gateway.PathPurchasePositions+"?"+q+m+"&first=100&skip=0",
			gateway.PathDepositHistory+"?"+q+"&first=100&skip=0",
			gateway.PathWithdrawHistory+"?"+q+"&first=100&skip=0",
			gateway.PathDepositPositions+"?"+q+"&first=100&skip=0",
			gateway.PathSettlements+"?"+q+m+"&first=100&skip=0",
			gateway.PathDelegatePrepare+"?"+q+m+"&enable=true",
		)
	}
	for _, o := range w.options {
		out = append(out, gateway.PathExercisePrepare+"?"+id+m+"&optionId="+o.String()+"&swapperId=uni-v3&slippage=1")
	}
	buyer := "&user=" + w.users[1].Addr.Hex()
	for _, s := range []struct{ typ, strike string }{{"call", call}, {"put", put}} {
		q := id + m + "&type=" + s.typ + "&strike=" + url.QueryEscape(s.strike) + "&ttl=3600&amount=1000000"
		out = append(out, gateway.PathPurchaseQuote+"?"+q+buyer, gateway.PathPurchasePrepare+"?"+q+buyer+"&slippage=1")
	}
	rng := fmt.Sprintf("&handler=%s&pool=%s&hook=%s&tickLower=%d&tickUpper=%d", p.Handler.Hex(), p.Pool.Hex(), common.Address{}.Hex(),
		w.rCall.TickLower+p.TickSpacing, w.rCall.TickUpper+p.TickSpacing)
	out = append(out, gateway.PathDepositPrepare+"?"+id+rng+"&amount=1000000"+buyer)
	owned := fmt.Sprintf("&handler=%s&pool=%s&hook=%s&tickLower=%d&tickUpper=%d", p.Handler.Hex(), p.Pool.Hex(), common.Address{}.Hex(),
		w.rPut.TickLower, w.rPut.TickUpper)
	out = append(out, gateway.PathWithdrawPrepare+"?"+id+owned+"&shares=max&user="+w.users[0].Addr.Hex())
	return out
}

// now is the head block's time.
func (w *world) now() uint64 {
	h, err := w.p.Chain.Client().HeaderByNumber(context.Background(), nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return h.Time
}

// sameAnswers asks both gateways every request; each route must answer
// 200 at least once (a route both refuse proves nothing), unless the
// history leaves a route nothing to answer (every option expired).
func sameAnswers(t *testing.T, what string, want, got http.Handler, paths []string) {
	t.Helper()
	for route, answered := range compare(t, what, want, got, paths) {
		if !answered.ok {
			t.Errorf("%s: %s never answered 200 (the comparison proves nothing there): %s", what, route, answered.last)
		}
	}
}

type answered struct {
	ok   bool
	last string
}

// compare asks both gateways every request and fails on any difference;
// it returns, by route, whether one answered 200.
func compare(t *testing.T, what string, want, got http.Handler, paths []string) map[string]answered {
	t.Helper()
	out := map[string]answered{}
	for _, path := range paths {
		wc, wb := get(want, path)
		gc, gb := get(got, path)
		if wc != gc || wb != gb {
			t.Errorf("%s: %s\n emulator %d %.500s\n indexed  %d %.500s", what, path, wc, wb, gc, gb)
		}
		route, _, _ := strings.Cut(path, "?")
		out[route] = answered{ok: out[route].ok || wc == http.StatusOK, last: fmt.Sprintf("%s: %d %.300s", path, wc, wb)}
	}
	return out
}

// A gateway given only the RPC URL indexes the chain itself and answers
// every route byte for byte as the gateway reading the same history
// through the emulator; restarted, it resumes after the last block it
// committed (two eth_getLogs, not a read from the start) and answers the
// same; its Graph Node query API answers as the emulator.
func TestOnlyAnRPCURLAnswersAsGraphNode(t *testing.T) {
	w := newWorld(t)
	w.history()
	dir := t.TempDir()
	o := w.opened(dir)
	// Until it has reached the head the chain is not ready, and says why.
	if code, body := get(o.app.Server, gateway.PathReadyz); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, `"SUBGRAPH_LAGGING"`) || !strings.Contains(body, `"indexing":{`) {
		t.Errorf("readyz before indexing: %d %s", code, body)
	}
	o.run()
	g := o.indexed
	head := w.p.Chain.BlockNumber()
	g.synced(t, head)
	indexMetrics(t, g, head)
	ref := w.emulated()
	paths := w.requests(w.strikes(t))
	sameAnswers(t, "first start", ref.Server, g.app.Server, paths)

	// Readiness shows where indexing stands, once the probe made before
	// indexing (reused for ReadyTTL, a second) has made way for a new one.
	eventually.True(t, "readyz 200 with the index synced", func() bool {
		code, body := get(g.app.Server, gateway.PathReadyz)
		return code == http.StatusOK && strings.Contains(body, `"state":"synced"`)
	})

	// The query API on its documented path, POST and GET.
	q := `{"query":"{ options(first: 1000, orderBy: id) { id tokenId owner state } _meta { block { number hash } } }"}`
	rec := httptest.NewRecorder()
	g.app.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, fmt.Sprintf("%s%d", gateway.PathSubgraphs, chainID), strings.NewReader(q)))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"tokenId"`) || strings.Contains(rec.Body.String(), `"errors"`) {
		t.Errorf("query API: %d %s", rec.Code, rec.Body)
	}
	if code, body := get(g.app.Server, fmt.Sprintf("%s%d?query=%s", gateway.PathSubgraphs, chainID, url.QueryEscape("{ _meta { block { number } } }"))); code != http.StatusOK ||
		!strings.Contains(body, fmt.Sprintf(`"number":%d`, head)) {
		t.Errorf("query API by GET: %d %s", code, body)
	}

	// A restart reads only what is new.
	g.stop()
	if _, err := w.p.Delegate(w.users[2], w.users[0].Addr, true); err != nil {
		t.Fatal(err)
	}
	before := w.node.count("eth_getLogs")
	again := w.indexed(dir)
	head = w.p.Chain.BlockNumber()
	again.synced(t, head)
	if n := w.node.count("eth_getLogs") - before; n > 2 {
		t.Errorf("the restart asked eth_getLogs %d times for one new block: it read the history again", n)
	}
	sameAnswers(t, "after the restart", w.emulated().Server, again.app.Server, paths)
}

// A reorg of several blocks on the simulated chain: the blocks holding a
// purchase, a delegation and a swap are replaced by a longer branch
// without them. The index reverts them and indexes the new branch, and
// its store then equals a fresh index of the chain as it now is.
func TestReorgEqualsAFreshIndex(t *testing.T) {
	w := newWorld(t)
	w.history()
	g := w.indexed(t.TempDir())
	ctx := context.Background()
	fork, err := w.p.Chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.synced(t, fork.Number.Uint64())
	p := w.p
	info := p.RangeInfo(w.rPut)
	free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
	if _, _, err := p.Buy(w.users[3], pt.Option{IsCall: false, TickLower: w.rPut.TickLower, TickUpper: w.rPut.TickUpper, TTL: 3600,
		Legs: []pt.Leg{{Range: w.rPut, Liquidity: free.Div(free, big.NewInt(10))}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Delegate(w.users[3], w.users[0].Addr, true); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(w.users[2], p.Fee, w.rCall.TickLower-5*p.TickSpacing); err != nil {
		t.Fatal(err)
	}
	orphaned := p.Chain.BlockNumber()
	if orphaned-fork.Number.Uint64() < 3 {
		t.Fatalf("setup: %d blocks to orphan", orphaned-fork.Number.Uint64())
	}
	g.synced(t, orphaned)
	before := dump(t, g)
	// An answer pinned to an orphaned block, cached before the reorg. (The
	// service remembers a block's hash for a second, DefaultHeadFresh: in
	// that second an asked block's answer is keyed by the hash it last
	// saw. Here it remembers nothing, so the key names the node's block.)
	g.app.Pins.SetHeadAges(block.HeadAges{Fresh: time.Nanosecond, Strikes: time.Second, Quotes: time.Second})
	pinned := fmt.Sprintf("%s?chainId=%d&optionMarket=%s&user=%s&first=100&skip=0&block=%d", gateway.PathPurchaseHistory, chainID, p.Market.Hex(),
		w.users[3].Addr.Hex(), fork.Number.Uint64()+1)
	if code, _ := get(g.app.Server, pinned); code != http.StatusOK {
		t.Fatalf("pinned answer before the reorg: %d", code)
	}

	if err := p.Chain.Backend.Fork(fork.Hash()); err != nil {
		t.Fatal(err)
	}
	for p.Chain.BlockNumber() <= orphaned {
		p.Chain.Commit()
	}
	head := p.Chain.BlockNumber()
	if h, _ := p.Chain.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(fork.Number.Uint64()+1)); h == nil || h.ParentHash != fork.Hash() {
		t.Fatal("setup: the chain did not switch to the new branch")
	}
	g.synced(t, head)
	after := dump(t, g)
	fresh := w.indexed(t.TempDir())
	fresh.synced(t, head)
	want := dump(t, fresh)
	if after != want {
		t.Errorf("after the reorg the store differs from a fresh index of the new chain")
	}
	if after == before {
		t.Errorf("setup: the reorg changed nothing the index holds")
	}
	// The same block number now names the new branch's block: the answer
	// cached for the orphaned one is not served.
	rec := httptest.NewRecorder()
	g.app.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, pinned, nil))
	code, now := rec.Code, rec.Body.String()
	nb, err := p.Chain.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(fork.Number.Uint64()+1))
	if err != nil {
		t.Fatal(err)
	}
	if code != http.StatusOK || !strings.EqualFold(rec.Header().Get("X-Block-Hash"), nb.Hash().Hex()) || rec.Header().Get("X-Cache") == "HIT" {
		t.Errorf("after the reorg the answer pinned to the orphaned block was served again: %d %s %s (block now %s)", code,
			rec.Header().Get("X-Cache"), rec.Header().Get("X-Block-Hash"), nb.Hash().Hex())
	}
	if _, want := get(w.emulated().Server, pinned); now != want {
		t.Errorf("pinned answer after the reorg\n indexed  %.300s\n emulator %.300s", now, want)
	}
	compare(t, "after the reorg", w.emulated().Server, g.app.Server, w.requests(w.strikes(t)))
}

// indexMetrics checks /metrics shows the index at head, with what it
// indexed, asked and stored.
func indexMetrics(t *testing.T, g *indexed, head uint64) {
	t.Helper()
	_, body := get(g.app.Server, gateway.PathMetrics)
	id := fmt.Sprintf(`{chain_id="%d"}`, chainID)
	for _, want := range []string{
		fmt.Sprintf("clamm_index_block%s %d\n", id, head),
		fmt.Sprintf("clamm_index_chain_head%s %d\n", id, head),
		"clamm_index_lag_blocks" + id + " 0\n",
		"clamm_index_failed" + id + " 0\n",
		"clamm_index_reorgs_total" + id + " 0\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics has no %q", want)
		}
	}
	for _, positive := range []string{"clamm_index_blocks_total" + id, "clamm_index_events_total" + id, "clamm_index_store_bytes" + id,
		fmt.Sprintf(`clamm_index_rpc_requests_total{chain_id="%d",method="eth_getLogs"}`, chainID)} {
		_, rest, ok := strings.Cut(body, positive+" ")
		if v, _, _ := strings.Cut(rest, "\n"); !ok || v == "0" {
			t.Errorf("/metrics: %s is %q", positive, v)
		}
	}
}

// A chain whose mappings fail stops alone: the gateway indexes and serves
// the other chain, readiness names the failed chain's block, handler and
// message, and /metrics flags it.
func TestAFailedChainStopsAlone(t *testing.T) {
	w := newWorld(t)
	w.history()
	// A second chain, synthetic, whose handler emits a LogDonation the
	// mapping cannot decode at block 250.
	handler, pool := common.HexToAddress("0x00000000000000000000000000000000000a0001"), common.HexToAddress("0x00000000000000000000000000000000000b0001")
	lp := common.HexToAddress("0x1111111111111111111111111111111111111111")
	price := new(big.Int).Lsh(big.NewInt(1), 96)
	h, err := indexertest.NewHandler(handler, pool)
	if err != nil {
		t.Fatal(err)
	}
	bad := indexertest.New(42161, 300)
	bad.Call = h.Slot0(price, 0)
	bad.Add(100, &indexertest.Tx{From: lp, To: handler, Logs: []types.Log{h.Mint(lp, -200_000, 1_000_000)}})
	donation := h.Donate(-200_000, 1) // data that does not decode fails the trigger
	donation.Data = donation.Data[:32]
	bad.Add(250, &indexertest.Tx{From: lp, To: handler, Logs: []types.Log{donation}})
	srv := httptest.NewServer(bad)
	t.Cleanup(srv.Close)
	cfg := w.config("", t.TempDir())
	arb := *config.Default().Chains[42161]
	arb.RPCURL, arb.SubgraphURL, arb.IndexSources = srv.URL, "", []string{"HandlerV2:" + handler.Hex() + "@100"}
	cfg.Chains[42161] = &arb
	poll := cfg.IndexPoll // the test's, below the least a configuration may set
	cfg.IndexPoll = config.MinIndexPoll
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg.IndexPoll = poll
	o := w.openedWith(cfg)
	o.run()
	g := o.indexed
	eventually.True(t, "the index failed", func() bool {
		return g.app.Indexes[42161].Status().State == graphnode.IndexingFailed
	})
	g.synced(t, w.p.Chain.BlockNumber())

	code, body := get(g.app.Server, gateway.PathReadyz)
	var ready struct {
		Chains []struct {
			ChainID  uint64
			Ready    bool
			Problems []string
			Indexing *graphnode.Indexing
		}
	}
	if err := json.Unmarshal([]byte(body), &ready); err != nil || code != http.StatusServiceUnavailable || len(ready.Chains) != 2 {
		t.Fatalf("readyz %d %s (%v)", code, body, err)
	}
	for _, c := range ready.Chains {
		switch c.ChainID {
		case 42161:
			if c.Ready || !slices.Contains(c.Problems, "SUBGRAPH_INDEXING_ERROR") || c.Indexing == nil || c.Indexing.State != graphnode.IndexingFailed ||
				!strings.Contains(c.Indexing.Error, "block 250") || !strings.Contains(c.Indexing.Error, "handleDonation") || c.Indexing.Block >= 250 {
				t.Errorf("the failed chain: %+v %+v", c, c.Indexing)
			}
		case chainID:
			if !c.Ready {
				t.Errorf("the other chain is not ready: %+v", c)
			}
		}
	}
	_, m := get(g.app.Server, gateway.PathMetrics)
	for _, want := range []string{`clamm_index_failed{chain_id="42161"} 1`, fmt.Sprintf(`clamm_index_failed{chain_id="%d"} 0`, chainID)} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	// The other chain is still followed and served.
	if _, err := w.p.Delegate(w.users[2], w.users[0].Addr, true); err != nil {
		t.Fatal(err)
	}
	g.synced(t, w.p.Chain.BlockNumber())
	if code, body := get(g.app.Server, gateway.PathOptionMarkets+fmt.Sprintf("?chainId=%d", chainID)); code != http.StatusOK {
		t.Errorf("the other chain's markets: %d %s", code, body)
	}
}

// dump is the index's entity versions, as text.
func dump(t *testing.T, g *indexed) string {
	t.Helper()
	vs, err := g.app.Indexes[chainID].(*indexer.Indexer).Store().Dump(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(vs)
}
