package mapping_test

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

// An Arbitrum handler's range, as the handler logs it.
var (
	uniHandler = common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116")
	wethUSDC   = common.HexToAddress("0xC6962004f452bE9203591991D15f6b388e09E8D0")
	hook24h    = common.HexToAddress("0x8c30c7F03421D2C9A0354e93c23014BF6C465a79")
	lp         = common.HexToAddress("0x1111111111111111111111111111111111111111")
)

const (
	hV2      = "UniswapV3SingleTickLiquidityHandlerV2"
	mintedV2 = "LogMintedPosition(uint256,uint128,address,address,address,int24,int24)"
)

// liquidityEvents runs a handler's deposit, use, donation and unuse
// through c, several times over; one transaction's large input makes the
// instance's memory grow.
func liquidityEvents(t *testing.T, c *mappingtest.Chain) {
	const tl, tu = -200010, -200000
	id := mappingtest.PositionID(t, uniHandler, wethUSDC, hook24h, tl, tu)
	for i := range int64(4) {
		c.Next(uint64(1000+i), uint64(1_700_000_000+i), lp)
		if i == 1 {
			c.Tx.Input = bytes.Repeat([]byte{0xab}, 300_000)
		}
		c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
			id, big.NewInt(1_000_000+i), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
		c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, big.NewInt(300_000))
		c.Emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(1234+i))
		c.Emit("HandlerV2_uniswap", hV2, "LogUnusePosition(uint256,uint128)", "handleUnusePosition", uniHandler, id, big.NewInt(100_000))
	}
}

// state is an instance's memory and its mutable globals' values.
func state(t *testing.T, h *mapping.Host) ([]byte, []uint64) {
	t.Helper()
	mod := mapping.Instance(h)
	buf, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory unreadable")
	}
	var globals []uint64
	for _, n := range mapping.Globals(h) {
		globals = append(globals, mod.ExportedGlobal(n).Get())
	}
	return append([]byte(nil), buf...), globals
}

// After triggers, the instance a host keeps is reset to exactly a fresh
// instance's state: the same memory (pages grown since all zero) and the
// same values in every mutable global. A reset that skipped the globals,
// or the memory past the first pages, or part of it, fails here.
func TestResetInstanceIsFresh(t *testing.T) {
	c := mappingtest.New(t, nil)
	liquidityEvents(t, c)
	h := c.Hosts["HandlerV2_uniswap"]
	if !mapping.Resets(h) || mapping.Instance(h) == nil {
		t.Fatal("the host keeps no instance to reset")
	}
	if len(mapping.Globals(h)) == 0 {
		t.Fatal("no mutable global found to restore")
	}
	dirtyMem, dirtyGlobals := state(t, h)
	kept := mapping.Instance(h)
	if err := mapping.Ready(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	if mapping.Instance(h) != kept {
		t.Fatal("ready made a new instance: the reset is not what is tested")
	}
	gotMem, gotGlobals := state(t, h)
	mapping.Release(h)
	if err := mapping.Instantiate(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	wantMem, wantGlobals := state(t, h)
	if bytes.Equal(dirtyMem[:len(wantMem)], wantMem) && slices.Equal(dirtyGlobals, wantGlobals) {
		t.Fatal("the triggers left the instance as fresh: the test proves nothing")
	}
	if !slices.Equal(gotGlobals, wantGlobals) {
		t.Errorf("globals after a reset %v, fresh %v", gotGlobals, wantGlobals)
	}
	if len(gotMem) < len(wantMem) || !bytes.Equal(gotMem[:len(wantMem)], wantMem) {
		t.Errorf("memory after a reset differs from a fresh instance's (%d and %d bytes)", len(gotMem), len(wantMem))
	}
	if len(gotMem) <= len(wantMem) {
		t.Error("the triggers did not grow the memory: the zeroing of grown pages is not tested")
	}
	if i := slices.IndexFunc(gotMem[min(len(wantMem), len(gotMem)):], func(b byte) bool { return b != 0 }); i >= 0 {
		t.Errorf("memory grown by earlier triggers not zeroed at %d", len(wantMem)+i)
	}
}

// Handlers run on a reset instance write what they write on a new
// instance per trigger.
func TestResetWritesAsFreshInstances(t *testing.T) {
	dump := func(fresh bool) string {
		c := mappingtest.New(t, nil)
		if fresh {
			for _, h := range c.Hosts {
				mapping.NeverReset(h)
			}
		}
		liquidityEvents(t, c)
		var out bytes.Buffer
		for _, typ := range slices.Sorted(func(yield func(string) bool) {
			for n := range c.Store.Schema().Types {
				if !yield(n) {
					return
				}
			}
		}) {
			for _, id := range c.Store.All(typ) {
				fmt.Fprintf(&out, "%s %s %v\n", typ, id, c.Store.Get(typ, id))
			}
		}
		fmt.Fprintf(&out, "%v %v", c.Logs, c.Created)
		return out.String()
	}
	reused, fresh := dump(false), dump(true)
	if reused != fresh {
		t.Errorf("a reset instance wrote\n%.2000s\nnew instances\n%.2000s", reused, fresh)
	}
}
