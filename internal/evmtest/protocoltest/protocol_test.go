package protocoltest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

func sqrtAt(t *testing.T, tick int) *big.Int {
	s, err := clamm.SqrtRatioAtTick(tick)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// rangeAmounts is (amount0, amount1) of L over the whole range, from the
// gateway's clamm package (checked against @uniswap/v3-sdk vectors), not
// from the contracts under test.
func rangeAmounts(t *testing.T, r Range, l *big.Int) (*big.Int, *big.Int) {
	a0, a1, err := clamm.RangeAmounts(r.TickLower, r.TickUpper, l)
	if err != nil {
		t.Fatal(err)
	}
	return a0, a1
}

func eq(t *testing.T, what string, got, want *big.Int) {
	t.Helper()
	if got.Cmp(want) != 0 {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
}

func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }
func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }

// checkPoolInvariant: the handler's own Uniswap position holds exactly
// totalLiquidity + reservedLiquidity - liquidityUsed.
func checkPoolInvariant(t *testing.T, p *Protocol, r Range) {
	t.Helper()
	r = p.norm(r)
	info := p.RangeInfo(r)
	key := crypto.Keccak256Hash(r.Handler.Bytes(), int24Bytes(r.TickLower), int24Bytes(r.TickUpper))
	pos := p.Chain.Call(r.Pool, mustUni(t, "pool").ABI, "positions", key)
	want := sub(add(info.TotalLiquidity, info.ReservedLiquidity), info.LiquidityUsed)
	eq(t, "pool position liquidity vs handler accounting", pos[0].(*big.Int), want)
}

func int24Bytes(v int) []byte {
	u := uint32(int32(v)) & 0xffffff
	return []byte{byte(u >> 16), byte(u >> 8), byte(u)}
}

// swapOuts are the put-asset amounts each Uniswap Swap event of a receipt paid out.
func swapOuts(p *Protocol, rcEvents []Event, outIs0 bool) []*big.Int {
	var outs []*big.Int
	for _, e := range rcEvents {
		if e.Name != "Swap" {
			continue
		}
		v := e.Args["amount1"].(*big.Int)
		if outIs0 {
			v = e.Args["amount0"].(*big.Int)
		}
		outs = append(outs, new(big.Int).Neg(v))
	}
	return outs
}

type callSetup struct {
	p      *Protocol
	tick   int
	r      Range
	l      *big.Int // the option's liquidity (the shares the deposit minted)
	id     *big.Int
	lp     *Account
	buyer  *Account
	trader *Account
}

// newCall deploys, deposits L=1e18 over [tick+100, tick+110] (above the
// price: call asset only) and buys a one-leg call on all of it.
func newCall(t *testing.T) callSetup { return newCallTTL(t, 3600) }

func newCallTTL(t *testing.T, ttl uint64) callSetup {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	s := callSetup{p: p, tick: tick, lp: p.Users[0], buyer: p.Users[1], trader: p.Users[2]}
	s.r = Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, shares, err := p.Deposit(s.lp, s.r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	s.l = shares
	s.id, _, err = p.Buy(s.buyer, Option{IsCall: true, TickLower: s.r.TickLower, TickUpper: s.r.TickUpper, TTL: ttl, Legs: []Leg{{s.r, s.l}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A one-leg call: the premium follows the documented pricing, the exercise
// pays exactly (what the pool gave for amountToSwap) - amountReq, the
// handler re-mints at the post-swap price and keeps the rounding residue
// as used liquidity, and every event decodes with the real signatures.
func TestExerciseCallPaysSwapOutputMinusAmountReq(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	tokenID, shares, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "tokenId", tokenID, p.TokenID(r))
	info := p.RangeInfo(r)
	eq(t, "totalLiquidity after the first deposit", info.TotalLiquidity, shares)
	eq(t, "totalSupply after the first deposit", info.TotalSupply, shares)
	if info.Token0 != p.Token0 || info.Token1 != p.Token1 || info.Fee.Int64() != 500 {
		t.Fatalf("token ids info %+v", info)
	}
	checkPoolInvariant(t, p, r)

	l := shares
	amount0, amount1 := rangeAmounts(t, r, l)
	putBefore := p.Balance(p.PutAsset, buyer.Addr)
	callBefore := p.Balance(p.CallAsset, buyer.Addr)
	lastPrice := p.Chain.Call(p.Market, MarketV2.ABI, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
	id, rc, err := p.Buy(buyer, Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, l}}})
	if err != nil {
		t.Fatal(err)
	}
	mint := p.Find(rc, "LogMintOption")
	eq(t, "totalAssetWithdrawn", mint.Args["totalAssetWithdrawn"].(*big.Int), amount0)
	// premium = amount * (spot * 1%) / 1e18 * 1e18 / spot, as the real formula over the documented price.
	optionPrice := new(big.Int).Div(new(big.Int).Mul(lastPrice, big.NewInt(10_000)), big.NewInt(1e6))
	inQuote := new(big.Int).Div(new(big.Int).Mul(amount0, optionPrice), e18(1))
	premium := new(big.Int).Div(new(big.Int).Mul(inQuote, e18(1)), lastPrice)
	eq(t, "premium", mint.Args["premiumAmount"].(*big.Int), premium)
	eq(t, "buyer paid the premium", sub(callBefore, p.Balance(p.CallAsset, buyer.Addr)), premium)
	if mint.Args["user"].(common.Address) != buyer.Addr || mint.Args["isCall"] != true || mint.Args["protocolFees"].(*big.Int).Sign() != 0 {
		t.Fatalf("LogMintOption %v", mint.Args)
	}
	use := p.FindAll(rc, "LogUsePosition")
	if len(use) != 2 { // the handler's and the position manager's
		t.Fatalf("LogUsePosition events: %d", len(use))
	}
	eq(t, "handler LogUsePosition", use[0].Args["liquidityUsed"].(*big.Int), l)
	donated := p.FindAll(rc, "LogDonation")[0].Args["liquidityDonated"].(*big.Int)
	info = p.RangeInfo(r)
	eq(t, "liquidityUsed after the mint", info.LiquidityUsed, l)
	eq(t, "totalLiquidity after the donation", info.TotalLiquidity, add(shares, donated))
	checkPoolInvariant(t, p, r)
	if p.OwnerOf(id) != buyer.Addr {
		t.Fatal("owner")
	}

	if _, err := p.SwapToTick(trader, 500, tick+300); err != nil {
		t.Fatal(err)
	}
	quoteOut, _ := p.Quote(p.CallAsset, amount0, 500)
	legs := []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), l}}
	// The return value (AssetsCache) from a simulation in the same state.
	ret, err := p.Chain.TryCall(buyer.Addr, p.Market, MarketV2.ABI, "exerciseOption", ExerciseArgs(id, legs))
	if err != nil {
		t.Fatal(err)
	}
	rc, err = p.Exercise(buyer, id, legs)
	if err != nil {
		t.Fatal(err)
	}
	ex := p.Find(rc, "LogExerciseOption")
	profit := sub(quoteOut, amount1)
	eq(t, "profit = swap output - amountReq", ex.Args["totalProfit"].(*big.Int), profit)
	eq(t, "totalAssetRelocked", ex.Args["totalAssetRelocked"].(*big.Int), amount0)
	eq(t, "buyer received the profit", sub(p.Balance(p.PutAsset, buyer.Addr), putBefore), profit)
	cache := ret[0].(struct {
		AssetToUse         common.Address `json:"assetToUse"`
		AssetToGet         common.Address `json:"assetToGet"`
		TotalProfit        *big.Int       `json:"totalProfit"`
		TotalAssetRelocked *big.Int       `json:"totalAssetRelocked"`
	})
	if cache.AssetToUse != p.CallAsset || cache.AssetToGet != p.PutAsset {
		t.Fatalf("AssetsCache %+v", cache)
	}
	eq(t, "returned totalProfit", cache.TotalProfit, profit)
	unuse := p.FindAll(rc, "LogUnusePosition")[0].Args["liquidityUnused"].(*big.Int)
	if unuse.Cmp(l) > 0 || new(big.Int).Sub(l, unuse).Cmp(big.NewInt(1e12)) > 0 {
		t.Fatalf("re-minted %s for %s", unuse, l)
	}
	eq(t, "liquidityUsed keeps the re-mint's rounding residue", p.RangeInfo(r).LiquidityUsed, sub(l, unuse))
	checkPoolInvariant(t, p, r)
	eq(t, "leg liquidityToUse", p.OpTicks(id)[0].Liquidity, new(big.Int))
}

// Two legs through one pool: the second leg trades at the price the first
// left (QuoterV2 after the first swap), not at the price both saw before.
func TestTwoLegsSecondSeesFirstLegsPriceImpact(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	r0 := Range{TickLower: tick + 100, TickUpper: tick + 110}
	r1 := Range{Hook: p.Hook24h, TickLower: tick + 100, TickUpper: tick + 110}
	_, l0, err := p.Deposit(lp, r0, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	_, l1, err := p.Deposit(lp, r1, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := p.Buy(buyer, Option{IsCall: true, TickLower: r0.TickLower, TickUpper: r0.TickUpper, TTL: 3600, Legs: []Leg{{r0, l0}, {r1, l1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(trader, 500, tick+300); err != nil {
		t.Fatal(err)
	}
	a0, req0 := rangeAmounts(t, r0, l0)
	a1, req1 := rangeAmounts(t, r1, l1)
	first, _ := p.Quote(p.CallAsset, a0, 500)
	sameState, _ := p.Quote(p.CallAsset, a1, 500)
	// The state after leg 0's swap, on a twin chain: Deploy is
	// deterministic, so the same steps give the same pool there.
	twin := Deploy(t, Config{})
	for _, rr := range []Range{r0, r1} {
		if _, _, err := twin.Deposit(twin.Users[0], rr, e18(1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := twin.Buy(twin.Users[1], Option{IsCall: true, TickLower: r0.TickLower, TickUpper: r0.TickUpper, TTL: 3600, Legs: []Leg{{r0, l0}, {r1, l1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := twin.SwapToTick(twin.Users[2], 500, tick+300); err != nil {
		t.Fatal(err)
	}
	if again, _ := twin.Quote(twin.CallAsset, a0, 500); again.Cmp(first) != 0 {
		t.Fatalf("the twin chain differs: %s vs %s", again, first)
	}
	if _, err := twin.Swap(twin.Users[2], twin.CallAsset, a0, 500); err != nil {
		t.Fatal(err)
	}
	second, _ := twin.Quote(twin.CallAsset, a1, 500)
	if second.Cmp(sameState) >= 0 {
		t.Fatalf("the first swap should worsen the second: %s after, %s before", second, sameState)
	}

	rc, err := p.Exercise(buyer, id, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), l0}, {p.Swapper, UniV3SwapData(500, big.NewInt(0)), l1}})
	if err != nil {
		t.Fatal(err)
	}
	outs := swapOuts(p, p.Events(rc), false)
	if len(outs) != 2 {
		t.Fatalf("swaps: %d", len(outs))
	}
	eq(t, "leg 0 output", outs[0], first)
	eq(t, "leg 1 output (after leg 0's impact)", outs[1], second)
	profit := sub(add(first, second), add(req0, req1))
	eq(t, "profit", p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int), profit)
}

// A leg whose own swap leaves the pool inside its range makes the whole
// exercise revert (the re-mint asks the market for the used asset too);
// the same option with that leg left out exercises.
func TestLegPushedIntoItsRangeRevertsAndCanBeLeftOut(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	r0 := Range{TickLower: tick + 100, TickUpper: tick + 110}
	r1 := Range{Hook: p.Hook24h, TickLower: tick + 100, TickUpper: tick + 110}
	_, l0, err := p.Deposit(lp, r0, new(big.Int).Div(e18(1), big.NewInt(10)))
	if err != nil {
		t.Fatal(err)
	}
	_, l1, err := p.Deposit(lp, r1, e18(4))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := p.Buy(buyer, Option{IsCall: true, TickLower: r0.TickLower, TickUpper: r0.TickUpper, TTL: 3600, Legs: []Leg{{r0, l0}, {r1, l1}}})
	if err != nil {
		t.Fatal(err)
	}
	a0, _ := rangeAmounts(t, r0, l0)
	a1, _ := rangeAmounts(t, r1, l1)
	// Put the price in the middle of the range, then buy back exactly what
	// the legs will sell: selling it again brings the price back inside.
	if _, err := p.SwapToTick(trader, 500, tick+105); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapExactOut(trader, p.CallAsset, add(a0, a1), 500); err != nil {
		t.Fatal(err)
	}
	_, start := p.Slot0(p.Pool)
	_, after := p.Quote(p.CallAsset, add(a0, a1), 500)
	if after.Cmp(sqrtAt(t, r0.TickLower)) <= 0 || after.Cmp(sqrtAt(t, r0.TickUpper)) >= 0 {
		t.Fatalf("setup: the legs' swaps should end inside the range (start tick %d)", start)
	}
	swap := UniV3SwapData(500, big.NewInt(0))
	_, err = p.Exercise(buyer, id, []ExerciseLeg{{p.Swapper, swap, l0}, {p.Swapper, swap, l1}})
	if !IsRevert(err, "insufficient allowance") {
		t.Fatalf("both legs: want the re-mint's transfer to revert, got %v", err)
	}
	rc, err := p.Exercise(buyer, id, []ExerciseLeg{{p.Swapper, swap, l0}, {p.Swapper, swap, new(big.Int)}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int).Sign() <= 0 {
		t.Fatal("leg 0 alone should profit")
	}
	legs := p.OpTicks(id)
	eq(t, "leg 0 left", legs[0].Liquidity, new(big.Int))
	eq(t, "leg 1 untouched", legs[1].Liquidity, l1)
}

// Out of the money the swap cannot cover amountReq: NotEnoughAfterSwap.
// Through 1inch the router's minReturn is the only minimum: met, the
// exercise goes through; one unit above, the router refuses and
// OneInchSwapper's bare require reverts the exercise without a reason.
func TestNotEnoughAfterSwapAndOneInchMinReturn(t *testing.T) {
	s := newCall(t)
	p := s.p
	amount0, _ := rangeAmounts(t, s.r, s.l)
	_, err := p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}})
	if !IsRevert(err, "DopexV2OptionMarket__NotEnoughAfterSwap") {
		t.Fatalf("out of the money: %v", err)
	}
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	quote, _ := p.Quote(p.CallAsset, amount0, 500)
	tooMuch := OneInchSwapData(p.CallAsset, p.PutAsset, amount0, add(quote, big.NewInt(1)), p.Market, 500)
	_, err = p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.OneInchSwapper, tooMuch, s.l}})
	var re *RevertError
	if !IsRevert(err, "") || !asRevert(err, &re) || len(re.Data) != 0 {
		t.Fatalf("minReturn above the output: want a reason-less revert, got %v", err)
	}
	// The router itself names the failure.
	p.Chain.MustSend(s.trader, p.CallAsset, Token.ABI, "approve", p.OneInchRouter, maxUint)
	_, err = p.Chain.SendRaw(s.trader, p.OneInchRouter, OneInchSwapData(p.CallAsset, p.PutAsset, amount0, add(quote, big.NewInt(1)), s.trader.Addr, 500), "swap")
	if !IsRevert(err, "ReturnAmountIsNotEnough") {
		t.Fatalf("router: %v", err)
	}
	ok := OneInchSwapData(p.CallAsset, p.PutAsset, amount0, quote, p.Market, 500)
	rc, err := p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.OneInchSwapper, ok, s.l}})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "1inch leg output", swapOuts(p, p.Events(rc), false)[0], quote)
}

// unusePosition re-minting more than liquidityUsed: the excess becomes
// totalLiquidity and liquidityUsed is zeroed (the branch a whitelisted app
// reaches by re-adding liquidity it never used).
func TestUnuseOverflowBranch(t *testing.T) {
	s := newCall(t)
	p := s.p
	app := p.Users[3]
	p.WhitelistApp(p.Handler, app.Addr, true)
	before := p.RangeInfo(s.r)
	extra := new(big.Int).Add(before.LiquidityUsed, e18(1)) // used + 1e18: more than used
	rc, err := p.UnuseDirect(app, s.r, extra)
	if err != nil {
		t.Fatal(err)
	}
	reminted := p.FindAll(rc, "LogUnusePosition")[0].Args["liquidityUnused"].(*big.Int)
	if reminted.Cmp(before.LiquidityUsed) <= 0 {
		t.Fatalf("setup: re-minted %s, used %s", reminted, before.LiquidityUsed)
	}
	after := p.RangeInfo(s.r)
	eq(t, "liquidityUsed", after.LiquidityUsed, new(big.Int))
	eq(t, "totalLiquidity", after.TotalLiquidity, add(before.TotalLiquidity, sub(reminted, before.LiquidityUsed)))
	checkPoolInvariant(t, p, s.r)

	// Without the whitelist the position manager refuses the app.
	p.WhitelistApp(p.Handler, app.Addr, false)
	if _, err := p.UnuseDirect(app, s.r, e18(1)); !IsRevert(err, "DopexV2PositionManager__NotWhitelistedApp") {
		t.Fatalf("unlisted app: %v", err)
	}
}

// An exercise delegate (AutoExerciseTimeBased) receives the profit, keeps
// executorFee/1e6 of it for feeTo and forwards the rest; LogExerciseOption
// still names the owner.
func TestAutoExerciseDelegateKeepsFee(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader, feeTo := p.Users[0], p.Users[1], p.Users[2], p.Users[3]
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, l, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := p.Buy(buyer, Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 600, Legs: []Leg{{r, l}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Delegate(buyer, p.AutoExercise, true); err != nil {
		t.Fatal(err)
	}
	p.Chain.MustSend(p.Owner, p.AutoExercise, AutoExercise.ABI, "updateFeeTo", feeTo.Addr)
	if _, err := p.SwapToTick(trader, 500, tick+300); err != nil {
		t.Fatal(err)
	}
	legs := []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), l}}
	if _, err := p.AutoExerciseOption(id, big.NewInt(100_000), legs); !IsRevert(err, "AutoExerciseOneMin__TooSoon") {
		t.Fatalf("10 minutes before expiry: %v", err)
	}
	p.Chain.AdjustTime(400e9) // 400 s: within timeToSettle (5 min) of expiry
	if _, err := p.AutoExerciseOption(id, big.NewInt(100_001), legs); !IsRevert(err, "AutoExerciseOneMin__GreedyExecutor") {
		t.Fatalf("fee above 10%%: %v", err)
	}
	ownerBefore, feeBefore := p.Balance(p.PutAsset, buyer.Addr), p.Balance(p.PutAsset, feeTo.Addr)
	rc, err := p.AutoExerciseOption(id, big.NewInt(100_000), legs)
	if err != nil {
		t.Fatal(err)
	}
	ex := p.Find(rc, "LogExerciseOption")
	if ex.Args["user"].(common.Address) != buyer.Addr {
		t.Fatalf("LogExerciseOption.user %v, want the owner", ex.Args["user"])
	}
	profit := ex.Args["totalProfit"].(*big.Int)
	fee := new(big.Int).Div(profit, big.NewInt(10))
	eq(t, "fee to feeTo", sub(p.Balance(p.PutAsset, feeTo.Addr), feeBefore), fee)
	eq(t, "owner's share", sub(p.Balance(p.PutAsset, buyer.Addr), ownerBefore), sub(profit, fee))
}

// positionSplitter: a new id for `to`, liquidity moved leg by leg, only
// LogSplitOption (and the ERC721 Transfer) emitted; the split option
// exercises for its new owner; ERC721 transfers move ownership.
func TestSplitAndTransfer(t *testing.T) {
	s := newCall(t)
	p := s.p
	other := p.Users[3]
	half := new(big.Int).Div(s.l, big.NewInt(2))
	newID, rc, err := p.Split(s.buyer, s.id, other.Addr, []*big.Int{half})
	if err != nil {
		t.Fatal(err)
	}
	if p.Find(rc, "LogMintOption") != nil {
		t.Fatal("a split emits no LogMintOption")
	}
	ev := p.Find(rc, "LogSplitOption")
	if ev.Args["user"].(common.Address) != s.buyer.Addr || ev.Args["tokenId"].(*big.Int).Cmp(s.id) != 0 || ev.Args["to"].(common.Address) != other.Addr {
		t.Fatalf("LogSplitOption %v", ev.Args)
	}
	tr := p.Find(rc, "Transfer")
	if tr.Args["from"].(common.Address) != (common.Address{}) || tr.Args["to"].(common.Address) != other.Addr || tr.Args["tokenId"].(*big.Int).Cmp(newID) != 0 {
		t.Fatalf("ERC721 Transfer %v", tr.Args)
	}
	eq(t, "parent leg", p.OpTicks(s.id)[0].Liquidity, sub(s.l, half))
	child := p.OpTicks(newID)
	eq(t, "child leg", child[0].Liquidity, half)
	if child[0].Range != p.OpTicks(s.id)[0].Range {
		t.Fatal("child leg range")
	}
	if a, b := p.OpData(newID), p.OpData(s.id); a.OpTickArrayLen.Cmp(b.OpTickArrayLen) != 0 || a.TickLower != b.TickLower ||
		a.TickUpper != b.TickUpper || a.Expiry.Cmp(b.Expiry) != 0 || a.IsCall != b.IsCall {
		t.Fatalf("opData %+v vs %+v", a, b)
	}
	if _, err := p.Transfer(s.buyer, s.trader.Addr, s.id); err != nil {
		t.Fatal(err)
	}
	if p.OwnerOf(s.id) != s.trader.Addr || p.OwnerOf(newID) != other.Addr {
		t.Fatal("owners")
	}
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	swap := UniV3SwapData(500, big.NewInt(0))
	if _, err := p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.Swapper, swap, sub(s.l, half)}}); !IsRevert(err, "DopexV2OptionMarket__NotOwnerOrDelegator") {
		t.Fatalf("former owner: %v", err)
	}
	rc, err = p.Exercise(other, newID, []ExerciseLeg{{p.Swapper, swap, half}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Find(rc, "LogExerciseOption").Args["user"].(common.Address) != other.Addr {
		t.Fatal("split option's exercise names its owner")
	}
}

// The stand-ins speak the real ABIs: the gateway's own fragments of
// DopexV2OptionMarketV2 (selectors pinned against domain.md) and the
// events' topics from the real source's signatures.
func TestRealSignatures(t *testing.T) {
	real := []struct {
		a   abi.ABI
		sig string
		ev  string
	}{
		{MarketV2.ABI, "LogMintOption(address,uint256,bool,uint256,uint256,uint256)", "LogMintOption"},
		{MarketV2.ABI, "LogExerciseOption(address,uint256,uint256,uint256)", "LogExerciseOption"},
		{MarketV2.ABI, "LogSplitOption(address,uint256,uint256,address)", "LogSplitOption"},
		{MarketV2.ABI, "LogSettleOption(address,uint256)", "LogSettleOption"},
		{MarketV2.ABI, "LogUpdateExerciseDelegate(address,address,bool)", "LogUpdateExerciseDelegate"},
		{MarketV2.ABI, "Transfer(address,address,uint256)", "Transfer"},
		{HandlerV2.ABI, "LogMintedPosition(uint256,uint128,address,address,address,int24,int24)", "LogMintedPosition"},
		{HandlerV2.ABI, "LogBurnedPosition(uint256,uint128,address,address,address,int24,int24)", "LogBurnedPosition"},
		{HandlerV2.ABI, "LogFeeCompound(address,address,uint256,int24,int24,uint128)", "LogFeeCompound"},
		{HandlerV2.ABI, "LogUsePosition(uint256,uint128)", "LogUsePosition"},
		{HandlerV2.ABI, "LogUnusePosition(uint256,uint128)", "LogUnusePosition"},
		{HandlerV2.ABI, "LogDonation(uint256,uint128)", "LogDonation"},
		{HandlerV2.ABI, "LogReservedLiquidity(uint256,uint128,address)", "LogReservedLiquidity"},
		{HandlerV2.ABI, "LogWithdrawReservedLiquidity(uint256,uint128,address)", "LogWithdrawReservedLiquidity"},
		{PositionManager.ABI, "LogUsePosition(address,uint256)", "LogUsePosition"},
		{PositionManager.ABI, "LogUnusePosition(address,uint256)", "LogUnusePosition"},
		{PositionManager.ABI, "LogDonation(address,uint256)", "LogDonation"},
	}
	for _, r := range real {
		if got, want := r.a.Events[r.ev].ID, crypto.Keccak256Hash([]byte(r.sig)); got != want {
			t.Errorf("%s: topic %s, want %s", r.sig, got, want)
		}
	}
	if id := MarketV2.ABI.Events["LogMintOption"].ID.Hex(); id[:10] != "0x733a06dc" {
		t.Errorf("V2 LogMintOption topic %s", id)
	}
	for name, m := range contractsMarket().Methods {
		if got, ok := MarketV2.ABI.Methods[name]; !ok || string(got.ID) != string(m.ID) {
			t.Errorf("method %s: selector differs from the gateway's ABI", name)
		}
	}
	for name, e := range contractsMarket().Events {
		if MarketV2.ABI.Events[name].ID != e.ID {
			t.Errorf("event %s differs from the gateway's ABI", name)
		}
	}
	for name, e := range contractsErrors().Errors {
		if name == "DopexV2OptionMarket__InvalidCollateralTokenSplitting" {
			continue // not an error of DopexV2OptionMarketV2
		}
		if MarketV2.ABI.Errors[name].ID != e.ID {
			t.Errorf("error %s missing or different", name)
		}
	}
	// and the other way: a revert of the market the gateway cannot name
	// reaches a client as "unknown error 0x…"
	for name, e := range MarketV2.ABI.Errors {
		if contractsErrors().Errors[name].ID != e.ID {
			t.Errorf("the market's error %s is not among the gateway's", name)
		}
	}
}

func asRevert(err error, re **RevertError) bool {
	r, ok := err.(*RevertError)
	*re = r
	return ok
}
