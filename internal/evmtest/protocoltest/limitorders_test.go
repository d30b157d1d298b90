package protocoltest

import (
	"encoding/hex"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/signer/core/apitypes"
)

// The selectors and topics the spec (../shared/spec/limit-orders.md, from
// the real contract's strings) lists; the stand-in must have the same.
func TestLimitOrdersABIIsTheRealOnes(t *testing.T) {
	a := LimitOrdersC.ABI
	sel := map[string]string{"exerciseOption": "9d361417", "purchaseOption": "80f160a6", "fillOffer": "420d4f5f",
		"cancel": "6f5fdd16", "getOrderStructHash": "710bf08a", "computeDigest": "20ce6285",
		"getOrderSigner": "11d72139", "isOrderCancelled": "0c511d11"}
	for name, want := range sel {
		if got := hex.EncodeToString(a.Methods[name].ID); got != want {
			t.Errorf("%s selector %s, want %s", name, got, want)
		}
	}
	topics := map[string]string{
		"LogExerciseOrderFilled":  "13baa323890e26adff8b557fc13bb58ad4adb354328ea1f767a38139ea09e6c2",
		"LogPurchasedOrderFilled": "73a24a871298abc05097428695de086482ec7a5ac1a02f851c959fb0e8ed8bb1",
		"LogFillOffer":            "8911dc1fb328e37b5352df8fa238496b7bb1d71502f78d0386ea55012b9e6441",
		"LogOrdersMatched":        "c5d105d8051b44b9b8d824ee81bf63e2785c278374648df9a2c5937e75e77193",
		"LogOrderCancelled":       "6036720868e5a8a93887eeacd95cf1c993694395843dcc746449dcc5e05240d1",
	}
	for name, want := range topics {
		if got := hex.EncodeToString(a.Events[name].ID.Bytes()); got != want {
			t.Errorf("%s topic %s, want %s", name, got, want)
		}
	}
	errs := map[string]string{"LimitOrders__VerificationFailed": "5e5090fb", "LimitOrders__OrderExpired": "88e308b7",
		"LimitOrders__OrderCancelled": "9ce86e85", "LimitOrders__InvalidFullfillment": "dd83aac6",
		"LimitOrders__OrderRequirementsNotMet": "22378ce9"}
	for name, want := range errs {
		if got := hex.EncodeToString(a.Errors[name].ID.Bytes()[:4]); got != want {
			t.Errorf("%s selector %s, want %s", name, got, want)
		}
	}
}

// A take-profit signed as a wallet signs typed data: the contract's digest
// is go-ethereum's EIP-712 hash; below minProfit the fill reverts; after
// the price moves the fill pays the maker minProfit and the filler the
// rest of the market's totalProfit, exactly; the order is then used.
func TestLimitExercisePaysMakerMinProfitAndFillerTheRest(t *testing.T) {
	s := newCall(t)
	p := s.p
	p.DeployLimitOrders()
	alice, filler := s.buyer, s.trader
	if _, err := p.Delegate(alice, p.LimitOrders, true); err != nil {
		t.Fatal(err)
	}
	minProfit := big.NewInt(50_000_000) // 50 USDC
	o, sig := p.ExerciseOrder(alice, s.id, minProfit, p.OpData(s.id).Expiry.Uint64())

	wantDigest, _, err := apitypes.TypedDataAndHash(p.LimitTypedData(o))
	if err != nil {
		t.Fatal(err)
	}
	got := p.Chain.Call(p.LimitOrders, LimitOrdersC.ABI, "computeDigest", o)[0].([32]byte)
	if common.Hash(got) != common.BytesToHash(wantDigest) {
		t.Fatalf("computeDigest %x, EIP-712 hash %x", got, wantDigest)
	}
	if signer := p.Chain.Call(p.LimitOrders, LimitOrdersC.ABI, "getOrderSigner", o, sig)[0].(common.Address); signer != alice.Addr {
		t.Fatalf("getOrderSigner %s, want alice %s", signer, alice.Addr)
	}

	swaps := SwapLegs{Swapper: []common.Address{p.Swapper}, SwapData: [][]byte{UniV3SwapData(500, big.NewInt(0))}}
	if _, err := p.FillExercise(filler, o, sig, swaps); err == nil {
		t.Fatal("a fill below the strike succeeded")
	}
	if _, err := p.SwapToTick(filler, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	aliceBefore, fillerBefore := p.Balance(p.PutAsset, alice.Addr), p.Balance(p.PutAsset, filler.Addr)
	rc, err := p.FillExercise(filler, o, sig, swaps)
	if err != nil {
		t.Fatal(err)
	}
	profit := p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int)
	if profit.Cmp(minProfit) <= 0 {
		t.Fatalf("profit %s not above minProfit %s", profit, minProfit)
	}
	eq(t, "alice got minProfit", sub(p.Balance(p.PutAsset, alice.Addr), aliceBefore), minProfit)
	eq(t, "filler got the rest", sub(p.Balance(p.PutAsset, filler.Addr), fillerBefore), sub(profit, minProfit))
	ev := p.Find(rc, "LogExerciseOrderFilled")
	eq(t, "logged commission", ev.Args["comission"].(*big.Int), sub(profit, minProfit))
	if ev.Args["executor"].(common.Address) != filler.Addr {
		t.Fatalf("executor %v", ev.Args["executor"])
	}
	if !p.OrderUsed(o) {
		t.Fatal("a filled order is not marked used")
	}
	if _, err := p.FillExercise(filler, o, sig, swaps); !IsRevert(err, "LimitOrders__OrderCancelled") {
		t.Fatalf("second fill: %v", err)
	}
}

// The checks before a fill, in the contract's order, and cancel by the
// signer only.
func TestLimitOrderChecksAndCancel(t *testing.T) {
	s := newCall(t)
	p := s.p
	p.DeployLimitOrders()
	alice, bob, filler := s.buyer, s.lp, s.trader
	if _, err := p.Delegate(alice, p.LimitOrders, true); err != nil {
		t.Fatal(err)
	}
	swaps := SwapLegs{Swapper: []common.Address{p.Swapper}, SwapData: [][]byte{UniV3SwapData(500, big.NewInt(0))}}
	expiry := p.OpData(s.id).Expiry.Uint64()
	o, _ := p.ExerciseOrder(alice, s.id, big.NewInt(1), expiry)
	if _, err := p.FillExercise(filler, o, p.SignOrder(bob, o), swaps); !IsRevert(err, "LimitOrders__VerificationFailed") {
		t.Fatalf("another key's signature: %v", err)
	}
	past, pastSig := p.ExerciseOrder(alice, s.id, big.NewInt(1), p.Chain.Now()-1)
	if _, err := p.FillExercise(filler, past, pastSig, swaps); !IsRevert(err, "LimitOrders__OrderExpired") {
		t.Fatalf("past deadline: %v", err)
	}
	bad := o
	bad.Flags = SellFlag | OTCFlag
	if _, err := p.FillExercise(filler, bad, p.SignOrder(alice, bad), swaps); !IsRevert(err, "LimitOrders__InvalidFullfillment") {
		t.Fatalf("OTC flags through exerciseOption: %v", err)
	}
	sig := p.SignOrder(alice, o)
	if _, err := p.CancelOrder(bob, o, sig); !IsRevert(err, "LimitOrders__VerificationFailed") {
		t.Fatalf("cancel by another: %v", err)
	}
	rc, err := p.CancelOrder(alice, o, sig)
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Find(rc, "LogOrderCancelled"); ev == nil {
		t.Fatal("no LogOrderCancelled")
	}
	if !p.OrderUsed(o) {
		t.Fatal("cancelled order not marked")
	}
	if _, err := p.FillExercise(filler, o, sig, swaps); !IsRevert(err, "LimitOrders__OrderCancelled") {
		t.Fatalf("fill after cancel: %v", err)
	}
	// A transferred option: the order's maker no longer owns it.
	o2, sig2 := p.ExerciseOrder(alice, s.id, big.NewInt(2), expiry)
	if _, err := p.Transfer(alice, bob.Addr, s.id); err != nil {
		t.Fatal(err)
	}
	if _, err := p.FillExercise(filler, o2, sig2, swaps); !IsRevert(err, "LimitOrders__VerificationFailed") {
		t.Fatalf("fill after transfer: %v", err)
	}
}

// A limit purchase: the filler chooses the legs, is paid the commission
// from the maker, the maker receives the option and keeps the unspent
// allowance.
func TestLimitPurchaseMintsForMakerAndPaysCommission(t *testing.T) {
	p := Deploy(t, Config{})
	p.DeployLimitOrders()
	_, tick := p.Slot0(p.Pool)
	lp, maker, filler := p.Users[0], p.Users[1], p.Users[2]
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	_, shares, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	po := PurchaseOrder{MaxCostAllowance: e18(1), TTL: big.NewInt(3600), Market: p.Market, Liquidity: shares,
		Commission: big.NewInt(1e15), TTLThreshold: new(big.Int), TickLower: r.TickLower, TickUpper: r.TickUpper, IsCall: true}
	o := LimitOrder{CreatedAt: new(big.Int).SetUint64(p.Chain.Now()), Deadline: new(big.Int).SetUint64(p.Chain.Now() + 600),
		Maker: maker.Addr, Flags: BuyFlag | MarketFillFlag, Data: po.Encode()}
	sig := p.SignOrder(maker, o)
	if _, err := p.Approve(maker, p.CallAsset, p.LimitOrders, add(po.MaxCostAllowance, po.Commission)); err != nil {
		t.Fatal(err)
	}
	half := new(big.Int).Rsh(shares, 1)
	if _, err := p.FillPurchase(filler, o, sig, []Leg{{r, half}}); !IsRevert(err, "LimitOrders__OrderRequirementsNotMet") {
		t.Fatalf("legs short of the liquidity: %v", err)
	}
	makerBefore, fillerBefore := p.Balance(p.CallAsset, maker.Addr), p.Balance(p.CallAsset, filler.Addr)
	rc, err := p.FillPurchase(filler, o, sig, []Leg{{r, half}, {r, sub(shares, half)}})
	if err != nil {
		t.Fatal(err)
	}
	mint := p.Find(rc, "LogMintOption")
	id := mint.Args["tokenId"].(*big.Int)
	if p.OwnerOf(id) != maker.Addr {
		t.Fatalf("option %s owned by %s", id, p.OwnerOf(id))
	}
	premium := add(mint.Args["premiumAmount"].(*big.Int), mint.Args["protocolFees"].(*big.Int))
	eq(t, "maker paid premium and commission", sub(makerBefore, p.Balance(p.CallAsset, maker.Addr)), add(premium, po.Commission))
	eq(t, "filler got the commission", sub(p.Balance(p.CallAsset, filler.Addr), fillerBefore), po.Commission)
	eq(t, "nothing left in the contract", p.Balance(p.CallAsset, p.LimitOrders), new(big.Int))
	eq(t, "logged commission", p.Find(rc, "LogPurchasedOrderFilled").Args["comission"].(*big.Int), po.Commission)
	if !p.OrderUsed(o) {
		t.Fatal("a filled purchase is not marked used")
	}
}
