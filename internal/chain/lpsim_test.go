package chain

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
)

// The head an LP prepare is simulated at is the chain's, not the answer's
// pinned block, read in one round trip: its header, and the block number
// its code sees (on Arbitrum the estimate of Ethereum's block, which a
// handler's donation lock counts in, while the header's is the chain's own).
func TestReadHeadNamesTheHead(t *testing.T) {
	for _, arbitrum := range []bool{false, true} {
		n := positionNode(t)
		evm := n.BlockNumber
		if arbitrum {
			n.ArbitrumL1Block, evm = 21_000_000, 21_000_000
		}
		r := testReader(t, n)
		ctx, pin := block.With(context.Background(), 401_999_000) // the answer's block, behind the head
		pin.Resolve(block.Ref{Number: 401_999_000})
		before := n.Requests()
		h, err := r.ReadHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := block.Ref{Number: n.BlockNumber, Hash: strings.ToLower(n.HashOf(n.BlockNumber).Hex()), Timestamp: int64(n.BlockTimestamp)}
		if h.Ref != want || h.EVMNumber != evm || n.Requests()-before != 1 || n.CallBlocks["latest"] != 1 || len(n.CallBlocks) != 1 {
			t.Errorf("arbitrum %v: head %+v (want %+v, block.number %d) in %d round trips, calls at %v", arbitrum, h, want, evm, n.Requests()-before, n.CallBlocks)
		}
	}
}

// A block lands between the batch's eth_call and its header read
// (pin_test.go's movingHead): the numbers are asked again at the header's
// block.
func TestReadHeadAgainWhenABlockLands(t *testing.T) {
	n := positionNode(t)
	c, err := rpc.DialOptions(context.Background(), "http://node.invalid", rpc.WithHTTPClient(&http.Client{Transport: inProcess{n}}))
	if err != nil {
		t.Fatal(err)
	}
	r := newTestReader(t, movingHead{c, n}, n.Multicall3)
	head := n.BlockNumber + 1
	h, err := r.ReadHead(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h.Number != head || h.EVMNumber != head || n.CallBlocks["latest"] != 1 || n.CallBlocks[hexutil.EncodeUint64(head)] != 1 {
		t.Errorf("head %+v, calls at %v: want the numbers again at the header's block %d", h, n.CallBlocks, head)
	}
}
