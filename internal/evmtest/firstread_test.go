package evmtest

import (
	"context"
	"math/big"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// countingRPC counts the reader's plain requests and batches.
type countingRPC struct {
	*rpc.Client
	plain, batches atomic.Int64
}

func (c *countingRPC) CallContext(ctx context.Context, result any, method string, args ...any) error {
	c.plain.Add(1)
	return c.Client.CallContext(ctx, result, method, args...)
}

func (c *countingRPC) BatchCallContext(ctx context.Context, b []rpc.BatchElem) error {
	c.batches.Add(1)
	return c.Client.BatchCallContext(ctx, b)
}

// On a real EVM and the real Multicall3, a prepared exercise's first read
// at the head (the position) learns its block in its own round trip: the
// calls' block number (Multicall3's getBlockNumber; ArbSys's address holds
// no code here) is the head header's, so neither a header read first nor
// a second read is needed, and the answer is pinned to that header.
func TestFirstReadAtTheHeadIsNumberedByTheEVM(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	mc := p.DeployMulticall3()
	c := &countingRPC{Client: p.Chain.RPC()}
	r := testenv.NewReader(t, c, mc)
	var head struct {
		Number hexutil.Uint64 `json:"number"`
		Hash   string         `json:"hash"`
	}
	if err := p.Chain.RPC().CallContext(context.Background(), &head, "eth_getBlockByNumber", "latest", false); err != nil {
		t.Fatal(err)
	}
	ctx, pin := block.With(context.Background(), 0)
	// An option never minted: the read fails on its owner, after the
	// batch has pinned the answer.
	_, _ = r.Position(ctx, p.Market, big.NewInt(424242))
	ref, ok := pin.Resolved()
	if !ok || ref.Number != uint64(head.Number) || ref.Hash != strings.ToLower(head.Hash) || ref.Number < 2 {
		t.Fatalf("pinned to %+v (%v), want the head %d %s", ref, ok, head.Number, head.Hash)
	}
	if c.batches.Load() != 1 || c.plain.Load() != 0 {
		t.Errorf("%d batches and %d plain requests, want the one batch", c.batches.Load(), c.plain.Load())
	}
}
