package chain

import (
	"context"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// positionNode is testNode with option 7 (two legs) minted.
func positionNode(t *testing.T) *chaintest.Node {
	n := testNode(t)
	n.Markets[tMarket].Options = map[uint64]*chaintest.Option{7: {Owner: common.HexToAddress("0xA11CE00000000000000000000000000000000001"),
		IsCall: true, TickLower: -196400, TickUpper: -196380, Expiry: 1 << 40, Legs: []chaintest.Leg{
			{Handler: common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116"), Pool: tPool, TickLower: -196400, TickUpper: -196390, Liquidity: big.NewInt(1000)},
			{Handler: common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116"), Pool: tPool, TickLower: -196390, TickUpper: -196380, Liquidity: big.NewInt(2000)}}}}
	n.BlockNumber, n.BlockTimestamp = 402_000_000, 1_760_000_000
	return n
}

// A prepared exercise's first read (the position, at the head) learns the
// answer's block in its own round trip: the head's header and the calls,
// numbered by the block they ran at, in one batch. On a node numbering as
// Arbitrum does, where block.number is Ethereum's, ArbSys gives the
// number; a number that is not the header's would cost a second read.
func TestFirstReadLearnsItsBlockInItsOwnRoundTrip(t *testing.T) {
	for _, arbitrum := range []bool{false, true} {
		n := positionNode(t)
		if arbitrum {
			n.ArbitrumL1Block = 21_000_000
		}
		r := testReader(t, n)
		ctx, pin := block.With(context.Background(), 0)
		before := n.Requests()
		pos, err := r.Position(ctx, tMarket, big.NewInt(7))
		if err != nil {
			t.Fatal(err)
		}
		ref, ok := pin.Resolved()
		want := block.Ref{Number: n.BlockNumber, Hash: strings.ToLower(n.HashOf(n.BlockNumber).Hex()), Timestamp: int64(n.BlockTimestamp)}
		if !ok || ref != want || len(pos.Legs) != 2 {
			t.Errorf("arbitrum %v: pinned to %+v (%v), want %+v; %d legs", arbitrum, ref, ok, want, len(pos.Legs))
		}
		if req := n.Requests() - before; req != 1 {
			t.Errorf("arbitrum %v: %d round trips, want 1", arbitrum, req)
		}
		// Later reads of the answer are at its block.
		if _, err := r.Position(ctx, tMarket, big.NewInt(7)); err != nil {
			t.Fatal(err)
		}
		if n.CallBlocks["latest"] != 1 || n.CallBlocks[hexutil.EncodeUint64(want.Number)] != 1 {
			t.Errorf("arbitrum %v: eth_calls at %v, want the first at latest, the next at the block", arbitrum, n.CallBlocks)
		}
	}
}

// movingHead lands a block between the batch's eth_calls and its header
// read, as a node (or a load balancer's next node) may.
type movingHead struct {
	*rpc.Client
	n *chaintest.Node
}

func (m movingHead) BatchCallContext(ctx context.Context, b []rpc.BatchElem) error {
	if len(b) < 2 || b[0].Method != "eth_getBlockByNumber" {
		return m.Client.BatchCallContext(ctx, b)
	}
	if err := m.Client.BatchCallContext(ctx, b[1:]); err != nil {
		return err
	}
	m.n.Lock()
	m.n.BlockNumber++
	m.n.BlockTimestamp++
	m.n.Unlock()
	return m.Client.BatchCallContext(ctx, b[:1])
}

// When the calls ran at another block than the header names, the answer
// takes the header's block and reads the calls again there.
func TestFirstReadAtAnotherBlockIsReadAgain(t *testing.T) {
	n := positionNode(t)
	c, err := rpc.DialOptions(context.Background(), "http://node.invalid", rpc.WithHTTPClient(&http.Client{Transport: inProcess{n}}))
	if err != nil {
		t.Fatal(err)
	}
	r := newTestReader(t, movingHead{c, n}, n.Multicall3)
	ctx, pin := block.With(context.Background(), 0)
	if _, err := r.Position(ctx, tMarket, big.NewInt(7)); err != nil {
		t.Fatal(err)
	}
	ref, _ := pin.Resolved()
	if ref.Number != 402_000_001 || ref.Hash != strings.ToLower(n.HashOf(402_000_001).Hex()) {
		t.Errorf("pinned to %+v, want the header's block 402000001", ref)
	}
	if n.CallBlocks["latest"] != 1 || n.CallBlocks[hexutil.EncodeUint64(402_000_001)] != 1 {
		t.Errorf("eth_calls at %v, want latest, then the header's block", n.CallBlocks)
	}
}

// A header is the block asked for, or the node's garbage (502 RPC_ERROR),
// whichever path read it (a block asked for, the head a first read pins
// to): another block's number, a hash that is not 32 bytes, a time past
// any sane bound (2^64-1 was shown as -1).
func TestHeadersAreCheckedAgainstTheBlockAsked(t *testing.T) {
	for name, lie := range map[string]func(tag string, h map[string]any){
		"another block": func(tag string, h map[string]any) {
			if tag != "latest" {
				n, _ := hexutil.DecodeUint64(tag)
				h["number"] = hexutil.EncodeUint64(n - 1)
			}
		},
		"time 2^64-1": func(_ string, h map[string]any) { h["timestamp"] = "0xffffffffffffffff" },
		"time 2^63":   func(_ string, h map[string]any) { h["timestamp"] = "0x8000000000000000" },
		"short hash":  func(_ string, h map[string]any) { h["hash"] = "0x1234" },
	} {
		n := positionNode(t)
		n.HeaderRewrite = lie
		r := testReader(t, n)
		if ref, err := r.HeaderAt(context.Background(), n.BlockNumber-3); problem.As(err).Code != problem.RPCError {
			t.Errorf("%s: block asked: %+v %v, want RPC_ERROR", name, ref, err)
		}
		if name == "another block" {
			continue // "latest" names no number to contradict
		}
		if ref, err := r.Header(context.Background(), "latest"); problem.As(err).Code != problem.RPCError {
			t.Errorf("%s: head: %+v %v, want RPC_ERROR", name, ref, err)
		}
		ctx, _ := block.With(context.Background(), 0)
		if _, err := r.Position(ctx, tMarket, big.NewInt(7)); problem.As(err).Code != problem.RPCError {
			t.Errorf("%s: a first read pinning the head: %v, want RPC_ERROR", name, err)
		}
	}
}

// A pool whose slot0 reverts answers the same class of error whether
// slot0 is the answer's first read (the head's header in its batch) or
// not: it was a bare error there, answered as a 500.
func TestSlot0RevertIsOneErrorOnEitherPath(t *testing.T) {
	n := testNode(t)
	r := testReader(t, n)
	if _, _, err := r.MarketSnapshot(context.Background(), tMarket); err != nil {
		t.Fatal(err) // the immutables cached: the next snapshot reads slot0 alone
	}
	n.Pools[tPool].Slot0Reverts = true
	codes := map[bool]string{}
	for _, first := range []bool{true, false} {
		ctx, pin := block.With(context.Background(), 0)
		if !first {
			pin.Resolve(block.Ref{Number: n.BlockNumber, Hash: strings.ToLower(n.HashOf(n.BlockNumber).Hex()), Timestamp: int64(n.BlockTimestamp)})
		}
		_, _, err := r.MarketSnapshot(ctx, tMarket)
		codes[first] = problem.As(err).Code.Name()
	}
	if codes[true] != codes[false] || codes[true] != "RPC_ERROR" {
		t.Errorf("slot0 reverting: first read %s, later read %s; want RPC_ERROR both", codes[true], codes[false])
	}
}
