// Package indexer is the gateway's embedded indexer: it indexes a chain
// with the project's own compiled subgraph (internal/graphnode/mapping)
// into a store on disk (internal/graphnode/sqlstore), from nothing but a
// JSON-RPC node, so that a chain configured with an RPC URL and no
// subgraph URL is served as Graph Node would serve it.
//
// It backfills with eth_getLogs over the data sources' addresses and
// topics, in ranges that adapt to the node's limits, fetched ahead
// concurrently and applied strictly in block and log order; it reads a
// block (with its transactions) only where a log is, receipts only where
// a handler declares `receipt: true`, and answers the mappings'
// ethereum.call at the trigger's block hash. Then it follows the head,
// checking at each step that the last block it indexed is still on the
// chain: a reorg reverts the store to the common ancestor and indexes the
// new branch. A mapping error stops the chain's indexing with the block,
// data source, handler and message; the store keeps serving what was
// indexed before it.
//
// Its contract with the node (docs/operations.md, "The indexer and its
// node"; each clause has its test against indexertest.Hostile):
//
//   - A block is committed only once its header, its parent link and its
//     logs agree. Blocks within Options.Confirmations of the head have
//     every header read (readNear): parents linked, blocks with logs equal
//     to the block the logs name, and a block without logs in the answer
//     whose logsBloom may hold some read again by hash. A short answer is
//     read again, never committed past.
//   - A node behind (a null header, a head below the store's) is waited
//     for (errNoBlock) and never reverted to: only a block the node names
//     with another hash is a reorg (checkReorg).
//   - An answer that is not what was asked (a header of another number,
//     two logs at one index) is refused and the step retried.
//   - A transient failure is retried with growing pauses, an eth_call a
//     pruned node would refuse first asked again (callRetries): only a
//     node that keeps refusing a block it has stops indexing.
//   - Every answer is bounded (MaxAnswer) and a Retry-After obeyed
//     (DialNode); a rate limit keeps the eth_getLogs range.
//   - Batches and eth_getBlockReceipts are probed once and used
//     accordingly (a batch of one is a single call).
//   - The node's error text is scrubbed and cut before the log and
//     Status (problem.Scrub).
package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Options configure one chain's indexer. ChainID, RPC and Path are
// required.
type Options struct {
	ChainID uint64
	// RPC is the chain's node.
	RPC NodeClient
	// Path is the store's file (created if absent).
	Path string
	// Sources, if set, replace the manifest's data sources (a local chain
	// or a fork deploys the contracts elsewhere); each Name is a data
	// source or template of the manifest.
	Sources []mapping.Watched
	// Manifest is the subgraph's manifest; nil: the embedded build's for
	// the network subgraph/networks.json gives ChainID.
	Manifest *mapping.Manifest
	// Logger receives progress and failures; nil: discarded.
	Logger *slog.Logger
	// Range is the first eth_getLogs range in blocks (0: 2,000), MaxRange
	// the largest it grows to (0: 100,000); Ahead is how many ranges are
	// fetched ahead of the one being applied (0: 4).
	Range, MaxRange uint64
	Ahead           int
	// Batch is the most calls one JSON-RPC batch request carries (0: 100):
	// the blocks of a range and their receipts are read in batches of it.
	// Providers cap batches (geth and Nitro at 1,000 calls and 25 MB of
	// answer by default, some providers far lower): a node that refuses
	// a batch needs a lower one.
	Batch int
	// Poll is how often the head is asked once indexed up to it (0: 2 s).
	Poll time.Duration
	// Confirmations is the depth below the node's head past which blocks
	// are taken as final (0: 250, Graph Node's ETHEREUM_REORG_THRESHOLD):
	// ranges below it are read by number, one eth_getLogs each; the blocks
	// above it have every header read and their parent links, logs and
	// logsBloom checked before they are committed (docs/operations.md,
	// "The indexer and its node").
	Confirmations uint64
	// History is how many blocks below the head the store keeps the state
	// of (0: every version; the gateway's CLAMM_INDEX_HISTORY_BLOCKS,
	// 1,000,000 by default): sqlstore.Store.SetHistory.
	History uint64
	// Progress is how often progress is logged while behind (0: 10 s).
	Progress time.Duration
	// CallTimeout bounds each call to the node (0: 60 s).
	CallTimeout time.Duration
	// StallAfter is how long failures may go on before Status says the
	// index is stalled (0: 30 polls, at least a minute).
	StallAfter time.Duration
	// Redact, if set, cleans every error text the indexer logs or reports
	// (transport errors quote the node's URL, which may hold a key).
	Redact func(string) string
}

// manifestOf is the manifest the chain is indexed with: the given one, or
// the embedded build's for the chain's network, or, on a chain the
// deployments registry does not list (a local chain) whose data sources
// are given, the default network's (its templates index any address).
func manifestOf(o Options) (*mapping.Manifest, error) {
	if o.Manifest != nil {
		return o.Manifest, nil
	}
	m, err := mapping.ForChain(o.ChainID)
	if err != nil && o.Sources != nil {
		return mapping.Network(DefaultNetwork)
	}
	return m, err
}

// DefaultNetwork is the network whose build indexes a chain the registry
// does not list.
const DefaultNetwork = "arbitrum-one"

// Indexer indexes one chain. Run it; query it through Query (or the
// http.Handler Server gives); read its state through Status.
type Indexer struct {
	opts     Options
	log      *slog.Logger
	node     *node
	store    *sqlstore.Store
	sg       *mapping.Subgraph
	manifest *mapping.Manifest
	start    uint64
	size     sizer

	mu     sync.Mutex
	status Status
	// okAt is when a step last succeeded (Status's Stalled); storeErr the
	// store's last failed read (Query).
	okAt     time.Time
	storeErr string
	stats    stats
	// closeRPC, if set, closes the node's client (ForChain dialled it).
	closeRPC func()
	// idle counts the steps that found nothing new (pruning's clock).
	idle uint64
	// descs are its metrics (Collect).
	descs descs
	// fetched are the blocks read ahead when a data source's creation
	// ended the last sync (the next one reuses them).
	fetched fetched
	// onHead hears each head the store commits or reverts to (OnHead).
	onHead func(head graphnode.Block, reverted bool)
	// predict learns and predicts the mappings' calls; calls are the
	// prefetched answers of the range being applied; rec records the
	// calls of the handler running (calls.go).
	predict predictor
	calls   callCache
	rec     recording
}

// OnHead, called before Run, makes fn hear each block the store commits
// as its head, and after a reorg's revert the newest block it kept
// (reverted): the gateway's head feed for the chain (block.Heads).
func (ix *Indexer) OnHead(fn func(head graphnode.Block, reverted bool)) { ix.onHead = fn }

// announce tells OnHead's fn the store's head.
func (ix *Indexer) announce(ctx context.Context, reverted bool) {
	if ix.onHead == nil {
		return
	}
	if b, ok, err := ix.store.Head(ctx); err == nil && ok {
		ix.onHead(b, reverted)
	}
}

// Status is an indexer's state, as /readyz shows it.
type Status = graphnode.Indexing

// The states of Status.
const (
	StateStarting = graphnode.IndexingStarting
	StateIndexing = graphnode.IndexingBehind
	StateSynced   = graphnode.IndexingSynced
	StateFailed   = graphnode.IndexingFailed
)

// Open opens the chain's store (creating it, or emptying one another
// build of the subgraph wrote) and prepares its data sources: the
// configured or manifest's ones, and those the mappings created before.
func Open(ctx context.Context, o Options) (*Indexer, error) {
	if o.ChainID == 0 || o.RPC == nil || o.Path == "" {
		return nil, errors.New("indexer: ChainID, RPC and Path are required")
	}
	o = withDefaults(o)
	m, err := manifestOf(o)
	if err != nil {
		return nil, err
	}
	sources := o.Sources
	if sources == nil {
		sources = m.Static()
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("chain %d: no data source to index", o.ChainID)
	}
	schema, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		return nil, err
	}
	ix := &Indexer{opts: o, log: o.Logger, manifest: m, descs: newDescs(o.ChainID), node: &node{rpc: o.RPC, counts: &methodCounts{}, timeout: o.CallTimeout, maxBatch: o.Batch,
		callRetries: callRetries}}
	ix.size = sizer{min: 1, max: o.MaxRange, small: 1000}
	ix.size.size.Store(o.Range)
	if err := sqlstore.Check(ctx, o.Path); err != nil {
		return nil, fmt.Errorf("%w: move it away or delete it, and the chain is indexed again from the start", err)
	}
	st, reset, err := sqlstore.Open(o.Path, schema, identity(o.ChainID, m, sources))
	if err != nil {
		return nil, err
	}
	st.SetHistory(o.History)
	if reset {
		ix.log.Warn("the store was written by another build of the subgraph or other data sources: indexing again from the start", "chainId", o.ChainID, "path", o.Path)
	}
	ix.store = st
	// no store of its own: each block is written through its writer
	// (apply: BlockTo with retryable)
	ix.sg = mapping.NewSubgraph(m, nil, ix.ethCall)
	ix.sg.OnLog = ix.mappingLog
	if err := ix.watch(ctx, sources); err != nil {
		_ = st.Close()
		ix.sg.Close()
		return nil, err
	}
	ix.status = Status{ChainID: o.ChainID, State: StateStarting, StartBlock: ix.start}
	ix.okAt = time.Now()
	if h, ok, err := st.Head(ctx); err == nil && ok {
		ix.status.Block = h.Number
	}
	return ix, nil
}

func withDefaults(o Options) Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Range == 0 {
		o.Range = 2000
	}
	if o.MaxRange == 0 {
		o.MaxRange = 100_000
	}
	o.Range = min(o.Range, o.MaxRange)
	if o.Ahead <= 0 {
		o.Ahead = 4
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Confirmations == 0 {
		o.Confirmations = 250
	}
	if o.Progress <= 0 {
		o.Progress = 10 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = time.Minute
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.StallAfter <= 0 {
		o.StallAfter = max(30*o.Poll, time.Minute)
	}
	return o
}

// watch indexes the static data sources and those the store says the
// mappings created; the start block is the earliest static one's.
func (ix *Indexer) watch(ctx context.Context, static []mapping.Watched) error {
	ix.start = static[0].Start
	for _, w := range static {
		if err := ix.sg.Watch(ctx, w); err != nil {
			return err
		}
		ix.start = min(ix.start, w.Start)
	}
	created, err := ix.store.Sources(ctx)
	if err != nil {
		return err
	}
	for _, d := range created {
		if err := ix.sg.Watch(ctx, mapping.Watched{Address: common.HexToAddress(d.Address), Name: d.Name, Start: d.Start}); err != nil {
			return err
		}
	}
	return nil
}

// identity names what the store's entities depend on: the chain, the
// schema, the manifest's mappings and the data sources indexed. Another
// identity means another subgraph: its store starts over.
func identity(chainID uint64, m *mapping.Manifest, sources []mapping.Watched) string {
	h := sha256.New()
	fmt.Fprintf(h, "chain %d\n%s\n", chainID, subgraph.Schema)
	if raw, err := subgraph.Build.ReadFile(mapping.ManifestPath(m.Network)); err == nil {
		h.Write(raw)
	}
	var names []string
	for _, ds := range m.Sources {
		names = append(names, ds.Wasm)
	}
	for _, ds := range m.Templates {
		names = append(names, ds.Wasm)
	}
	sort.Strings(names)
	for _, n := range slicesCompact(names) {
		if raw, err := subgraph.Build.ReadFile(n); err == nil {
			h.Write(raw)
		}
	}
	for _, w := range sources {
		fmt.Fprintf(h, "%s %s %d\n", w.Address.Hex(), w.Name, w.Start)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func slicesCompact(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Close releases the store and the mappings' runtimes. Run must have
// returned.
func (ix *Indexer) Close() error {
	ix.sg.Close()
	if ix.closeRPC != nil {
		ix.closeRPC()
	}
	return ix.store.Close()
}

// Status is the indexer's state now: stalled once its steps have failed
// for longer than Options.StallAfter, with the store's last failed read.
func (ix *Indexer) Status() Status {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := ix.status
	st.Stalled = st.State != StateFailed && time.Since(ix.okAt) > ix.opts.StallAfter
	st.StoreError = ix.storeErr
	return st
}

// stepped notes a step that succeeded.
func (ix *Indexer) stepped() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.okAt = time.Now()
	ix.status.Error = ""
}

func (ix *Indexer) setStatus(f func(*Status)) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	f(&ix.status)
}

// Query answers a GraphQL request from the store, as Graph Node would. A
// read the store fails (Graph Node's "Store error") is kept for Status:
// a store that cannot answer is not ready.
func (ix *Indexer) Query(req graphnode.Request) graphnode.Response {
	r := ix.store.Query(req)
	failed := ""
	for _, e := range r.Errors {
		if strings.HasPrefix(e.Message, "Store error") {
			failed = secret.Scrub(e.Message)
			break
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if failed != "" || len(r.Errors) == 0 && !damaged(ix.storeErr) {
		ix.storeErr = failed
	}
	return r
}

// damaged reports a store error that a later read cannot clear: SQLite's
// words for a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB).
func damaged(msg string) bool {
	return strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") || strings.Contains(msg, "corrupt")
}

// QueryContext is Query on the request's context: the store stops
// reading when it ends.
func (ix *Indexer) QueryContext(ctx context.Context, req graphnode.Request) graphnode.Response {
	return ix.store.QueryContext(ctx, req)
}

// Store is the indexer's store (tests compare stores by its Dump).
func (ix *Indexer) Store() *sqlstore.Store { return ix.store }

// mappingLog writes a mapping's log.log to the gateway's log at its level.
func (ix *Indexer) mappingLog(ds, handler string, l mapping.Log) {
	level := []slog.Level{slog.LevelError, slog.LevelError, slog.LevelWarn, slog.LevelInfo, slog.LevelDebug}
	lv := slog.LevelDebug
	if l.Level >= 0 && l.Level < len(level) {
		lv = level[l.Level]
	}
	ix.log.Log(context.Background(), lv, "mapping log", "chainId", ix.opts.ChainID, "dataSource", ds, "handler", handler, "message", l.Message)
}

func jsonUnmarshal(raw []byte, v any) error {
	if len(raw) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}
