package chain

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// A page of 400 holdings over a V2 and a V1 handler: the pools' tokens in
// one round trip the first time (a ChainedRead), then every figure in one
// round trip (three aggregate3 calls in one JSON-RPC batch), each decoded
// where it belongs: V1 without reservations, V2 with the user's and the
// cooldown.
func TestHoldingsReadAPageInOneRoundTrip(t *testing.T) {
	n := testNode(t)
	n.BlockNumber, n.BlockTimestamp = 777, 1_700_000_000
	v2, v1 := common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116"), common.HexToAddress("0xe11d346757d052214686bCbC860C94363AfB4a9A")
	user := common.HexToAddress("0xCA20100000000000000000000000000000000003")
	n.Handlers[v2] = &chaintest.Handler{Version: 2, LP: &chaintest.HandlerLP{LockedBlockDuration: 100, ReserveCooldown: 21600}}
	n.Handlers[v1] = &chaintest.Handler{Version: 1, LP: &chaintest.HandlerLP{LockedBlockDuration: 50}}
	var keys []HoldingKey
	for i := range 400 {
		h := v2
		if i%2 == 1 {
			h = v1
		}
		id := big.NewInt(int64(1000 + i))
		rg := n.Handlers[h].LP.Range(id)
		rg.TotalLiquidity.SetInt64(int64(10_000 + i))
		rg.TotalSupply.SetInt64(9_000)
		rg.LiquidityUsed.SetInt64(int64(i))
		rg.LastDonation, rg.DonatedLiquidity = uint64(700+i%3), big.NewInt(int64(i%5))
		rg.ReservedLiquidity.SetInt64(int64(2 * i))
		rg.Shares[user] = big.NewInt(int64(i + 1))
		rg.Reserved[user] = chaintest.Reservation{Liquidity: big.NewInt(int64(i)), LastReserve: uint64(1_600_000_000 + i)}
		keys = append(keys, HoldingKey{Handler: h, Pool: tPool, TokenID: id})
	}
	r := NewHoldingsReader(testReader(t, n))
	for round, want := range []int64{2, 1} {
		before := n.Requests()
		v, err := r.Positions(context.Background(), user, keys)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.Requests() - before; got != want {
			t.Errorf("read %d: %d HTTP requests, want %d", round, got, want)
		}
		if v.Block != 777 || v.Timestamp != 1_700_000_000 || v.Pools[tPool].Token0.Symbol != "WETH" || v.Pools[tPool].Token1.Decimals != 6 ||
			v.Pools[tPool].SqrtPriceX96.Cmp(n.Pools[tPool].SqrtPriceX96) != 0 {
			t.Fatalf("head %d/%d, pool %+v", v.Block, v.Timestamp, v.Pools[tPool])
		}
		for i, p := range v.Positions {
			isV1 := i%2 == 1
			if p.Shares.Int64() != int64(i+1) || p.Range.TotalLiquidity.Int64() != int64(10_000+i) || p.Range.LiquidityUsed.Int64() != int64(i) ||
				p.Range.LastDonation != uint64(700+i%3) || p.Range.DonatedLiquidity.Int64() != int64(i%5) || p.V2 == isV1 {
				t.Fatalf("holding %d: %+v", i, p)
			}
			if isV1 && (p.Range.ReservedLiquidity != nil || p.Reserved != nil || p.LockedBlockDuration != 50) {
				t.Fatalf("V1 holding %d: %+v", i, p)
			}
			if !isV1 && (p.Range.ReservedLiquidity.Int64() != int64(2*i) || p.Reserved.Int64() != int64(i) ||
				p.LastReserve != uint64(1_600_000_000+i) || p.ReserveCooldown != 21600 || p.LockedBlockDuration != 100) {
				t.Fatalf("V2 holding %d: %+v", i, p)
			}
		}
	}
}

// A contract that does not answer as a handler is the node's garbage
// naming it (502 RPC_ERROR), not an internal error.
func TestHoldingsOfANonHandler(t *testing.T) {
	n := testNode(t)
	notHandler := common.HexToAddress("0x000000000000000000000000000000000000dEaD")
	_, err := NewHoldingsReader(testReader(t, n)).Positions(context.Background(), common.Address{1}, []HoldingKey{{Handler: notHandler, Pool: tPool, TokenID: big.NewInt(1)}})
	if p := problem.As(err); p.Code != problem.RPCError {
		t.Fatalf("%v", err)
	}
}

// The block a holdings read names is the chain's own (contract-behaviour
// M22): on Arbitrum block.number is an estimate of Ethereum's block, which
// the donation lock counts in (Block), while the answer's block is ArbSys's
// (ChainBlock); elsewhere the two are one.
func TestHoldingsNameTheChainsBlock(t *testing.T) {
	for _, arbitrum := range []bool{false, true} {
		n := testNode(t)
		n.BlockNumber = 402_000_000
		evm := n.BlockNumber
		if arbitrum {
			n.ArbitrumL1Block, evm = 21_000_000, 21_000_000
		}
		h := common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
		n.Handlers[h] = &chaintest.Handler{Version: 2, LP: &chaintest.HandlerLP{LockedBlockDuration: 100, ReserveCooldown: 21600}}
		v, err := NewHoldingsReader(testReader(t, n)).Positions(context.Background(), common.Address{1}, []HoldingKey{{Handler: h, Pool: tPool, TokenID: big.NewInt(1)}})
		if err != nil {
			t.Fatal(err)
		}
		if v.ChainBlock != 402_000_000 || v.Block != evm {
			t.Errorf("arbitrum %v: chain block %d, block.number %d; want 402000000, %d", arbitrum, v.ChainBlock, v.Block, evm)
		}
	}
}

// A pool whose slot0 reverts is the node's failure naming it (502
// RPC_ERROR), not an internal error (it was a bare error: a 500).
func TestHoldingsOfAPoolWhoseSlot0Reverts(t *testing.T) {
	n := testNode(t)
	v2 := common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	n.Handlers[v2] = &chaintest.Handler{Version: 2, LP: &chaintest.HandlerLP{LockedBlockDuration: 100, ReserveCooldown: 21600}}
	n.Pools[tPool].Slot0Reverts = true
	_, err := NewHoldingsReader(testReader(t, n)).Positions(context.Background(), common.Address{1}, []HoldingKey{{Handler: v2, Pool: tPool, TokenID: big.NewInt(1)}})
	if p := problem.As(err); p.Code != problem.RPCError || !strings.Contains(err.Error(), tPool.Hex()) {
		t.Fatalf("%v", err)
	}
}
