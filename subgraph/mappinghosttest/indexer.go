package mappinghosttest

import (
	"context"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// Indexer routes a chain's logs to the compiled mappings the way Graph Node
// indexes a network: block by block, each block's logs in log-index order,
// each log handed to the handler its data source names for its address and
// topic0 (from the data source's start block), handlers declared with
// `receipt: true` given the transaction's receipt; a data source a handler
// creates (dataSource.create) is indexed from that block on, and sees that
// block's logs after the data sources that existed before it, as Graph Node
// reprocesses a block. One host runs each compiled mapping file with its
// ABIs. It is used by the pipeline tests (logs of the simulated EVM) and by
// the scenarios (logs of a stated history); it is a test harness, not an
// indexer: one chain, no reorgs.
type Indexer struct {
	Store   *Store
	network string
	call    Call
	hosts   map[string]*Host // by compiled mapping file and ABIs
	sources map[common.Address]*source
	created map[*Host]int
}

type source struct {
	ds    *DataSource
	host  *Host
	start uint64
}

// BlockLog is one log of a block; Tx gives its transaction, with the
// receipt when receipt is true (fetched only for the handlers that declare
// it).
type BlockLog struct {
	Log types.Log
	Tx  func(receipt bool) (Tx, error)
}

// NewIndexer indexes into store with the data sources of network's built
// manifest, eth_calls answered by call.
func NewIndexer(network string, store *Store, call Call) *Indexer {
	return &Indexer{Store: store, network: network, call: call, hosts: map[string]*Host{},
		sources: map[common.Address]*source{}, created: map[*Host]int{}}
}

// Close releases the mappings' runtimes.
func (ix *Indexer) Close() {
	for _, h := range ix.hosts {
		h.Close()
	}
}

// Watch indexes addr with the named data source or template of the
// manifest from block start.
func (ix *Indexer) Watch(addr common.Address, name string, start uint64) error {
	ds, err := LoadNetworkDataSource(ix.network, name)
	if err != nil {
		return err
	}
	// graph build writes one compiled file for data sources sharing a
	// mapping source, each listing its own ABIs: a host is both.
	key := ds.Wasm + "|" + strings.Join(ds.ABIs, ",")
	h, ok := ix.hosts[key]
	if !ok {
		h, err = New(context.Background(), ds.Wasm, ix.Store, Options{Call: ix.call, ABIs: ds.ABIs, Network: ix.network})
		if err != nil {
			return err
		}
		ix.hosts[key] = h
	}
	ix.sources[addr] = &source{ds: ds, host: h, start: start}
	return nil
}

// Logs are every log.log of the mappings so far.
func (ix *Indexer) Logs() []Log {
	var out []Log
	for _, h := range ix.hosts {
		out = append(out, h.Logs...)
	}
	return out
}

// Block indexes one block's logs (in log-index order) and moves the head
// to it: _meta names the last indexed block and its time, as Graph Node's.
func (ix *Indexer) Block(b Block, logs []BlockLog) error {
	active := map[common.Address]bool{}
	for a := range ix.sources {
		active[a] = true
	}
	var fresh []common.Address
	pass := func(in func(common.Address) bool) error {
		for _, lg := range logs {
			if !in(lg.Log.Address) {
				continue
			}
			created, err := ix.run(lg, b)
			if err != nil {
				return err
			}
			fresh = append(fresh, created...)
		}
		return nil
	}
	if err := pass(func(a common.Address) bool { return active[a] }); err != nil {
		return err
	}
	for len(fresh) > 0 {
		now := map[common.Address]bool{}
		for _, a := range fresh {
			now[a] = true
		}
		fresh = nil
		if err := pass(func(a common.Address) bool { return now[a] }); err != nil {
			return err
		}
	}
	ix.Store.SetHead(graphnode.Block{Number: b.Number, Hash: b.Hash.Hex(), Timestamp: b.Timestamp})
	return nil
}

// run hands one log to its handler, if its data source has one for its
// topic; it returns the addresses of the data sources the handler created.
func (ix *Indexer) run(lg BlockLog, b Block) ([]common.Address, error) {
	src := ix.sources[lg.Log.Address]
	if src == nil || b.Number < src.start || len(lg.Log.Topics) == 0 {
		return nil, nil
	}
	eh, ok := src.ds.Handlers[lg.Log.Topics[0]]
	if !ok {
		return nil, nil
	}
	tx, err := lg.Tx(eh.Receipt)
	if err != nil {
		return nil, err
	}
	if err := src.host.Handle(eh.Handler, eh.Event, lg.Log, b, tx); err != nil {
		return nil, fmt.Errorf("block %d log %d %s.%s: %w", b.Number, lg.Log.Index, src.ds.Name, eh.Handler, err)
	}
	var fresh []common.Address
	for _, cr := range src.host.Created[ix.created[src.host]:] {
		addr := common.HexToAddress(cr.Params[0])
		if _, ok := ix.sources[addr]; !ok {
			if err := ix.Watch(addr, cr.Template, b.Number); err != nil {
				return nil, err
			}
			fresh = append(fresh, addr)
		}
	}
	ix.created[src.host] = len(src.host.Created)
	return fresh, nil
}
