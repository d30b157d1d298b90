package protocoltest

import (
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

// The open settlement contract, as stryke-xyz/clamm's OpenSettlement:
// refused before expiry and during its two hours after, then anyone
// settles an in-the-money option through it and receives what the market
// paid it (the leg's swap surplus), in the same transaction.
func TestOpenSettlementPaysTheCaller(t *testing.T) {
	s := newCall(t)
	p := s.p
	p.DeployOpenSettlement()
	anyone := p.Users[3]
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	legs := []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}}
	if _, err := p.OpenSettle(anyone, s.id, legs); !IsRevert(err, "OpenSettlement__NotExpired") {
		t.Fatalf("before expiry: %v", err)
	}
	// to 10 s before expiry + 2 h: the next blocks are still too soon
	expiry := p.OpData(s.id).Expiry.Uint64()
	p.Chain.AdjustTime(time.Duration(expiry+7200-10-p.Chain.Now()) * time.Second)
	if _, err := p.OpenSettle(anyone, s.id, legs); !IsRevert(err, "OpenSettlement__TooSoonOpenSettle") {
		t.Fatalf("2 h after expiry: %v", err)
	}
	p.Chain.AdjustTime(60 * time.Second)
	// Through the market directly the caller is no settler.
	if _, err := p.Chain.Send(anyone, p.Market, MarketV2.ABI, "settleOption", settleArgs(s.id, legs)); !IsRevert(err, "DopexV2OptionMarket__NotApprovedSettler") {
		t.Fatalf("settleOption from a non-settler: %v", err)
	}
	leg, err := clamm.ExerciseLeg(s.r.TickLower, s.r.TickUpper, s.l, p.Token0 == p.CallAsset)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := p.Quote(p.CallAsset, leg.AmountToSwap, 500)
	req := leg.AmountReq
	before := p.Balance(p.PutAsset, anyone.Addr)
	rc, err := p.OpenSettle(anyone, s.id, legs)
	if err != nil {
		t.Fatal(err)
	}
	if ev := p.Find(rc, "LogSettleOption"); ev == nil || ev.Args["user"] != s.buyer.Addr {
		t.Fatalf("LogSettleOption %v", ev)
	}
	eq(t, "the caller's profit", sub(p.Balance(p.PutAsset, anyone.Addr), before), sub(out, req))
	eq(t, "the contract keeps nothing", p.Balance(p.PutAsset, p.OpenSettlement), new(big.Int))
	eq(t, "leg", p.OpTicks(s.id)[0].Liquidity, new(big.Int))
}

// Only an executor may auto-exercise (the constructor grants none; the
// owner is granted on its first AutoExerciseOption, as the broadcasts
// grant a key); with feeTo unset the owner gets the whole profit whatever
// fee the executor names.
func TestAutoExerciseRoleAndNoFeeWithoutFeeTo(t *testing.T) {
	s := newCallTTL(t, 600)
	p := s.p
	if _, err := p.Delegate(s.buyer, p.AutoExercise, true); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(s.trader, 500, s.tick+300); err != nil {
		t.Fatal(err)
	}
	p.Chain.AdjustTime(400e9)
	legs := []ExerciseLeg{{p.Swapper, UniV3SwapData(500, big.NewInt(0)), s.l}}
	if _, err := p.Chain.Send(s.trader, p.AutoExercise, AutoExercise.ABI, "autoExercise", p.Market, s.id, big.NewInt(0), ExerciseArgs(s.id, legs)); err == nil {
		t.Fatal("a non-executor auto-exercised")
	}
	if role := [32]byte(crypto.Keccak256([]byte("EXECUTOR"))); p.Chain.Call(p.AutoExercise, AutoExercise.ABI, "EXECUTOR_ROLE")[0].([32]byte) != role {
		t.Fatal("EXECUTOR_ROLE")
	}
	before := p.Balance(p.PutAsset, s.buyer.Addr)
	rc, err := p.AutoExerciseOption(s.id, big.NewInt(100_000), legs)
	if err != nil {
		t.Fatal(err)
	}
	profit := p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int)
	eq(t, "owner's share with feeTo unset", sub(p.Balance(p.PutAsset, s.buyer.Addr), before), profit)
}
