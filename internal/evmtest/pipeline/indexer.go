// Package pipeline runs the options subgraph's compiled mappings over
// the logs of transactions executed on the simulated EVM (the test protocol
// of internal/evmtest/protocoltest next to real Uniswap V3), the way Graph
// Node indexes a chain: block by block, each block's logs in log-index
// order, each routed by address and topic0 to the handler the built manifest
// names, eth_calls answered by the chain at the trigger's block. The store it
// fills is then checked against the contracts' own getters. It is a test
// harness, not an indexer: one chain, from block 0, no reorgs.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Indexer feeds a protocol's logs to the compiled mappings
// (mapping.Subgraph routes them) into an in-memory store.
type Indexer struct {
	t     testing.TB
	chain *protocoltest.Chain
	Store *graphnode.Store
	ix    *mapping.Subgraph
	next  uint64
}

// New indexes the protocol as the manifest does a network: its position
// manager is the one static data source (the manifest's PositionManager, at
// another address; the mappings read the event's own address), and every
// handler and market it whitelists is discovered and indexed from its
// template, with the pools they name.
func New(t testing.TB, p *protocoltest.Protocol) *Indexer {
	t.Helper()
	schema, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mapping.Network("arbitrum-one")
	if err != nil {
		t.Fatal(err)
	}
	ix := &Indexer{t: t, chain: p.Chain, Store: graphnode.NewStore(schema)}
	ix.ix = mapping.NewSubgraph(m, mapping.Memory(ix.Store), ix.call)
	t.Cleanup(ix.ix.Close)
	ix.Watch(p.PositionManager, "PositionManager")
	return ix
}

// Watch indexes addr with the named data source or template.
func (ix *Indexer) Watch(addr common.Address, name string) {
	ix.t.Helper()
	if err := ix.ix.Watch(context.Background(), mapping.Watched{Address: addr, Name: name}); err != nil {
		ix.t.Fatal(err)
	}
}

// call answers ethereum.call with the simulated chain's state at the end of
// the trigger's block, as Graph Node calls at the block being indexed.
func (ix *Indexer) call(ctx context.Context, to common.Address, data []byte, at mapping.Block) ([]byte, bool, error) {
	out, err := ix.chain.Client().CallContract(ctx, ethereum.CallMsg{To: &to, Data: data}, new(big.Int).SetUint64(at.Number))
	if err != nil {
		var de rpc.DataError
		if errors.As(err, &de) || strings.Contains(err.Error(), "execution reverted") {
			return nil, true, nil
		}
		return nil, false, err
	}
	return out, false, nil
}

// Sync indexes every block mined since the last Sync.
func (ix *Indexer) Sync() {
	ix.t.Helper()
	head := ix.chain.BlockNumber()
	for ; ix.next <= head; ix.next++ {
		ix.block(ix.next)
	}
}

func (ix *Indexer) block(n uint64) {
	ix.t.Helper()
	ctx := context.Background()
	bn := new(big.Int).SetUint64(n)
	header, err := ix.chain.Client().HeaderByNumber(ctx, bn)
	if err != nil {
		ix.t.Fatal(err)
	}
	logs, err := ix.chain.Client().FilterLogs(ctx, ethereum.FilterQuery{FromBlock: bn, ToBlock: bn})
	if err != nil {
		ix.t.Fatal(err)
	}
	sort.Slice(logs, func(i, j int) bool { return logs[i].Index < logs[j].Index })
	in := make([]mapping.BlockLog, len(logs))
	for i, lg := range logs {
		in[i] = mapping.BlockLog{Log: lg, Tx: func(ctx context.Context, receipt bool) (mapping.Tx, error) {
			tx := ix.tx(lg)
			if receipt {
				rc, err := ix.chain.Client().TransactionReceipt(ctx, lg.TxHash)
				if err != nil {
					return tx, err
				}
				tx.Receipt = rc
			}
			return tx, nil
		}}
	}
	block := mapping.Block{Number: n, Timestamp: header.Time, Hash: header.Hash(), ParentHash: header.ParentHash}
	if _, err := ix.ix.Block(ctx, block, in, nil); err != nil {
		ix.t.Fatal(err)
	}
	ix.Store.SetHead(graphnode.Block{Number: n, Hash: header.Hash().Hex(), Timestamp: header.Time})
}

func (ix *Indexer) tx(lg types.Log) mapping.Tx {
	ix.t.Helper()
	ctx := context.Background()
	tx, _, err := ix.chain.Client().TransactionByHash(ctx, lg.TxHash)
	if err != nil {
		ix.t.Fatal(err)
	}
	from, err := types.Sender(types.LatestSignerForChainID(tx.ChainId()), tx)
	if err != nil {
		ix.t.Fatal(err)
	}
	return mapping.Tx{Hash: lg.TxHash, Index: uint64(lg.TxIndex), From: from, To: tx.To(), Input: tx.Data()}
}

// String lists the store's entity counts, for failure messages.
func (ix *Indexer) String() string {
	var b strings.Builder
	for _, typ := range []string{"Strike", "Option", "Exercise", "Pool", "Market"} {
		fmt.Fprintf(&b, "%s:%d ", typ, len(ix.Store.All(typ)))
	}
	return b.String()
}
