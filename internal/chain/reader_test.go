package chain_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// A market already seen reads only its pool's slot0; a short or
// out-of-range answer there is the node's garbage (502), as the same bytes
// are on the first sight of the market, not an internal error.
func TestWarmSlot0IsValidatedLikeCold(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs[0])
	r, _ := fakeNode(t, f.Node)
	market := scs[0].Market.Address
	if _, _, err := r.MarketSnapshot(context.Background(), market); err != nil {
		t.Fatal(err)
	}
	pool := f.Node.Pools[scs[0].Market.PrimePool]
	outOfRange := make([]byte, 64)
	outOfRange[40] = 0x7f // tick far above 887272
	for name, raw := range map[string][]byte{"short": make([]byte, 32), "tick out of range": outOfRange} {
		pool.Slot0Raw = raw
		_, _, err := r.MarketSnapshot(context.Background(), market)
		if p := problem.As(err); p.Code != problem.RPCError {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// A node of another network is refused by its chain id.
func TestCheckChainID(t *testing.T) {
	node := chaintest.NewNode(t)
	r, _ := fakeNode(t, node)
	if err := r.CheckChainID(context.Background(), 42161); err != nil {
		t.Fatal(err)
	}
	node.ChainID = 1
	if p := problem.As(r.CheckChainID(context.Background(), 42161)); p.Code != problem.RPCWrongChain {
		t.Fatalf("%+v", p)
	}
}
