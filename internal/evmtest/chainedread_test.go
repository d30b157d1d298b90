package evmtest

import (
	"context"
	"errors"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	reader "github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// The gateway's cold read of a market (one eth_call without `to` running
// ChainedRead's creation code: the market's assets and pool, then the
// pool's immutables and slot0 and the assets' decimals and symbols) on a
// real EVM, against real Uniswap V3 contracts and the test protocol's V2
// market. Every figure is compared with the contracts' own answers to
// direct calls.
func TestChainedReadMarketSnapshotOnRealContracts(t *testing.T) {
	// The put asset is token0 here, so the market reads inverted: both
	// orders of the pair are exercised by the decoding it feeds. The
	// assets' decimals differ (18 and 6), so a swapped pair shows.
	p := pt.Deploy(t, pt.Config{Inverted: true})
	c, market := p.Chain, p.Market

	r := testenv.NewReader(t, c.RPC(), common.Address{})
	info, st, err := r.MarketSnapshot(context.Background(), market)
	if err != nil {
		t.Fatal(err)
	}
	erc20, pool := contracts.ERC20, contracts.Pool
	token := func(a common.Address) reader.Token {
		return reader.Token{Address: a, Decimals: c.Call(a, erc20, "decimals")[0].(uint8), Symbol: c.Call(a, erc20, "symbol")[0].(string)}
	}
	callAsset := c.Call(market, contracts.OptionMarketV2, "callAsset")[0].(common.Address)
	putAsset := c.Call(market, contracts.OptionMarketV2, "putAsset")[0].(common.Address)
	primePool := c.Call(market, contracts.OptionMarketV2, "primePool")[0].(common.Address)
	slot0 := c.Call(primePool, pool, "slot0")
	want := reader.MarketInfo{
		Market: market, Pool: primePool,
		CallAsset:   token(callAsset),
		PutAsset:    token(putAsset),
		Token0:      c.Call(primePool, pool, "token0")[0].(common.Address),
		Token1:      c.Call(primePool, pool, "token1")[0].(common.Address),
		Fee:         uint32(c.Call(primePool, pool, "fee")[0].(*big.Int).Uint64()),
		TickSpacing: 10, // Uniswap V3's spacing for the 0.05% tier
	}
	if *info != want {
		t.Fatalf("market info\n got %+v\nwant %+v", *info, want)
	}
	if callAsset != p.CallAsset || putAsset != p.PutAsset || primePool != p.Pool || want.Fee != 500 ||
		want.CallAsset.Decimals != 18 || want.PutAsset.Decimals != 6 {
		t.Fatalf("the deployment is not the one configured: %+v", want)
	}
	if info.Token0IsCall() {
		t.Fatal("call asset is token1 in this pool; the market must read as inverted")
	}
	sqrt, tick := slot0[0].(*big.Int), slot0[1].(*big.Int)
	if st.SqrtPriceX96.Cmp(sqrt) != 0 || int64(st.Tick) != tick.Int64() {
		t.Fatalf("slot0: got %s at tick %d, the pool says %s at tick %s", st.SqrtPriceX96, st.Tick, sqrt, tick)
	}
	// Deploy initializes the pool exactly at a tick of the spacing grid
	// away from 0 and nothing trades: a zero or stale answer cannot match.
	if at, err := clamm.SqrtRatioAtTick(int(tick.Int64())); err != nil || sqrt.Cmp(at) != 0 || tick.Sign() == 0 || tick.Int64()%10 != 0 {
		t.Fatalf("the pool was initialized at a tick and not traded: %s at tick %s", sqrt, tick)
	}

	// An ERC20 is not a market: its callAsset call reverts inside the
	// ChainedRead, and the read is refused as MARKET_NOT_FOUND.
	_, _, err = r.MarketSnapshot(context.Background(), p.CallAsset)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.MarketNotFound {
		t.Fatalf("an ERC20 as the market: %v", err)
	}
}
