package mapping

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Subgraph routes a chain's logs to the compiled mappings the way Graph
// Node indexes a network: block by block, each block's logs in log-index
// order, each log handed to the handler its data source names for its
// address and topic0 (from the data source's start block), handlers
// declared with `receipt: true` given the transaction's receipt. A data
// source a handler creates (dataSource.create) is indexed from that block
// on, and sees that block's logs after the data sources that existed before
// it, as Graph Node reprocesses a block for new data sources. One Host runs
// each compiled mapping file with its data source's ABIs.
//
// It keeps no state but the data sources: what the mappings write goes to
// the Store, and the caller persists the data sources created (Block
// returns them) and gives them back to Watch after a restart.
type Subgraph struct {
	manifest *Manifest
	store    Store
	call     Call
	hosts    map[string]*Host // by compiled mapping file and ABIs
	sources  map[common.Address]*source
	handled  int64
	// OnLog, if set, receives every log.log of the mappings with the data
	// source and handler that wrote it.
	OnLog func(ds, handler string, l Log)
}

type source struct {
	ds    *DataSource
	host  *Host
	start uint64
}

// Watched is one data source being indexed: its address, the data source
// or template it runs and its first block.
type Watched struct {
	Address common.Address
	Name    string
	Start   uint64
}

// BlockLog is one log of a block; Tx gives its transaction, with the
// receipt when receipt is true (fetched only for the handlers that declare
// it).
type BlockLog struct {
	Log types.Log
	Tx  func(ctx context.Context, receipt bool) (Tx, error)
}

// Fetch returns a block's logs emitted by addrs: how Block reads the logs
// of the data sources the block creates, which the caller's filter did not
// name. nil: they are among the logs given (the caller gave every log).
type Fetch func(ctx context.Context, addrs []common.Address) ([]BlockLog, error)

// HandlerError is a mapping's failure on a trigger: deterministic, so
// indexing cannot go past it (Graph Node fails the subgraph there).
type HandlerError struct {
	Block      uint64
	LogIndex   uint
	DataSource string
	Handler    string
	Err        error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("block %d log %d: %s.%s: %v", e.Block, e.LogIndex, e.DataSource, e.Handler, e.Err)
}

func (e *HandlerError) Unwrap() error { return e.Err }

// NewSubgraph indexes into store with the manifest's mappings, eth_calls
// answered by call. No data source is watched yet: the caller watches the
// manifest's (Static) or its own.
func NewSubgraph(m *Manifest, store Store, call Call) *Subgraph {
	return &Subgraph{manifest: m, store: store, call: call, hosts: map[string]*Host{}, sources: map[common.Address]*source{}}
}

// Static are the manifest's data sources with their start blocks.
func (m *Manifest) Static() []Watched {
	out := make([]Watched, len(m.Sources))
	for i, ds := range m.Sources {
		out[i] = Watched{Address: ds.Address, Name: ds.Name, Start: ds.StartBlock}
	}
	return out
}

// Close releases the mappings' runtimes.
func (sg *Subgraph) Close() {
	for _, h := range sg.hosts {
		h.Close()
	}
}

// Watch indexes addr with the named data source or template of the
// manifest from block start. An address watched already keeps its data
// source, from the earlier of the two starts (the indexer starts at the
// earliest: a later start winning left blocks unindexed, attack 5's S13);
// one watched as another data source is refused.
func (sg *Subgraph) Watch(ctx context.Context, w Watched) error {
	if old, ok := sg.sources[w.Address]; ok {
		if old.ds.Name != w.Name {
			return fmt.Errorf("%s is indexed as %s already, not also as %s", w.Address.Hex(), old.ds.Name, w.Name)
		}
		old.start = min(old.start, w.Start)
		return nil
	}
	ds, ok := sg.manifest.Source(w.Name)
	if !ok {
		return fmt.Errorf("the %s manifest has no data source or template %s", sg.manifest.Network, w.Name)
	}
	// graph build writes one compiled file for data sources sharing a
	// mapping source, each listing its own ABIs: a host is both.
	names := make([]string, 0, len(ds.ABIs))
	for n := range ds.ABIs {
		names = append(names, n)
	}
	sort.Strings(names)
	key := ds.Wasm + "|" + strings.Join(names, ",")
	h, ok := sg.hosts[key]
	if !ok {
		code, err := subgraphFile(ds.Wasm)
		if err != nil {
			return err
		}
		if h, err = New(ctx, ds.Wasm, code, sg.store, Options{Call: sg.call, ABIs: ds.ABIs, Network: sg.manifest.Network}); err != nil {
			return err
		}
		sg.hosts[key] = h
	}
	sg.sources[w.Address] = &source{ds: ds, host: h, start: w.Start}
	return nil
}

// Handled is how many triggers the mappings have run (failed ones too).
func (sg *Subgraph) Handled() int64 { return sg.handled }

// Unwatch stops indexing addr: a reorg reverted the block that created
// its data source, or the block failed.
func (sg *Subgraph) Unwatch(addr common.Address) { delete(sg.sources, addr) }

// NeedsReceipt reports whether the handler of lg (if any) declares
// `receipt: true`.
func (sg *Subgraph) NeedsReceipt(lg types.Log) bool {
	src := sg.sources[lg.Address]
	if src == nil || len(lg.Topics) == 0 {
		return false
	}
	return src.ds.Handlers[lg.Topics[0]].Receipt
}

// subgraphFile reads a file of the embedded build.
var subgraphFile = func(p string) ([]byte, error) { return subgraph.Build.ReadFile(p) }

// Watching lists the data sources indexed now, by address.
func (sg *Subgraph) Watching() []Watched {
	out := make([]Watched, 0, len(sg.sources))
	for a, s := range sg.sources {
		out = append(out, Watched{Address: a, Name: s.ds.Name, Start: s.start})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address.Cmp(out[j].Address) < 0 })
	return out
}

// Filter is what an eth_getLogs must ask to see every log the data
// sources handle: their addresses and their handlers' topic0s.
func (sg *Subgraph) Filter() (addrs []common.Address, topics []common.Hash) {
	seen := map[common.Hash]bool{}
	for _, w := range sg.Watching() {
		addrs = append(addrs, w.Address)
		for t := range sg.sources[w.Address].ds.Handlers {
			if !seen[t] {
				seen[t] = true
				topics = append(topics, t)
			}
		}
	}
	sort.Slice(topics, func(i, j int) bool { return topics[i].Cmp(topics[j]) < 0 })
	return addrs, topics
}

// Block indexes one block's logs (in log-index order) and returns the data
// sources its handlers created. logs must hold every log of the watched
// addresses in the block; fetch reads those of the addresses the block's
// handlers create (nil: they are in logs).
func (sg *Subgraph) Block(ctx context.Context, b Block, logs []BlockLog, fetch Fetch) (created []Watched, err error) {
	return sg.BlockTo(ctx, nil, b, logs, fetch)
}

// BlockTo is Block writing to st (nil: the subgraph's store): the block's
// own writer, passed with the block (the embedded indexer stages each
// block in a writer of its own).
func (sg *Subgraph) BlockTo(ctx context.Context, st Store, b Block, logs []BlockLog, fetch Fetch) (created []Watched, err error) {
	defer func() {
		// A failed block is indexed again from its start (its writes are
		// discarded with it): the data sources it created are forgotten
		// so that the retry creates them again.
		if err != nil {
			for _, w := range created {
				delete(sg.sources, w.Address)
			}
			created = nil
		}
	}()
	active := map[common.Address]bool{}
	for a := range sg.sources {
		active[a] = true
	}
	var fresh []common.Address
	pass := func(logs []BlockLog, in map[common.Address]bool) error {
		for _, lg := range logs {
			if !in[lg.Log.Address] {
				continue
			}
			made, err := sg.run(ctx, st, lg, b)
			for _, w := range made {
				created = append(created, w)
				fresh = append(fresh, w.Address)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := pass(logs, active); err != nil {
		return nil, err
	}
	for len(fresh) > 0 {
		now := map[common.Address]bool{}
		for _, a := range fresh {
			now[a] = true
		}
		more := logs
		if fetch != nil {
			var err error
			if more, err = fetch(ctx, fresh); err != nil {
				return nil, err
			}
			sort.Slice(more, func(i, j int) bool { return more[i].Log.Index < more[j].Log.Index })
		}
		fresh = nil
		if err := pass(more, now); err != nil {
			return nil, err
		}
	}
	return created, nil
}

// run hands one log to its handler, if its data source has one for its
// topic; it returns the data sources the handler created.
func (sg *Subgraph) run(ctx context.Context, st Store, lg BlockLog, b Block) ([]Watched, error) {
	src := sg.sources[lg.Log.Address]
	if src == nil || b.Number < src.start || len(lg.Log.Topics) == 0 {
		return nil, nil
	}
	eh, ok := src.ds.Handlers[lg.Log.Topics[0]]
	if !ok {
		return nil, nil
	}
	tx, err := lg.Tx(ctx, eh.Receipt)
	if err != nil {
		return nil, err
	}
	sg.handled++
	out, err := src.host.Handle(ctx, Trigger{Handler: eh.Handler, Event: eh.Event, Log: lg.Log, Block: b, Tx: tx, Store: st})
	if sg.OnLog != nil {
		for _, l := range out.Logs {
			sg.OnLog(src.ds.Name, eh.Handler, l)
		}
	}
	if err != nil {
		if retryable(err) {
			return nil, err
		}
		return nil, &HandlerError{Block: b.Number, LogIndex: lg.Log.Index, DataSource: src.ds.Name, Handler: eh.Handler, Err: err}
	}
	var made []Watched
	for _, cr := range out.Created {
		if len(cr.Params) == 0 || !common.IsHexAddress(cr.Params[0]) {
			return nil, &HandlerError{Block: b.Number, LogIndex: lg.Log.Index, DataSource: src.ds.Name, Handler: eh.Handler,
				Err: fmt.Errorf("dataSource.create(%s, %v): not an address", cr.Template, cr.Params)}
		}
		addr := common.HexToAddress(cr.Params[0])
		if _, ok := sg.sources[addr]; ok {
			continue
		}
		w := Watched{Address: addr, Name: cr.Template, Start: b.Number}
		if err := sg.Watch(ctx, w); err != nil {
			return made, &HandlerError{Block: b.Number, LogIndex: lg.Log.Index, DataSource: src.ds.Name, Handler: eh.Handler, Err: err}
		}
		made = append(made, w)
	}
	return made, nil
}
