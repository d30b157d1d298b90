package chain_test

import (
	"context"
	"math/big"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
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

// A pool is read through the slot0 layout of its DEX (Options.Slot0): an
// Aerodrome CLPool's six-word answer gives its price and tick through the
// aerodrome-cl layout, on the market's first sight and after; read as a
// Uniswap V3 pool the same answer is the node's garbage (502), cold or
// warm, never a price from a decode that happened to succeed.
func TestSlot0ReadByTheLayoutOfThePoolsDEX(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	market, prime := scs[0].Market.Address, scs[0].Market.PrimePool
	f := scenario.NewFakes(t, scs[0])
	pool := f.Node.Pools[prime]
	var outs abi.Arguments
	for _, typ := range []string{"uint160", "int24", "uint16", "uint16", "uint16", "bool"} { // ICLPoolState.slot0
		ty, _ := abi.NewType(typ, "", nil)
		outs = append(outs, abi.Argument{Type: ty})
	}
	want := new(big.Int).Add(pool.SqrtPriceX96, big.NewInt(12345))
	if pool.Slot0Raw, err = outs.Pack(want, big.NewInt(int64(pool.Tick)), uint16(3), uint16(10), uint16(10), true); err != nil {
		t.Fatal(err)
	}
	_, c := fakeNode(t, f.Node)
	reader := func(layout *contracts.Slot0Layout) *chain.Reader {
		d := config.Default()
		opts := chain.Options{Multicall3: f.Node.Multicall3, CallTimeout: d.UpstreamTimeout.D(), ImmutablesTTL: d.ImmutablesTTL.D()}
		opts.Slot0 = func(p common.Address) contracts.Slot0Layout {
			if p == prime {
				return *layout
			}
			return contracts.Slot0UniswapV3
		}
		r, err := chain.NewReader(c, opts)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	layout := contracts.Slot0AerodromeCL
	r := reader(&layout)
	for _, sight := range []string{"cold", "warm"} {
		if _, st, err := r.MarketSnapshot(context.Background(), market); err != nil || st.SqrtPriceX96.Cmp(want) != 0 || st.Tick != pool.Tick {
			t.Errorf("aerodrome-cl, %s: %+v %v, want %s", sight, st, err, want)
		}
	}
	uniswap := contracts.Slot0UniswapV3
	for sight, r := range map[string]*chain.Reader{"warm": r, "cold": reader(&uniswap)} {
		layout = contracts.Slot0UniswapV3
		if _, st, err := r.MarketSnapshot(context.Background(), market); problem.As(err).Code != problem.RPCError {
			t.Errorf("uniswap-v3, %s: %+v %v", sight, st, err)
		}
	}
}
