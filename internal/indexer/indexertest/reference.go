package indexertest

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Reference indexes the chain as it is now straight into the emulator's
// in-memory store: every block with transactions, all its logs handed to
// the compiled mappings (mapping.Subgraph) with the data sources given,
// eth_calls answered by Call. It is what an indexer reading the chain
// through its node must arrive at.
func (c *Chain) Reference(sources []mapping.Watched) (*graphnode.Store, error) {
	schema, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		return nil, err
	}
	m, err := mapping.ForChain(c.ID)
	if err != nil {
		return nil, err
	}
	st := graphnode.NewStore(schema)
	call := func(_ context.Context, to common.Address, data []byte, at mapping.Block) ([]byte, bool, error) {
		if c.Call == nil {
			return nil, true, nil
		}
		ret, reverted := c.Call(to, data, at.Number)
		return ret, reverted, nil
	}
	sg := mapping.NewSubgraph(m, mapping.Memory(st), call)
	defer sg.Close()
	ctx := context.Background()
	for _, w := range sources {
		if err := sg.Watch(ctx, w); err != nil {
			return nil, err
		}
	}
	c.mu.Lock()
	blocks := append([]uint64(nil), c.sorted...)
	c.mu.Unlock()
	for _, n := range blocks {
		if err := c.referenceBlock(ctx, sg, st, n); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (c *Chain) referenceBlock(ctx context.Context, sg *mapping.Subgraph, st *graphnode.Store, n uint64) error {
	c.mu.Lock()
	logs := c.logsOf(n)
	txs := c.txs[n]
	bh, parent := c.hash(n), c.hash(n-1)
	c.mu.Unlock()
	in := make([]mapping.BlockLog, len(logs))
	for i, lg := range logs {
		t := txs[lg.TxIndex]
		to := t.To
		in[i] = mapping.BlockLog{Log: lg, Tx: func(_ context.Context, receipt bool) (mapping.Tx, error) {
			out := mapping.Tx{Hash: lg.TxHash, Index: uint64(lg.TxIndex), From: t.From, To: &to, Input: []byte{}}
			if receipt {
				out.Receipt = c.typedReceipt(n, int(lg.TxIndex))
			}
			return out, nil
		}}
	}
	b := mapping.Block{Number: n, Hash: bh, ParentHash: parent, Timestamp: Time(n)}
	if _, err := sg.Block(ctx, b, in, nil); err != nil {
		return err
	}
	st.SetHead(graphnode.Block{Number: n, Hash: bh.Hex(), Timestamp: Time(n), ParentHash: parent.Hex()})
	return nil
}
