package mapping

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// liquidityEvents runs a handler's deposit, use, donation and unuse
// through c, several times over; one transaction's large input makes the
// instance's memory grow.
func liquidityEvents(c *chain) {
	const tl, tu = -200010, -200000
	id := positionID(c.t, uniHandler, wethUSDC, hook24h, tl, tu)
	for i := range int64(4) {
		c.next(uint64(1000+i), uint64(1_700_000_000+i), lp)
		if i == 1 {
			c.tx.Input = bytes.Repeat([]byte{0xab}, 300_000)
		}
		c.emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
			id, big.NewInt(1_000_000+i), wethUSDC, hook24h, lp, big.NewInt(tl), big.NewInt(tu))
		c.emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, big.NewInt(300_000))
		c.emit("HandlerV2_uniswap", hV2, "LogDonation(uint256,uint128)", "handleDonation", uniHandler, id, big.NewInt(1234+i))
		c.emit("HandlerV2_uniswap", hV2, "LogUnusePosition(uint256,uint128)", "handleUnusePosition", uniHandler, id, big.NewInt(100_000))
	}
}

// state is an instance's memory and its mutable globals' values.
func state(t *testing.T, h *Host) ([]byte, []uint64) {
	t.Helper()
	mod := h.heap.mod
	buf, ok := mod.Memory().Read(0, mod.Memory().Size())
	if !ok {
		t.Fatal("memory unreadable")
	}
	var globals []uint64
	for _, n := range h.globals {
		globals = append(globals, mod.ExportedGlobal(n).Get())
	}
	return append([]byte(nil), buf...), globals
}

// After triggers, the instance a host keeps is reset to exactly a fresh
// instance's state: the same memory (pages grown since all zero) and the
// same values in every mutable global. A reset that skipped the globals,
// or the memory past the first pages, or part of it, fails here.
func TestResetInstanceIsFresh(t *testing.T) {
	c := newChain(t, nil)
	liquidityEvents(c)
	h := c.hosts["HandlerV2_uniswap"]
	if h.pristine == nil || h.heap == nil {
		t.Fatal("the host keeps no instance to reset")
	}
	if len(h.globals) == 0 {
		t.Fatal("no mutable global found to restore")
	}
	dirtyMem, dirtyGlobals := state(t, h)
	kept := h.heap.mod
	if err := h.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.heap.mod != kept {
		t.Fatal("ready made a new instance: the reset is not what is tested")
	}
	gotMem, gotGlobals := state(t, h)
	h.release()
	if err := h.instantiate(context.Background()); err != nil {
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
		c := newChain(t, nil)
		if fresh {
			for _, h := range c.hosts {
				h.pristine = nil
			}
		}
		liquidityEvents(c)
		var out bytes.Buffer
		for _, typ := range slices.Sorted(func(yield func(string) bool) {
			for n := range c.store.Schema().Types {
				if !yield(n) {
					return
				}
			}
		}) {
			for _, id := range c.store.All(typ) {
				fmt.Fprintf(&out, "%s %s %v\n", typ, id, c.store.Get(typ, id))
			}
		}
		fmt.Fprintf(&out, "%v %v", c.logs, c.created)
		return out.String()
	}
	reused, fresh := dump(false), dump(true)
	if reused != fresh {
		t.Errorf("a reset instance wrote\n%.2000s\nnew instances\n%.2000s", reused, fresh)
	}
}

// A module whose section claims more bytes than it has is an error from
// New (wazero's, the reset's rewrite given up), never a panic.
func TestTruncatedModuleIsAnError(t *testing.T) {
	mod := []byte("\x00asm\x01\x00\x00\x00" + "\x01\x7f\x00") // a type section of 127 bytes, 1 present
	if _, _, err := exportGlobals(mod); err == nil || !strings.Contains(err.Error(), "unexpected end") {
		t.Fatalf("exportGlobals: %v", err)
	}
	if _, err := New(context.Background(), "m.wasm", mod, Memory(newStore(t)), Options{}); err == nil {
		t.Fatal("New took a truncated module")
	}
}
