package scenario

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The subgraph's entities for scenarios are what the compiled mappings
// (subgraph/build, run by internal/graphnode/mapping on wazero) write for the
// scenarios' histories (history.go), indexed as Graph Node indexes the
// network: the built manifest's data sources from their start blocks,
// templates from the block that creates them, each block's logs in order,
// handlers declared with `receipt: true` given the transaction's receipt,
// eth_calls answered by the chain (the fake node the scenarios populate,
// which holds the head state: every getter the mappings call returns a
// value that never changes once written, except slot0, which is answered
// at the block asked from the history's Swap logs up to it).

// network is a Graph Node network of subgraph/networks.json.
type network struct {
	name   string
	static map[common.Address]staticSource
}

type staticSource struct {
	name  string
	start uint64
}

// networkOf reads the data sources the manifest of chainID lists.
func networkOf(chainID uint64) (*network, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(subgraph.Networks, &all); err != nil {
		return nil, err
	}
	type entry struct {
		Name       string         `json:"name"`
		Address    common.Address `json:"address"`
		StartBlock uint64         `json:"startBlock"`
	}
	for name, body := range all {
		var n struct {
			ChainID                             uint64
			PositionManagers, Markets, Handlers []entry
		}
		if json.Unmarshal(body, &n) != nil || n.ChainID != chainID {
			continue
		}
		out := &network{name: name, static: map[common.Address]staticSource{}}
		for _, list := range [][]entry{n.PositionManagers, n.Markets, n.Handlers} {
			for _, e := range list {
				out.static[e.Address] = staticSource{name: e.Name, start: e.StartBlock}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("subgraph/networks.json has no network of chain %d", chainID)
}

// indexed caches each chain's store by the scenarios it holds: indexing
// runs the mappings once per set of scenarios in a test binary.
var indexed sync.Map // key string -> indexedChain

// indexedChain is a set of scenarios indexed: the store (Save's bytes) and
// the history the node answers logs and older blocks from.
type indexedChain struct {
	store   []byte
	history *chaintest.History
}

// Index fills st with what the compiled mappings write for the scenarios
// (all of one chain) when they index the scenarios' histories, with eth_calls
// answered by node, which the scenarios populate.
func Index(st **graphnode.Store, node *chaintest.Node, scenarios []*Scenario) error {
	if len(scenarios) == 0 {
		return nil
	}
	key, err := json.Marshal(scenarios)
	if err != nil {
		return err
	}
	saved, ok := indexed.Load(string(key))
	if !ok {
		out, hist, err := index(node, scenarios)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := out.Save(&buf); err != nil {
			return err
		}
		saved, _ = indexed.LoadOrStore(string(key), indexedChain{store: buf.Bytes(), history: hist})
	}
	ic := saved.(indexedChain)
	loaded, err := graphnode.LoadStore((*st).Schema(), bytes.NewReader(ic.store))
	if err != nil {
		return err
	}
	*st = loaded
	node.Lock()
	node.History = ic.history
	node.Unlock()
	populateHoldings(node, loaded)
	return nil
}

// block is one block of the history with its transactions in order.
type block struct {
	number uint64
	time   int64
	txs    []*tx
}

func index(node *chaintest.Node, scenarios []*Scenario) (*graphnode.Store, *chaintest.History, error) {
	chainID := scenarios[0].ChainID
	net, err := networkOf(chainID)
	if err != nil {
		return nil, nil, err
	}
	static := map[common.Address]uint64{}
	for a, src := range net.static {
		static[a] = src.start
	}
	swapper := swapperOf(chainID)
	var blocks []*block
	var head graphnode.Block
	for _, s := range scenarios {
		if s.ChainID != chainID {
			return nil, nil, fmt.Errorf("scenarios of chains %d and %d in one store", chainID, s.ChainID)
		}
		h, err := s.buildHistory(swapper, static)
		if err != nil {
			return nil, nil, fmt.Errorf("scenario of market %s: %w", s.Market.Address.Hex(), err)
		}
		if blocks, err = s.place(blocks, h.txs); err != nil {
			return nil, nil, fmt.Errorf("scenario of market %s: %w", s.Market.Address.Hex(), err)
		}
		if s.Block.Number > head.Number {
			head = graphnode.Block{Number: s.Block.Number, Hash: blockHash(chainID, s.Block.Number).Hex(), Timestamp: uint64(s.Block.Timestamp)}
		}
	}
	prices := poolPrices{}
	ix, err := newIndexer(net, node, prices)
	if err != nil {
		return nil, nil, err
	}
	defer ix.Close()
	hist := &historyLogs{}
	for _, b := range blocks {
		logs, err := layout(chainID, b)
		if err != nil {
			return nil, nil, err
		}
		prices.swapped(logs)
		mb := mapping.Block{Number: b.number, Timestamp: uint64(b.time), Hash: blockHash(chainID, b.number), ParentHash: blockHash(chainID, b.number-1)}
		if _, err := ix.Block(context.Background(), mb, logs, nil); err != nil {
			return nil, nil, err
		}
		ix.store.SetHead(graphnode.Block{Number: b.number, Hash: mb.Hash.Hex(), Timestamp: mb.Timestamp})
		hist.add(b, logs)
	}
	if err := complaints(ix.logs); err != nil {
		return nil, nil, err
	}
	ix.store.SetHead(head)
	return ix.store, hist.History(), nil
}

// historyLogs gathers the history's logs, which the node answers
// eth_getLogs from (the candles read a pool's
// swaps from the node, as from a real one).
type historyLogs struct {
	logs []types.Log
}

func (h *historyLogs) add(b *block, logs []mapping.BlockLog) {
	for _, l := range logs {
		lg := l.Log
		lg.BlockTimestamp = uint64(b.time)
		h.logs = append(h.logs, lg)
	}
}

// History is the node's view of the history's logs.
func (h *historyLogs) History() *chaintest.History {
	return &chaintest.History{Logs: h.logs}
}

// swapperOf is the chain's Uniswap V3 swapper (internal/config), which the
// scenarios' exercises route through.
func swapperOf(chainID uint64) common.Address {
	ch := config.Default().Chains[chainID]
	if ch == nil {
		return common.Address{}
	}
	ids := make([]string, 0, len(ch.Swappers))
	for id, sw := range ch.Swappers {
		if sw.Kind == config.SwapperUniswapV3 {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return common.Address{}
	}
	return ch.Swappers[ids[0]].Address
}

// place puts the transactions into blocks (a transaction's stated block, or
// the block of its time), keeping their order within a block by time, then
// as laid out.
func (s *Scenario) place(blocks []*block, txs []*tx) ([]*block, error) {
	byNumber := map[uint64]*block{}
	for _, b := range blocks {
		byNumber[b.number] = b
	}
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].ts < txs[j].ts })
	for _, t := range txs {
		n := t.block
		if n == 0 {
			var err error
			if n, err = s.blockAt(t.ts); err != nil {
				return nil, err
			}
		}
		b := byNumber[n]
		if b == nil {
			b = &block{number: n, time: t.ts}
			byNumber[n] = b
			blocks = append(blocks, b)
		}
		b.txs = append(b.txs, t)
	}
	sort.Slice(blocks, func(i, j int) bool { return blocks[i].number < blocks[j].number })
	return blocks, nil
}

func blockHash(chainID, n uint64) common.Hash {
	return crypto.Keccak256Hash([]byte("scenario block"), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, chainID), n))
}

// txHash is the hash of a transaction the scenario states none for.
func txHash(chainID, n uint64, i int) common.Hash {
	return crypto.Keccak256Hash([]byte("scenario tx"), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, chainID), n), uint64(i)))
}

// indexer is the compiled mappings over an in-memory store, with what
// they logged.
type indexer struct {
	*mapping.Subgraph
	store *graphnode.Store
	logs  []mapping.Log
}

// poolPrices are the pools' slot0 words (sqrtPriceX96, tick) at the end of
// the block being indexed: its last Swap's, and those of the blocks before
// it. The node holds the head's state only; a mapping's slot0() asks for
// the state at its event's block, as Graph Node's eth_call does.
type poolPrices map[common.Address][2][]byte

// swapTopics are the topics of Uniswap V3's Swap and PancakeSwap V3's (two
// protocol-fee fields more): both carry sqrtPriceX96 and tick in their
// data's third and fifth words.
var swapTopics = map[common.Hash]bool{
	crypto.Keccak256Hash([]byte("Swap(address,address,int256,int256,uint160,uint128,int24)")):                 true,
	crypto.Keccak256Hash([]byte("Swap(address,address,int256,int256,uint160,uint128,int24,uint128,uint128)")): true,
}

// swapped takes a block's Swap logs into the pools' prices.
func (p poolPrices) swapped(logs []mapping.BlockLog) {
	for _, l := range logs {
		if len(l.Log.Topics) > 0 && swapTopics[l.Log.Topics[0]] && len(l.Log.Data) >= 5*32 {
			p[l.Log.Address] = [2][]byte{l.Log.Data[64:96], l.Log.Data[128:160]}
		}
	}
}

// slot0Selector is slot0()'s, the same in every pool layout.
var slot0Selector = crypto.Keccak256([]byte("slot0()"))[:4]

// at answers slot0() of a pool that swapped by the end of the block: the
// head's answer (its layout's words) with the block's price and tick.
func (p poolPrices) at(to common.Address, data, head []byte) []byte {
	w, ok := p[to]
	if !ok || !bytes.Equal(data, slot0Selector) || len(head) < 64 {
		return head
	}
	out := bytes.Clone(head)
	copy(out[0:32], w[0])
	copy(out[32:64], w[1])
	return out
}

// newIndexer indexes with the network's built manifest from its static
// data sources' start blocks, eth_calls answered by node, slot0() at the
// block's prices.
func newIndexer(net *network, node *chaintest.Node, prices poolPrices) (*indexer, error) {
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		return nil, err
	}
	m, err := mapping.Network(net.name)
	if err != nil {
		return nil, err
	}
	call := func(_ context.Context, to common.Address, data []byte, _ mapping.Block) ([]byte, bool, error) {
		ret, ok := node.Call(to, data)
		if ok {
			ret = prices.at(to, data, ret)
		}
		return ret, !ok, nil
	}
	ix := &indexer{store: graphnode.NewStore(s)}
	ix.Subgraph = mapping.NewSubgraph(m, mapping.Memory(ix.store), call)
	ix.OnLog = func(_, _ string, l mapping.Log) { ix.logs = append(ix.logs, l) }
	for a, src := range net.static {
		if err := ix.Watch(context.Background(), mapping.Watched{Address: a, Name: src.name, Start: src.start}); err != nil {
			ix.Close()
			return nil, err
		}
	}
	return ix, nil
}

// complaints fails on any warning or error the mappings logged (an event
// naming a range never deposited, an option unknown to its market: a
// history the contracts could not have emitted), except the one the
// history means to cause: OtherApp's discovery as no market.
func complaints(logs []mapping.Log) error {
	other := strings.ToLower(OtherApp.Hex())
	for _, l := range logs {
		if l.Level <= 2 && !strings.Contains(l.Message, other) {
			return fmt.Errorf("the mappings logged: %s", l.Message)
		}
	}
	return nil
}

// layout writes the block's logs: indices across the block, a receipt per
// transaction holding its logs.
func layout(chainID uint64, b *block) (all []mapping.BlockLog, err error) {
	defer func() {
		if p := recover(); p != nil {
			pe, ok := p.(packError)
			if !ok {
				panic(p)
			}
			err = pe.err
		}
	}()
	bh := blockHash(chainID, b.number)
	for i, t := range b.txs {
		lgs, err := t.build(b.number)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", b.number, err)
		}
		hash := t.hash
		if hash == (common.Hash{}) {
			hash = txHash(chainID, b.number, i)
		}
		rc := &types.Receipt{Status: 1, TxHash: hash, BlockHash: bh, BlockNumber: new(big.Int).SetUint64(b.number), TransactionIndex: uint(i)}
		to := t.to
		mtx := mapping.Tx{Hash: hash, Index: uint64(i), From: t.from, To: &to}
		txOf := func(_ context.Context, receipt bool) (mapping.Tx, error) {
			out := mtx
			if receipt {
				out.Receipt = rc
			}
			return out, nil
		}
		for _, l := range lgs {
			l.BlockNumber, l.BlockHash, l.TxHash, l.TxIndex, l.Index = b.number, bh, hash, uint(i), uint(len(all))
			lc := l
			rc.Logs = append(rc.Logs, &lc)
			all = append(all, mapping.BlockLog{Log: l, Tx: txOf})
		}
	}
	return all, nil
}
