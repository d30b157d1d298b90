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
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The gateway's cold read of a market (one eth_call without `to` running
// ChainedRead's creation code: the market's assets and pool, then the
// pool's immutables and slot0 and the assets' decimals and symbols) on a
// real EVM, against real Uniswap V3 and OpenZeppelin contracts and a market
// stand-in compiled from internal/contracts/sol. Every figure is compared
// with the contracts' own answers to direct calls.
func TestChainedReadMarketSnapshotOnRealContracts(t *testing.T) {
	c := newChain(t)
	u := deployUniswap(t, c)
	mock := loadFile(t, "../contracts/sol/MockOptionMarket.json")
	// The put asset is token0 here, so the market reads inverted: both
	// orders of the pair are exercised by the decoding it feeds.
	callAsset, putAsset := u.tokenB, u.tokenA
	market, _ := c.deploy(mock, callAsset, putAsset, u.pool)

	r := reader.NewReader(c.rpcClient(), reader.Options{})
	info, st, err := r.MarketSnapshot(context.Background(), market)
	if err != nil {
		t.Fatal(err)
	}
	erc20, pool := contracts.ERC20, contracts.Pool
	slot0 := c.call(u.pool, pool, "slot0")
	want := reader.MarketInfo{
		Market: market, Pool: u.pool,
		CallAsset:   reader.Token{Address: callAsset, Decimals: c.call(callAsset, erc20, "decimals")[0].(uint8), Symbol: c.call(callAsset, erc20, "symbol")[0].(string)},
		PutAsset:    reader.Token{Address: putAsset, Decimals: c.call(putAsset, erc20, "decimals")[0].(uint8), Symbol: c.call(putAsset, erc20, "symbol")[0].(string)},
		Token0:      c.call(u.pool, pool, "token0")[0].(common.Address),
		Token1:      c.call(u.pool, pool, "token1")[0].(common.Address),
		Fee:         uint32(fee),
		TickSpacing: 10, // Uniswap V3's spacing for the 0.05% tier
	}
	if *info != want {
		t.Fatalf("market info\n got %+v\nwant %+v", *info, want)
	}
	if info.Token0IsCall() {
		t.Fatal("call asset is token1 in this pool; the market must read as inverted")
	}
	sqrt, tick := slot0[0].(*big.Int), slot0[1].(*big.Int)
	if st.SqrtPriceX96.Cmp(sqrt) != 0 || int64(st.Tick) != tick.Int64() {
		t.Fatalf("slot0: got %s at tick %d, the pool says %s at tick %s", st.SqrtPriceX96, st.Tick, sqrt, tick)
	}
	if sqrt.Cmp(clamm.Q96) != 0 || tick.Sign() != 0 {
		t.Fatalf("the pool was initialized at price 1 and not traded: %s at tick %s", sqrt, tick)
	}

	// An ERC20 is not a market: its callAsset call reverts inside the
	// ChainedRead, and the read is refused as MARKET_NOT_FOUND.
	_, _, err = r.MarketSnapshot(context.Background(), u.tokenA)
	var p *problem.Error
	if !errors.As(err, &p) || p.Code != problem.MarketNotFound {
		t.Fatalf("an ERC20 as the market: %v", err)
	}
}
