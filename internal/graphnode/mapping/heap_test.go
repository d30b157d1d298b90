package mapping_test

import (
	"context"
	"encoding/binary"
	"math/big"
	"testing"
	"unicode/utf16"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

// Strings cross into the module as UTF-16LE, ASCII or not.
func TestStringsRoundTrip(t *testing.T) {
	c := mappingtest.New(t, nil)
	h := c.Hosts["HandlerV2_uniswap"]
	if err := mapping.Ready(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	defer mapping.Release(h)
	for _, s := range []string{"", "Strike", "0xabc-12", "prix €", "𝔘niswap", "a\u00ffb"} {
		raw, back := mapping.StringRoundTrip(h, s)
		want := utf16.Encode([]rune(s))
		if len(raw) != 2*len(want) {
			t.Errorf("%q: %d bytes, want %d", s, len(raw), 2*len(want))
			continue
		}
		for i, u := range want {
			if got := binary.LittleEndian.Uint16(raw[2*i:]); got != u {
				t.Errorf("%q: code unit %d is %#x, want %#x", s, i, got, u)
			}
		}
		if back != s {
			t.Errorf("read back %q, wrote %q", back, s)
		}
	}
}

// A transaction's input is copied into the mapping's memory: a large one
// (a contract creation) must not overrun the host's arena into memory the
// mapping allocates afterwards.
func TestLargeTransactionInput(t *testing.T) {
	c := mappingtest.New(t, nil)
	c.Tx.Input = make([]byte, 70_000)
	for i := range c.Tx.Input {
		c.Tx.Input[i] = byte(i)
	}
	pricing, feeTo := common.HexToAddress("0x0000000000000000000000000000000000000Abc"), common.HexToAddress("0xFEE0000000000000000000000000000000000003")
	weth, usdc := common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"), common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	for i := 0; i < 3; i++ {
		c.Emit("OptionMarketV2_0x501b", "DopexV2OptionMarketV2", "LogOptionsMarketInitialized(address,address,address,address,address)",
			"handleMarketInitializedV2", common.BigToAddress(big.NewInt(int64(100+i))), wethUSDC, pricing, feeTo, weth, usdc)
	}
	if n := len(c.Store.All("Market")); n != 3 {
		t.Fatalf("%d markets", n)
	}
}
