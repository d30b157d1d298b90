package behaviour_test

import (
	"bytes"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

var (
	marketV2  = common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744")
	marketV1  = common.HexToAddress("0x764fA09d0B3de61EeD242099BD9352C1C61D3d27")
	weth      = common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")
	usdc      = common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	alice     = common.HexToAddress("0xA11CE00000000000000000000000000000000001")
	bob       = common.HexToAddress("0xB0B0000000000000000000000000000000000002")
	autoExer  = common.HexToAddress("0xb223eD797742E096632c39d1b2e0c313750B25FE")
	feeTo     = common.HexToAddress("0xFEE0000000000000000000000000000000000003")
	pricing   = common.HexToAddress("0x0000000000000000000000000000000000000Abc")
	mV2       = "DopexV2OptionMarketV2"
	mintV2Sig = "LogMintOption(address,uint256,bool,uint256,uint256,uint256)"
)

// opData is the market's opData(tokenId) as mintOption writes it.
type opData struct {
	legs       int64
	tl, tu     int64
	expiry     int64
	isCall     bool
	revertCall bool
}

// opTick is one opTickMap(tokenId, i) entry.
type opTick struct {
	handler, pool, hook common.Address
	tl, tu, liquidity   int64
}

// marketCalls answers opData(tokenId) eth_calls with ABI-encoded outputs of
// the real getter, and counts them, and opTickMap(tokenId, i) (the V1
// market's five outputs when asked of marketV1); an entry it lacks reverts.
type marketCalls struct {
	t     *testing.T
	data  map[string]opData   // market-tokenId
	ticks map[string][]opTick // market-tokenId
	calls int
}

func (m *marketCalls) opTickMap(to common.Address, data []byte) ([]byte, bool, error) {
	name := mV2
	if to == marketV1 {
		name = "DopexV2OptionMarket"
	}
	a, err := mapping.ABI(name)
	if err != nil {
		return nil, false, err
	}
	method := a.Methods["opTickMap"]
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, false, err
	}
	legs := m.ticks[strings.ToLower(to.Hex())+"-"+args[0].(*big.Int).String()]
	i := int(args[1].(*big.Int).Int64())
	if i >= len(legs) {
		return nil, true, nil
	}
	l := legs[i]
	if to == marketV1 {
		out, err := method.Outputs.Pack(l.handler, l.pool, big.NewInt(l.tl), big.NewInt(l.tu), big.NewInt(l.liquidity))
		return out, false, err
	}
	out, err := method.Outputs.Pack(l.handler, l.pool, l.hook, big.NewInt(l.tl), big.NewInt(l.tu), big.NewInt(l.liquidity))
	return out, false, err
}

func (m *marketCalls) call(to common.Address, data []byte, _ uint64) ([]byte, bool, error) {
	a, err := mapping.ABI(mV2)
	if err != nil {
		return nil, false, err
	}
	if bytes.Equal(data[:4], a.Methods["opTickMap"].ID) {
		return m.opTickMap(to, data)
	}
	method := a.Methods["opData"]
	if !bytes.Equal(data[:4], method.ID) {
		return nil, false, fmt.Errorf("unexpected call %x", data[:4])
	}
	args, err := method.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, false, err
	}
	m.calls++
	d, ok := m.data[strings.ToLower(to.Hex())+"-"+args[0].(*big.Int).String()]
	if !ok || d.revertCall {
		return nil, true, nil
	}
	out, err := method.Outputs.Pack(big.NewInt(d.legs), big.NewInt(d.tl), big.NewInt(d.tu), big.NewInt(d.expiry), d.isCall)
	return out, false, err
}

func optID(market common.Address, id int64) string {
	return strings.ToLower(market.Hex()) + "-" + big.NewInt(id).String()
}

func TestOptionLifecycle(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	c := mappingtest.New(t, calls.call)
	hex := func(a common.Address) string { return strings.ToLower(a.Hex()) }

	// constructor: the market names its prime pool
	c.Emit("OptionMarketV2_0x501b", mV2, "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV2", marketV2, wethUSDC, pricing, feeTo, weth, usdc)
	if m := c.Store.Get("Market", hex(marketV2)); m == nil || m["primePool"].Str != hex(wethUSDC) || m["version"].Int != 2 {
		t.Fatalf("market %+v", m)
	}

	// two call ranges above the price, deposited by an LP
	const tl1, tu1, tl2, tu2 = 200000, 200010, 199990, 200010
	id1 := mappingtest.PositionID(t, uniHandler, wethUSDC, hook24h, tl1, tu1)
	id2 := mappingtest.PositionID(t, uniHandler, wethUSDC, hook24h, tl2, tu2)
	for _, p := range []struct {
		id     *big.Int
		tl, tu int64
	}{{id1, tl1, tu1}, {id2, tl2, tu2}} {
		c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
			p.id, big.NewInt(1e12), wethUSDC, hook24h, lp, big.NewInt(p.tl), big.NewInt(p.tu))
	}

	// mintOption in one transaction: two LogUsePosition, the mint's own
	// Transfer, then LogMintOption; opData answers the range and expiry
	c.Next(3000, 1_700_000_000, alice)
	calls.data[optID(marketV2, 7)] = opData{legs: 2, tl: 199990, tu: 200010, expiry: 1_700_086_400, isCall: true}
	calls.ticks = map[string][]opTick{optID(marketV2, 7): {{uniHandler, wethUSDC, hook24h, tl1, tu1, 4e11}, {uniHandler, wethUSDC, hook24h, tl2, tu2, 1e11}}}
	c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id1, big.NewInt(4e11))
	c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id2, big.NewInt(1e11))
	c.Emit("OptionMarketV2_0x501b", mV2, "Transfer(address,address,uint256)", "handleTransfer", marketV2, common.Address{}, alice, big.NewInt(7))
	premium, withdrawn, fees := big.NewInt(12_345_678), big.NewInt(5e17), big.NewInt(150_000)
	c.Emit("OptionMarketV2_0x501b", mV2, mintV2Sig, "handleMintOptionV2", marketV2, alice, big.NewInt(7), true, premium, withdrawn, fees)

	o := c.Store.Get("Option", optID(marketV2, 7))
	if o == nil {
		t.Fatal("no option")
	}
	if o["tickLower"].Int != 199990 || o["tickUpper"].Int != 200010 || o["expiry"].Big.Int64() != 1_700_086_400 ||
		!o["isCall"].Bool || o["state"].Str != "Open" || !bytes.Equal(o["owner"].Bytes, alice.Bytes()) ||
		o["premium"].Big.Cmp(premium) != 0 || o["protocolFees"].Big.Cmp(fees) != 0 || o["totalAssetWithdrawn"].Big.Cmp(withdrawn) != 0 ||
		o["mintTimestamp"].Big.Int64() != 1_700_000_000 {
		t.Errorf("option %+v", o)
	}
	if calls.calls != 1 {
		t.Errorf("%d opData calls, want 1", calls.calls)
	}
	for i, want := range []struct {
		tl, tu int64
		l      int64
	}{{tl1, tu1, 4e11}, {tl2, tu2, 1e11}} {
		leg := c.Store.Get("OptionLeg", fmt.Sprintf("%s-%d", optID(marketV2, 7), i))
		if leg == nil || leg["tickLower"].Int != want.tl || leg["tickUpper"].Int != want.tu || leg["liquidity"].Big.Int64() != want.l ||
			!bytes.Equal(leg["hook"].Bytes, hook24h.Bytes()) || !bytes.Equal(leg["handler"].Bytes, uniHandler.Bytes()) {
			t.Errorf("leg %d: %+v", i, leg)
		}
	}
	if leg := c.Store.Get("OptionLeg", optID(marketV2, 7)+"-1"); leg["strike"].Str != mappingtest.StrikeID(uniHandler, wethUSDC, hook24h, tl2, tu2) || leg["index"].Int != 1 {
		t.Errorf("leg 1 strike %v index %v", leg["strike"], leg["index"])
	}
	pid := strings.ToLower(c.Tx.Hash.Hex()) + "-3"
	if p := c.Store.Get("Purchase", pid); p == nil || p["premium"].Big.Cmp(premium) != 0 || p["protocolFees"].Big.Cmp(fees) != 0 {
		t.Errorf("purchase %s: %+v", pid, p)
	}
	day := hex(marketV2) + "-1699920000"
	c.WantBig("MarketDayData", day, "callVolume", withdrawn)
	c.WantBig("MarketDayData", day, "callPremium", premium)
	c.WantBig("MarketDayData", day, "callProtocolFees", fees)

	// the option changes hands
	c.Next(3001, 1_700_000_100, alice)
	c.Emit("OptionMarketV2_0x501b", mV2, "Transfer(address,address,uint256)", "handleTransfer", marketV2, alice, bob, big.NewInt(7))
	if o := c.Store.Get("Option", optID(marketV2, 7)); !bytes.Equal(o["owner"].Bytes, bob.Bytes()) {
		t.Errorf("owner %x", o["owner"].Bytes)
	}

	// bob splits part of it off to alice: a new Option with the parent's terms
	c.Emit("OptionMarketV2_0x501b", mV2, "Transfer(address,address,uint256)", "handleTransfer", marketV2, common.Address{}, alice, big.NewInt(8))
	c.Emit("OptionMarketV2_0x501b", mV2, "LogSplitOption(address,uint256,uint256,address)", "handleSplitOption", marketV2,
		bob, big.NewInt(7), big.NewInt(8), alice)
	s := c.Store.Get("Option", optID(marketV2, 8))
	if s == nil || s["splitFrom"].Str != optID(marketV2, 7) || s["tickLower"].Int != 199990 || s["expiry"].Big.Int64() != 1_700_086_400 ||
		!bytes.Equal(s["owner"].Bytes, alice.Bytes()) || s["premium"].Big.Sign() != 0 {
		t.Errorf("split option %+v", s)
	}

	// an auto-exerciser exercises bob's option: its swap moves the price in
	// the same transaction, and slot0 at the end of the block has it
	price := new(big.Int).Lsh(big.NewInt(1), 100)
	c.Next(3002, 1_700_000_200, autoExer)
	c.Seeds[wethUSDC] = price
	c.Emit("HandlerV2_uniswap", hV2, "LogUnusePosition(uint256,uint128)", "handleUnusePosition", uniHandler, id1, big.NewInt(4e11-1))
	profit, relocked := big.NewInt(7_000_000), big.NewInt(2e17)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV2,
		bob, big.NewInt(7), profit, relocked)
	xid := strings.ToLower(c.Tx.Hash.Hex()) + "-1"
	x := c.Store.Get("Exercise", xid)
	if x == nil || x["option"].Str != optID(marketV2, 7) || !bytes.Equal(x["user"].Bytes, bob.Bytes()) ||
		!bytes.Equal(x["exerciser"].Bytes, autoExer.Bytes()) || !x["delegated"].Bool ||
		x["totalProfit"].Big.Cmp(profit) != 0 || x["totalAssetRelocked"].Big.Cmp(relocked) != 0 || x["sqrtPriceX96"].Big.Cmp(price) != 0 ||
		x["blockNumber"].Big.Int64() != 3002 || x["timestamp"].Big.Int64() != 1_700_000_200 {
		t.Errorf("exercise %+v", x)
	}
	if _, ok := x["profitToOwner"]; ok {
		t.Errorf("a delegated exercise records profitToOwner %v", x["profitToOwner"])
	}
	if o := c.Store.Get("Option", optID(marketV2, 7)); o["state"].Str != "Exercised" || o["exerciseCount"].Int != 1 {
		t.Errorf("after exercise: %+v", o)
	}
	c.WantBig("Strike", mappingtest.StrikeID(uniHandler, wethUSDC, hook24h, tl1, tu1), "usedLiquidity", big.NewInt(1))

	// alice exercises her split option herself: everything reached her
	c.Next(3003, 1_700_000_300, alice)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV2,
		alice, big.NewInt(8), big.NewInt(5), big.NewInt(6))
	x = c.Store.Get("Exercise", strings.ToLower(c.Tx.Hash.Hex())+"-0")
	if x == nil || x["delegated"].Bool || x["profitToOwner"].Big == nil || x["profitToOwner"].Big.Int64() != 5 || x["option"].Str != optID(marketV2, 8) {
		t.Errorf("own exercise %+v", x)
	}

	// the market's running sums: one purchase (a split is not one), two exercises
	m := c.Store.Get("Market", hex(marketV2))
	if m["purchases"].Int != 1 || m["exercises"].Int != 2 || m["putVolume"].Big.Sign() != 0 {
		t.Errorf("market sums %+v", m)
	}
	c.WantBig("Market", hex(marketV2), "callVolume", withdrawn)
	c.WantBig("Market", hex(marketV2), "callPremium", premium)
	c.WantBig("Market", hex(marketV2), "callProtocolFees", fees)
	if d := c.Store.Get("MarketDayData", day); d["market"].Str != hex(marketV2) || d["exercises"].Int != 2 {
		t.Errorf("day %+v", d)
	}

	// settlement after expiry
	c.Next(3004, 1_700_090_000, bob)
	c.Emit("OptionMarketV2_0x501b", mV2, "LogSettleOption(address,uint256)", "handleSettleOption", marketV2, bob, big.NewInt(7))
	if o := c.Store.Get("Option", optID(marketV2, 7)); o["state"].Str != "Settled" || o["settledAt"].Big.Int64() != 1_700_090_000 {
		t.Errorf("after settle: %+v", o)
	}

	// delegates
	c.Emit("OptionMarketV2_0x501b", mV2, "LogUpdateExerciseDelegate(address,address,bool)", "handleUpdateExerciseDelegate", marketV2, bob, autoExer, true)
	if d := c.Store.Get("ExerciseDelegate", hex(marketV2)+"-"+hex(bob)+"-"+hex(autoExer)); d == nil || !d["status"].Bool {
		t.Errorf("delegate %+v", d)
	}
}

// A V1 market's five-argument LogMintOption (another topic) makes an option
// without protocol fees; a put; and a mint and its exercise in one block.
func TestV1MintAndExerciseInOneBlock(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	c := mappingtest.New(t, calls.call)
	seed, _ := new(big.Int).SetString("4339505179874779489431521", 10)
	c.Seeds[wethUSDC] = seed
	const tl, tu = -199990, -199980
	id := mappingtest.PositionIDV1(t, v1Handler, wethUSDC, tl, tu)
	c.Emit("OptionMarketV1_0x764f", "DopexV2OptionMarket", "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV1", marketV1, wethUSDC, pricing, feeTo, weth, usdc)
	c.Emit("HandlerV1_uniswap", "UniswapV3SingleTickLiquidityHandler", "LogMintedPosition(uint256,uint128,address,address,int24,int24)",
		"handleMintedPositionV1", v1Handler, id, big.NewInt(1e9), wethUSDC, lp, big.NewInt(tl), big.NewInt(tu))

	c.Next(4000, 1_700_000_000, alice)
	calls.data[optID(marketV1, 1)] = opData{legs: 1, tl: tl, tu: tu, expiry: 1_700_003_600}
	c.Emit("HandlerV1_uniswap", "UniswapV3SingleTickLiquidityHandler", "LogUsePosition(uint256,uint128)", "handleUsePosition", v1Handler, id, big.NewInt(1e8))
	c.Emit("OptionMarketV1_0x764f", "DopexV2OptionMarket", "LogMintOption(address,uint256,bool,uint256,uint256)", "handleMintOptionV1", marketV1,
		alice, big.NewInt(1), false, big.NewInt(99), big.NewInt(1000))
	// same block, next transaction: the exercise
	c.Tx.Hash[0] ^= 0xff
	c.Emit("HandlerV1_uniswap", "UniswapV3SingleTickLiquidityHandler", "LogUnusePosition(uint256,uint128)", "handleUnusePosition", v1Handler, id, big.NewInt(1e8))
	c.Emit("OptionMarketV1_0x764f", "DopexV2OptionMarket", "LogExerciseOption(address,uint256,uint256,uint256)", "handleExerciseOption", marketV1,
		alice, big.NewInt(1), big.NewInt(3), big.NewInt(4))

	o := c.Store.Get("Option", optID(marketV1, 1))
	if o == nil || o["isCall"].Bool || o["protocolFees"].Big.Sign() != 0 || o["tickLower"].Int != tl || o["state"].Str != "Exercised" {
		t.Fatalf("option %+v", o)
	}
	if m := c.Store.Get("Market", strings.ToLower(marketV1.Hex())); m["version"].Int != 1 {
		t.Errorf("market %+v", m)
	}
	day := strings.ToLower(marketV1.Hex()) + "-1699920000"
	c.WantBig("MarketDayData", day, "putVolume", big.NewInt(1000))
	c.WantBig("MarketDayData", day, "putPremium", big.NewInt(99))
	if d := c.Store.Get("MarketDayData", day); d["purchases"].Int != 1 || d["exercises"].Int != 1 {
		t.Errorf("day %+v", d)
	}
	c.WantBig("Strike", mappingtest.StrikeID(v1Handler, wethUSDC, common.Address{}, tl, tu), "usedLiquidity", big.NewInt(0))

	// a call the next UTC day: a day of its own, the market's sums hold both
	c.Next(4001, 1_700_000_000+86_400, alice)
	calls.data[optID(marketV1, 2)] = opData{legs: 1, tl: tl, tu: tu, expiry: 1_700_090_000, isCall: true}
	c.Emit("HandlerV1_uniswap", "UniswapV3SingleTickLiquidityHandler", "LogUsePosition(uint256,uint128)", "handleUsePosition", v1Handler, id, big.NewInt(1e7))
	c.Emit("OptionMarketV1_0x764f", "DopexV2OptionMarket", "LogMintOption(address,uint256,bool,uint256,uint256)", "handleMintOptionV1", marketV1,
		alice, big.NewInt(2), true, big.NewInt(7), big.NewInt(50))
	next := strings.ToLower(marketV1.Hex()) + "-1700006400"
	c.WantBig("MarketDayData", next, "callVolume", big.NewInt(50))
	c.WantBig("MarketDayData", next, "putVolume", big.NewInt(0))
	mid := strings.ToLower(marketV1.Hex())
	c.WantBig("Market", mid, "putVolume", big.NewInt(1000))
	c.WantBig("Market", mid, "putPremium", big.NewInt(99))
	c.WantBig("Market", mid, "callVolume", big.NewInt(50))
	c.WantBig("Market", mid, "callPremium", big.NewInt(7))
	if m := c.Store.Get("Market", mid); m["purchases"].Int != 2 || m["exercises"].Int != 1 {
		t.Errorf("market sums %+v", m)
	}
	// no swap seen on the prime pool yet: the exercise carries the price
	// slot0() seeded when the market named the pool
	if xs := c.Store.All("Exercise"); len(xs) != 1 || c.Store.Get("Exercise", xs[0])["sqrtPriceX96"].Big.Cmp(seed) != 0 {
		t.Errorf("exercises %v", xs)
	}
}

// When opData reverts the option still indexes, without range, expiry or legs.
func TestMintWithRevertingOpData(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	c := mappingtest.New(t, calls.call)
	const tl, tu = 100, 110
	id := mappingtest.PositionID(t, uniHandler, wethUSDC, common.Address{}, tl, tu)
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, big.NewInt(1e9), wethUSDC, common.Address{}, lp, big.NewInt(tl), big.NewInt(tu))
	calls.data[optID(marketV2, 2)] = opData{revertCall: true}
	c.Emit("OptionMarketV2_0x501b", mV2, "LogOptionsMarketInitialized(address,address,address,address,address)",
		"handleMarketInitializedV2", marketV2, wethUSDC, pricing, feeTo, weth, usdc)
	c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, big.NewInt(5))
	c.Emit("OptionMarketV2_0x501b", mV2, mintV2Sig, "handleMintOptionV2", marketV2, alice, big.NewInt(2), false, big.NewInt(1), big.NewInt(2), big.NewInt(0))
	o := c.Store.Get("Option", optID(marketV2, 2))
	if o == nil || o["tickLower"].Int != 0 || o["tickUpper"].Int != 0 || o["expiry"].Big.Sign() != 0 || len(c.Store.All("OptionLeg")) != 0 {
		t.Fatalf("option %+v", o)
	}
	if logs := c.Logs["OptionMarketV2_0x501b"]; len(logs) != 1 || logs[0].Level != 2 {
		t.Errorf("logs %+v, want one warning", logs)
	}
}

// A mint on a market whose LogOptionsMarketInitialized was never indexed
// (a manifest starting after the market's creation): the option, purchase
// and day are kept, no Market is made up, and the mapping says why.
func TestMintOnUninitializedMarket(t *testing.T) {
	calls := &marketCalls{t: t, data: map[string]opData{}}
	c := mappingtest.New(t, calls.call)
	const tl, tu = 100, 110
	id := mappingtest.PositionID(t, uniHandler, wethUSDC, common.Address{}, tl, tu)
	c.Emit("HandlerV2_uniswap", hV2, mintedV2, "handleMintedPositionV2", uniHandler,
		id, big.NewInt(1e9), wethUSDC, common.Address{}, lp, big.NewInt(tl), big.NewInt(tu))
	calls.data[optID(marketV2, 3)] = opData{legs: 1, tl: tl, tu: tu, expiry: 1_700_003_600}
	c.Emit("HandlerV2_uniswap", hV2, "LogUsePosition(uint256,uint128)", "handleUsePosition", uniHandler, id, big.NewInt(5))
	c.Emit("OptionMarketV2_0x501b", mV2, mintV2Sig, "handleMintOptionV2", marketV2, alice, big.NewInt(3), false, big.NewInt(9), big.NewInt(20), big.NewInt(1))
	if c.Store.Get("Option", optID(marketV2, 3)) == nil || len(c.Store.All("Purchase")) != 1 {
		t.Fatal("the option or its purchase was not indexed")
	}
	if m := c.Store.Get("Market", strings.ToLower(marketV2.Hex())); m != nil {
		t.Errorf("a Market was made up: %+v", m)
	}
	if days := c.Store.All("MarketDayData"); len(days) != 1 {
		t.Errorf("days %v", days)
	} else {
		c.WantBig("MarketDayData", days[0], "putVolume", big.NewInt(20))
	}
	logs := c.Logs["OptionMarketV2_0x501b"]
	if len(logs) != 1 || logs[0].Level != 1 || !strings.Contains(logs[0].Message, "no Market") {
		t.Errorf("logs %+v, want one error naming the missing Market", logs)
	}
}
