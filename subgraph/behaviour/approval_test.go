package behaviour_test

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

const updateAddressSig = "LogUpdateAddress(address,address,address)"

// Which pools a market approves, found as the mappings must find it on a
// real chain, where updateAddress's LogUpdateAddress names no pool:
// approvedPools(pool) is read for the market's prime pool when the market
// appears, for a pool a handler first mints in (for every market of its
// pair), and for every pool of the pair on each LogUpdateAddress; a pool of
// another pair is never asked about; a V1 market of the same pair that
// appears later is asked about every pool known by then.
func TestApprovedPoolsFollowUpdateAddress(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	c := mappingtest.New(t, calls.call)
	hex := func(a common.Address) string { return strings.ToLower(a.Hex()) }
	pool2 := common.HexToAddress("0x0000000000000000000000000000000000000f02")
	other := common.HexToAddress("0x0000000000000000000000000000000000000f03")
	tokX, tokY := common.HexToAddress("0x00000000000000000000000000000000000000a1"), common.HexToAddress("0x00000000000000000000000000000000000000a2")
	c.Pairs[wethUSDC] = [2]common.Address{weth, usdc}
	c.Pairs[pool2] = [2]common.Address{weth, usdc}
	c.Pairs[other] = [2]common.Address{tokX, tokY}
	want := func(market, pool common.Address, approved, prime bool, block int64) {
		t.Helper()
		mp := c.Store.Get("MarketPool", hex(market)+"-"+hex(pool))
		if mp == nil || mp["approved"].Bool != approved || mp["prime"].Bool != prime || mp["checkedAtBlock"].Big.Int64() != block ||
			mp["market"].Str != hex(market) || mp["pool"].Str != hex(pool) {
			t.Fatalf("MarketPool %s-%s = %+v; want approved %v, prime %v, checked at %d", hex(market), hex(pool), mp, approved, prime, block)
		}
	}

	// the constructor approves nothing: the prime pool is known, not approved
	c.Next(1000, 1_700_000_000, alice)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV2", marketV2, wethUSDC, pricing, feeTo, weth, usdc)
	want(marketV2, wethUSDC, false, true, 1000)

	// updateAddress approves the prime pool
	c.Next(1001, 1_700_000_100, alice)
	c.Approved[[2]common.Address{marketV2, wethUSDC}] = true
	c.Emit("OptionMarketV2_0x501b", mV2, updateAddressSig, "handleUpdateAddress", marketV2, common.Address{}, feeTo, pricing)
	want(marketV2, wethUSDC, true, true, 1001)

	// an LP deposits in a second pool of the pair, which the market has
	// approved already (updateAddress came before any range there)
	c.Next(1002, 1_700_000_200, lp)
	c.Approved[[2]common.Address{marketV2, pool2}] = true
	id := mappingtest.PositionID(t, uniHandler, pool2, hook24h, 200000, 200060)
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler, id, big.NewInt(1e12), pool2, hook24h, lp, big.NewInt(200000), big.NewInt(200060))
	want(marketV2, pool2, true, false, 1002)
	if p := c.Store.Get("Pool", hex(pool2)); p == nil || !slices.Equal(p["token0"].Bytes, weth.Bytes()) || !slices.Equal(p["token1"].Bytes, usdc.Bytes()) {
		t.Fatalf("pool %+v", p)
	}

	// a pool of another pair: no market is asked about it
	idX := mappingtest.PositionID(t, uniHandler, other, hook24h, 100, 110)
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler, idX, big.NewInt(1e12), other, hook24h, lp, big.NewInt(100), big.NewInt(110))
	if mp := c.Store.Get("MarketPool", hex(marketV2)+"-"+hex(other)); mp != nil {
		t.Fatalf("a market of another pair asked about %s: %+v", hex(other), mp)
	}
	if tp := c.Store.Get("TokenPair", hex(tokX)+"-"+hex(tokY)); tp == nil || len(tp["pools"].Array) != 1 || len(tp["markets"].Array) != 0 {
		t.Fatalf("token pair of the other pool: %+v", tp)
	}

	// updateAddress lets the second pool go: every pool of the pair is asked again
	c.Next(1003, 1_700_000_300, alice)
	c.Approved[[2]common.Address{marketV2, pool2}] = false
	c.Emit("OptionMarketV2_0x501b", mV2, updateAddressSig, "handleUpdateAddress", marketV2, common.Address{}, feeTo, pricing)
	want(marketV2, pool2, false, false, 1003)
	want(marketV2, wethUSDC, true, true, 1003)

	// a V1 market of the same pair appears: asked about both pools
	c.Next(1004, 1_700_000_400, alice)
	c.Approved[[2]common.Address{marketV1, pool2}] = true
	c.Emit("OptionMarketV1_0x764f", "DopexV2OptionMarket", "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV1", marketV1, wethUSDC, pricing, feeTo, weth, usdc)
	want(marketV1, wethUSDC, false, true, 1004)
	want(marketV1, pool2, true, false, 1004)
	tp := c.Store.Get("TokenPair", hex(weth)+"-"+hex(usdc))
	if tp == nil || len(tp["pools"].Array) != 2 || len(tp["markets"].Array) != 2 {
		t.Fatalf("token pair %+v", tp)
	}
}

// A leg's liquidityLeft is opTickMap's liquidityToUse at the end of the
// latest block that minted, exercised, split or settled its option, and
// the option's hasLiquidity says whether any leg has some left: what open
// interest counts.
func TestLegLiquidityLeft(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}, ticks: map[string][]opTick{}}
	c := mappingtest.New(t, calls.call)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV2", marketV2, wethUSDC, pricing, feeTo, weth, usdc)
	legs := func(id int64, l0, l1 int64) []opTick {
		return []opTick{{uniHandler, wethUSDC, hook24h, 200000, 200010, l0}, {uniHandler, wethUSDC, hook24h, 199990, 200010, l1}}
	}
	want := func(id int64, hasLiquidity bool, left ...int64) {
		t.Helper()
		o := c.Store.Get("Option", optID(marketV2, id))
		if o == nil || o["hasLiquidity"].Bool != hasLiquidity {
			t.Fatalf("option %d: %+v, want hasLiquidity %v", id, o, hasLiquidity)
		}
		for i, l := range left {
			leg := c.Store.Get("OptionLeg", fmt.Sprintf("%s-%d", optID(marketV2, id), i))
			if leg == nil || leg["liquidityLeft"].Big.Int64() != l {
				t.Fatalf("option %d leg %d: %+v, want liquidityLeft %d", id, i, leg, l)
			}
		}
	}

	c.Next(3000, 1_700_000_000, alice)
	calls.data[optID(marketV2, 7)] = opData{legs: 2, tl: 199990, tu: 200010, expiry: 1_700_086_400, isCall: true}
	calls.ticks[optID(marketV2, 7)] = legs(7, 4e11, 1e11)
	c.Emit("OptionMarketV2_0x501b", mV2, mintV2Sig, "handleMintOptionV2", marketV2, alice, big.NewInt(7), true, big.NewInt(1), big.NewInt(2), big.NewInt(0))
	want(7, true, 4e11, 1e11)

	// an exercise of leg 0 in full
	c.Next(3001, 1_700_000_100, alice)
	calls.ticks[optID(marketV2, 7)] = legs(7, 0, 1e11)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV2,
		alice, big.NewInt(7), big.NewInt(5), big.NewInt(6))
	want(7, true, 0, 1e11)

	// a split takes part of leg 1 off the parent into option 8
	c.Next(3002, 1_700_000_200, alice)
	calls.data[optID(marketV2, 8)] = opData{legs: 2, tl: 199990, tu: 200010, expiry: 1_700_086_400, isCall: true}
	calls.ticks[optID(marketV2, 7)] = legs(7, 0, 3e10)
	calls.ticks[optID(marketV2, 8)] = legs(8, 0, 7e10)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogSplitOption(address,uint256,uint256,address)", "handleSplitOption", marketV2,
		alice, big.NewInt(7), big.NewInt(8), bob)
	want(7, true, 0, 3e10)
	want(8, true, 0, 7e10)

	// settlement returns the rest of option 7
	c.Next(3003, 1_700_090_000, bob)
	calls.ticks[optID(marketV2, 7)] = legs(7, 0, 0)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogSettleOption(address,uint256)", "handleSettleOption", marketV2, alice, big.NewInt(7))
	want(7, false, 0, 0)
	want(8, true, 0, 7e10)
}
