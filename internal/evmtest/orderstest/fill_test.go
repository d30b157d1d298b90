package orderstest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
)

// TestTakeProfitFillsAsPrepared: below its minimum the take-profit is not
// offered; after the price moves it is, and the fill sent as built pays
// alice exactly minProfit and the filler exactly the stated commission;
// the order then reads filled, with that commission.
func TestTakeProfitFillsAsPrepared(t *testing.T) {
	w := newWorld(t)
	minProfit := big.NewInt(50_000_000) // 50 USDC
	v, _, err := w.svc.Submit(w.ctx, w.takeProfit(t, minProfit, w.alice))
	if err != nil {
		t.Fatal(err)
	}
	req := orders.FillableRequest{ChainID: chainID, SwapperID: w.swapperID, Filler: w.filler.Addr}
	if fs, err := w.svc.Fillable(w.ctx, req); err != nil || len(fs) != 0 {
		t.Fatalf("below the minimum: %v %+v", err, fs)
	}
	if _, err := w.p.SwapToTick(w.p.Users[3], 500, w.tick+300); err != nil {
		t.Fatal(err)
	}
	fs, err := w.svc.Fillable(w.ctx, req)
	if err != nil || len(fs) != 1 || fs[0].Order.Hash != v.Hash || !fs[0].Simulated {
		t.Fatalf("after the move: %v %+v", err, fs)
	}
	f := fs[0]
	if common.HexToAddress(f.CommissionToken) != w.p.PutAsset {
		t.Fatalf("commission token %s", f.CommissionToken)
	}
	commission, _ := new(big.Int).SetString(f.Commission, 10)
	if commission.Sign() <= 0 {
		t.Fatalf("commission %s", f.Commission)
	}
	aliceBefore, fillerBefore := w.p.Balance(w.p.PutAsset, w.alice.Addr), w.p.Balance(w.p.PutAsset, w.filler.Addr)
	rc, err := w.p.Chain.SendRaw(w.filler, common.HexToAddress(f.Tx.To), hexutil.MustDecode(f.Tx.Data), "fill")
	if err != nil {
		t.Fatal(err)
	}
	if got := new(big.Int).Sub(w.p.Balance(w.p.PutAsset, w.alice.Addr), aliceBefore); got.Cmp(minProfit) != 0 {
		t.Fatalf("alice got %s, want minProfit %s", got, minProfit)
	}
	if got := new(big.Int).Sub(w.p.Balance(w.p.PutAsset, w.filler.Addr), fillerBefore); got.Cmp(commission) != 0 {
		t.Fatalf("filler got %s, want the stated commission %s", got, commission)
	}
	profit := w.p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int)
	if new(big.Int).Add(minProfit, commission).Cmp(profit) != 0 {
		t.Fatalf("minProfit + commission = %s, the market's totalProfit %s", new(big.Int).Add(minProfit, commission), profit)
	}
	got := w.status(t, v.Hash)
	if got.Status != orders.StatusFilled || got.Closed == nil || got.Closed.Commission != f.Commission || got.Closed.Executor != w.filler.Addr.Hex() {
		t.Fatalf("after the fill: %+v %+v", got, got.Closed)
	}
	if fs, _ := w.svc.Fillable(w.ctx, req); len(fs) != 0 {
		t.Fatalf("a filled order is still offered: %+v", fs)
	}
}
