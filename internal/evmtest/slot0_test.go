package evmtest

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// A real Uniswap V3 pool's slot0 answer decodes through the uniswap-v3
// layout to the price and tick its own ABI reads; the aerodrome-cl layout,
// one word shorter, refuses it.
func TestRealUniswapPoolSlot0DecodesThroughItsLayout(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	var raw hexutil.Bytes
	call := map[string]any{"to": p.Pool, "data": hexutil.Bytes(contracts.Pool.Methods["slot0"].ID)}
	if err := p.Chain.RPC().CallContext(context.Background(), &raw, "eth_call", call, "latest"); err != nil {
		t.Fatal(err)
	}
	wantSqrt, wantTick := p.Slot0(p.Pool)
	sqrt, tick, err := contracts.DecodeSlot0(contracts.Slot0UniswapV3, raw)
	if err != nil || sqrt.Cmp(wantSqrt) != 0 || tick != wantTick {
		t.Fatalf("uniswap-v3: %v %d %v, the pool's ABI reads %v %d", sqrt, tick, err, wantSqrt, wantTick)
	}
	if _, _, err := contracts.DecodeSlot0(contracts.Slot0AerodromeCL, raw); err == nil {
		t.Fatal("the aerodrome-cl layout read a Uniswap V3 pool's slot0")
	}
}
