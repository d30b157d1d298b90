package chain

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// A prepared transaction is simulated at the chain's head, not at the
// answer's pinned block, in one round trip that also names the head's
// block (on Arbitrum by ArbSys's number, which is the chain's own).
func TestSimulateAtHeadNamesTheHead(t *testing.T) {
	for _, arbitrum := range []bool{false, true} {
		n := positionNode(t)
		if arbitrum {
			n.ArbitrumL1Block = 21_000_000
		}
		r := testReader(t, n)
		ctx, pin := block.With(context.Background(), 401_999_000) // the answer's block, behind the head
		pin.Resolve(block.Ref{Number: 401_999_000})
		before := n.Requests()
		ref, err := r.SimulateAtHead(ctx, common.HexToAddress("0xA11CE00000000000000000000000000000000001"), tMarket, pack(contracts.OptionMarketV2, "name"))
		if err != nil {
			t.Fatal(err)
		}
		want := block.Ref{Number: n.BlockNumber, Hash: strings.ToLower(n.HashOf(n.BlockNumber).Hex()), Timestamp: int64(n.BlockTimestamp)}
		if ref != want || n.Requests()-before != 1 || n.CallBlocks["latest"] != 2 || len(n.CallBlocks) != 1 {
			t.Errorf("arbitrum %v: simulated at %+v (want %+v) in %d round trips, calls at %v", arbitrum, ref, want, n.Requests()-before, n.CallBlocks)
		}
		// A revert names the contract's error, and still the block.
		ref, err = r.SimulateAtHead(ctx, common.Address{}, tMarket, []byte{0xde, 0xad, 0xbe, 0xef})
		var rev *RevertError
		if !errors.As(err, &rev) || ref != want {
			t.Errorf("arbitrum %v: a reverting call: %v at %+v", arbitrum, err, ref)
		}
	}
}

// A block landing after the batch's calls and before its header read:
// the simulation is asked again at the header's block.
func TestSimulateAtHeadAgainWhenABlockLands(t *testing.T) {
	n := positionNode(t)
	c, err := rpc.DialOptions(context.Background(), "http://node.invalid", rpc.WithHTTPClient(&http.Client{Transport: inProcess{n}}))
	if err != nil {
		t.Fatal(err)
	}
	r := newTestReader(t, movingHead{c, n}, n.Multicall3)
	ref, err := r.SimulateAtHead(context.Background(), common.Address{}, tMarket, pack(contracts.OptionMarketV2, "name"))
	if err != nil {
		t.Fatal(err)
	}
	if ref.Number != 402_000_001 || n.CallBlocks["latest"] != 2 || n.CallBlocks[hexutil.EncodeUint64(402_000_001)] != 1 {
		t.Errorf("simulated at %+v, calls at %v: want again at the header's block 402000001", ref, n.CallBlocks)
	}
}
