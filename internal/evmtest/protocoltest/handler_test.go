package protocoltest

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
)

// Calls and puts on a normal (call asset token0) and an inverted market:
// the leg sits on the side of the price where it holds the asset used, the
// price moves through it, and the profit is the pool's output for the
// amount to swap minus amountReq, both from the clamm maths.
func TestCallsAndPutsNormalAndInverted(t *testing.T) {
	for _, inverted := range []bool{false, true} {
		p := Deploy(t, Config{Inverted: inverted})
		for _, isCall := range []bool{true, false} {
			_, tick := p.Slot0(p.Pool)
			used := p.PutAsset
			if isCall {
				used = p.CallAsset
			}
			usedIs0 := used == p.Token0
			r := Range{TickLower: tick - 110, TickUpper: tick - 100}
			itm := tick - 300
			if usedIs0 { // token0 is held above the price
				r = Range{TickLower: tick + 100, TickUpper: tick + 110}
				itm = tick + 300
			}
			_, l, err := p.Deposit(p.Users[0], r, e18(1))
			if err != nil {
				t.Fatal(err)
			}
			id, rc, err := p.Buy(p.Users[1], Option{IsCall: isCall, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, l}}})
			if err != nil {
				t.Fatalf("inverted %v call %v: %v", inverted, isCall, err)
			}
			a0, a1 := rangeAmounts(t, r, l)
			toSwap, req := a1, a0
			if usedIs0 {
				toSwap, req = a0, a1
			}
			eq(t, "totalAssetWithdrawn", p.Find(rc, "LogMintOption").Args["totalAssetWithdrawn"].(*big.Int), toSwap)
			if _, err := p.SwapToTick(p.Users[2], 500, itm); err != nil {
				t.Fatal(err)
			}
			out, _ := p.Quote(used, toSwap, 500)
			got := p.other(used)
			before := p.Balance(got, p.Users[1].Addr)
			rc, err = p.Exercise(p.Users[1], id, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), l}})
			if err != nil {
				t.Fatalf("inverted %v call %v: %v", inverted, isCall, err)
			}
			ex := p.Find(rc, "LogExerciseOption")
			eq(t, "profit", ex.Args["totalProfit"].(*big.Int), sub(out, req))
			eq(t, "relocked", ex.Args["totalAssetRelocked"].(*big.Int), toSwap)
			eq(t, "paid in the other asset", sub(p.Balance(got, p.Users[1].Addr), before), sub(out, req))
			checkPoolInvariant(t, p, r)
			// Back to the start for the next case.
			if _, err := p.SwapToTick(p.Users[2], 500, tick); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Fees earned in one token only (the price crossed the range upwards) and
// above 1,000 units, with the amount for 2 units of liquidity above the
// other token's owed fees: the next deposit compounds them (collect, add
// as liquidity, LogFeeCompound), as the real handler.
func TestFeeCompoundOnDeposit(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(p.Users[2], 500, tick+300); err != nil { // through the range: token1 in, fees in token1
		t.Fatal(err)
	}
	rc, err := p.Chain.Send(p.Users[3], p.PositionManager, PositionManager.ABI, "mintPosition", p.Handler, positionData(p.norm(r), e18(1)))
	if err != nil {
		t.Fatal(err)
	}
	fc := p.Find(rc, "LogFeeCompound")
	if fc == nil {
		t.Fatal("no LogFeeCompound")
	}
	var collect, compoundMint, depositMint *Event
	for _, e := range p.Events(rc) {
		e := e
		switch {
		case e.Name == "Collect" && e.Address == p.Pool:
			collect = &e
		case e.Name == "Mint" && e.Address == p.Pool && depositMint == nil:
			depositMint = &e
		case e.Name == "Mint" && e.Address == p.Pool:
			compoundMint = &e
		}
	}
	if collect.Args["amount0"].(*big.Int).Sign() != 0 || collect.Args["amount1"].(*big.Int).Cmp(big.NewInt(1000)) <= 0 {
		t.Fatalf("collected fees %v", collect.Args)
	}
	eq(t, "compounded liquidity = the pool's mint", fc.Args["liquidity"].(*big.Int), compoundMint.Args["amount"].(*big.Int))
	eq(t, "compounded from the collected fees", compoundMint.Args["amount1"].(*big.Int), collect.Args["amount1"].(*big.Int))
	minted := p.Find(rc, "LogMintedPosition").Args["liquidityMinted"].(*big.Int)
	eq(t, "LogMintedPosition = the deposit's pool mint", minted, depositMint.Args["amount"].(*big.Int))
	info := p.RangeInfo(r)
	eq(t, "totalLiquidity", info.TotalLiquidity, add(add(l, fc.Args["liquidity"].(*big.Int)), minted))
	if info.TokensOwed0.Sign() != 0 || info.TokensOwed1.Sign() != 0 {
		t.Fatalf("owed fees left: %+v", info)
	}
	checkPoolInvariant(t, p, r)
}

// Reserving burns shares into reserved liquidity that stays in the pool
// (LogBurnedPosition, then LogReservedLiquidity); it can be withdrawn after
// the 6-hour cooldown (LogWithdrawReservedLiquidity).
func TestReserveAndWithdrawReserved(t *testing.T) {
	s := newCallTTL(t, 7*3600)
	p := s.p
	before := p.RangeInfo(s.r)
	shares := new(big.Int).Div(p.Chain.Call(p.Handler, HandlerV2.ABI, "balanceOf", s.lp.Addr, p.TokenID(s.r))[0].(*big.Int), big.NewInt(2))
	// The real conversion, in the block the reservation lands in: shares *
	// (totalLiquidity + 1 - donation still locked) / totalSupply, rounded
	// up; the premium donated at the mint unlocks linearly over 100 blocks.
	next := new(big.Int).SetUint64(p.Chain.BlockNumber() + 1)
	elapsed := new(big.Int).Sub(next, new(big.Int).SetUint64(before.LastDonation))
	locked := sub(before.DonatedLiquidity, new(big.Int).Div(new(big.Int).Mul(before.DonatedLiquidity, elapsed), big.NewInt(100)))
	num := new(big.Int).Mul(shares, sub(add(before.TotalLiquidity, big.NewInt(1)), locked))
	want, rem := new(big.Int).QuoRem(num, before.TotalSupply, new(big.Int))
	if rem.Sign() != 0 {
		want.Add(want, big.NewInt(1))
	}
	rc, err := p.Reserve(s.lp, s.r, shares)
	if err != nil {
		t.Fatal(err)
	}
	ev := p.Events(rc)
	var names []string
	for _, e := range ev {
		if e.Address == p.Handler {
			names = append(names, e.Name)
		}
	}
	if len(names) != 3 || names[1] != "LogBurnedPosition" || names[2] != "LogReservedLiquidity" {
		t.Fatalf("handler events %v", names)
	}
	burned := p.Find(rc, "LogBurnedPosition").Args["liquidityBurned"].(*big.Int)
	eq(t, "burned = convertToAssets(shares)", burned, want)
	eq(t, "reserved", p.Find(rc, "LogReservedLiquidity").Args["liquidityReserved"].(*big.Int), burned)
	after := p.RangeInfo(s.r)
	eq(t, "totalLiquidity", after.TotalLiquidity, sub(before.TotalLiquidity, burned))
	eq(t, "reservedLiquidity", after.ReservedLiquidity, burned)
	checkPoolInvariant(t, p, s.r)

	if _, err := p.WithdrawReserved(s.lp, s.r, burned); !IsRevert(err, "BeforeReserveCooldown") {
		t.Fatalf("before the cooldown: %v", err)
	}
	p.Chain.AdjustTime(6*time.Hour + time.Second)
	// The option still uses the range: reserved liquidity waits for it.
	if _, err := p.WithdrawReserved(s.lp, s.r, burned); !IsRevert(err, "InsufficientLiquidity") {
		t.Fatalf("while the option uses the range: %v", err)
	}
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}}); err != nil {
		t.Fatal(err)
	}
	callBefore, putBefore := p.Balance(p.CallAsset, s.lp.Addr), p.Balance(p.PutAsset, s.lp.Addr)
	rc, err = p.WithdrawReserved(s.lp, s.r, burned)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "withdrawn", p.Find(rc, "LogWithdrawReservedLiquidity").Args["liquidityWithdrawn"].(*big.Int), burned)
	b := p.Find(rc, "Burn")
	eq(t, "call asset = the pool's burn", sub(p.Balance(p.CallAsset, s.lp.Addr), callBefore), b.Args["amount0"].(*big.Int))
	eq(t, "put asset = the pool's burn", sub(p.Balance(p.PutAsset, s.lp.Addr), putBefore), b.Args["amount1"].(*big.Int))
	eq(t, "reservedLiquidity", p.RangeInfo(s.r).ReservedLiquidity, new(big.Int))
	checkPoolInvariant(t, p, s.r)
}

// What the market cannot buy: a paused handler, a handler not whitelisted
// with the market, a hooked range beyond its TTL.
func TestUnbuyableLiquidity(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	buy := func(r Range, ttl uint64) error {
		_, _, err := p.Buy(p.Users[1], Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: ttl, Legs: []Leg{{r, new(big.Int).Div(l, big.NewInt(4))}}})
		return err
	}
	p.Pause(p.Handler, true)
	if err := buy(r, 3600); !IsRevert(err, "Pausable: paused") {
		t.Fatalf("paused: %v", err)
	}
	p.Pause(p.Handler, false)
	if err := buy(r, 3600); err != nil {
		t.Fatal(err)
	}

	h2 := p.DeployHandler()
	r2 := Range{Handler: h2, TickLower: tick + 100, TickUpper: tick + 110}
	if _, _, err := p.Deposit(p.Users[0], r2, e18(1)); err != nil {
		t.Fatal(err)
	}
	if err := buy(r2, 3600); !IsRevert(err, "DopexV2PositionManager__NotWhitelistedApp") {
		t.Fatalf("handler not paired with the market: %v", err)
	}
	p.WhitelistApp(h2, p.Market, true)
	if err := buy(r2, 3600); err != nil {
		t.Fatal(err)
	}

	hooked := Range{Hook: p.Hook24h, TickLower: tick + 100, TickUpper: tick + 110}
	if _, _, err := p.Deposit(p.Users[0], hooked, e18(1)); err != nil {
		t.Fatal(err)
	}
	var re *RevertError
	if err := buy(hooked, 24*3600+1); !asRevert(err, &re) || len(re.Data) != 0 {
		t.Fatalf("hook, TTL above 24h: %v", err)
	}
	if err := buy(hooked, 24*3600); err != nil {
		t.Fatal(err)
	}
	week := Range{Hook: p.Hook1Week, TickLower: tick + 100, TickUpper: tick + 110}
	if _, _, err := p.Deposit(p.Users[0], week, e18(1)); err != nil {
		t.Fatal(err)
	}
	if err := buy(week, 7*24*3600+1); !asRevert(err, &re) || len(re.Data) != 0 {
		t.Fatalf("one-week hook, TTL above 7 days: %v", err)
	}
	if err := buy(week, 7*24*3600); err != nil {
		t.Fatal(err)
	}
	if p.TokenID(hooked).Cmp(p.TokenID(r)) == 0 || p.TokenID(r2).Cmp(p.TokenID(r)) == 0 {
		t.Fatal("hook and handler are part of the token id")
	}
}

// A mint and an exercise of another option in one block: both land, in
// sending order, with their events.
func TestMintAndExerciseInOneBlock(t *testing.T) {
	s := newCall(t)
	p := s.p
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	r2 := Range{TickLower: s.tick + 400, TickUpper: s.tick + 410}
	_, l2, err := p.Deposit(s.lp, r2, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	var rcs []*types.Receipt
	rcs = p.Chain.Block(func() {
		if _, _, err := p.Buy(p.Users[3], Option{IsCall: true, TickLower: r2.TickLower, TickUpper: r2.TickUpper, TTL: 3600, Legs: []Leg{{r2, l2}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exercise(s.buyer, s.id, []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}}); err != nil {
			t.Fatal(err)
		}
	})
	if len(rcs) != 2 || rcs[0].BlockNumber.Cmp(rcs[1].BlockNumber) != 0 {
		t.Fatalf("receipts %d", len(rcs))
	}
	for i, name := range []string{"LogMintOption", "LogExerciseOption"} {
		if rcs[i].Status != types.ReceiptStatusSuccessful || p.Find(rcs[i], name) == nil {
			t.Fatalf("transaction %d: status %d, no %s", i, rcs[i].Status, name)
		}
	}
	if p.OwnerOf(p.Find(rcs[0], "LogMintOption").Args["tokenId"].(*big.Int)) != p.Users[3].Addr {
		t.Fatal("owner of the new option")
	}
}

// The protocol fee goes to feeTo on top of the premium (the premium, which
// the legs receive as donations, excludes it); maxCostAllowance bounds the
// two together.
func TestProtocolFeeAndDonation(t *testing.T) {
	p := Deploy(t, Config{})
	_, tick := p.Slot0(p.Pool)
	feeTo := p.Users[3]
	p.SetProtocolFee(feeTo.Addr, 125_000) // 12.5% of the premium
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, l, err := p.Deposit(p.Users[0], r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	o := Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, l}}}
	o.MaxCost = big.NewInt(1)
	if _, _, err := p.Buy(p.Users[1], o); !IsRevert(err, "DopexV2OptionMarket__MaxCostAllowanceExceeded") {
		t.Fatalf("max cost: %v", err)
	}
	o.MaxCost = nil
	feeBefore, buyerBefore := p.Balance(p.CallAsset, feeTo.Addr), p.Balance(p.CallAsset, p.Users[1].Addr)
	before := p.RangeInfo(r)
	_, rc, err := p.Buy(p.Users[1], o)
	if err != nil {
		t.Fatal(err)
	}
	mint := p.Find(rc, "LogMintOption")
	premium, fees := mint.Args["premiumAmount"].(*big.Int), mint.Args["protocolFees"].(*big.Int)
	eq(t, "fee = 12.5% of the premium", fees, new(big.Int).Div(new(big.Int).Mul(premium, big.NewInt(125_000)), big.NewInt(1e6)))
	eq(t, "feeTo received", sub(p.Balance(p.CallAsset, feeTo.Addr), feeBefore), fees)
	eq(t, "buyer paid premium + fee", sub(buyerBefore, p.Balance(p.CallAsset, p.Users[1].Addr)), add(premium, fees))
	var donation *Event
	for _, e := range p.FindAll(rc, "LogDonation") {
		if e.Address == p.Handler {
			donation = &e
		}
	}
	donated := donation.Args["liquidityDonated"].(*big.Int)
	var poolMint *Event
	for _, e := range p.FindAll(rc, "Mint") {
		if e.Address == p.Pool {
			poolMint = &e
		}
	}
	eq(t, "donated = the pool's mint", donated, poolMint.Args["amount"].(*big.Int))
	if poolMint.Args["amount0"].(*big.Int).Cmp(premium) > 0 {
		t.Fatal("the donation spends at most the premium")
	}
	after := p.RangeInfo(r)
	eq(t, "totalLiquidity += donation", after.TotalLiquidity, add(before.TotalLiquidity, donated))
	eq(t, "donatedLiquidity", after.DonatedLiquidity, donated)
	if after.LastDonation != rc.BlockNumber.Uint64() {
		t.Fatalf("lastDonation %d, block %d", after.LastDonation, rc.BlockNumber)
	}
	checkPoolInvariant(t, p, r)
}
