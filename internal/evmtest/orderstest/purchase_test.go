package orderstest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/orders"
)

// TestLimitPurchaseThroughTheBook: a limit purchase prepared, signed and
// accepted once the maker's allowance covers it (refused before); a
// revoked allowance moves it out of open; filled through purchaseOption
// with the filler's legs, it reads filled with the commission paid.
func TestLimitPurchaseThroughTheBook(t *testing.T) {
	w := newWorld(t)
	p, maker := w.p, w.alice
	r := pt.Range{TickLower: w.tick + 200, TickUpper: w.tick + 210}
	_, shares, err := p.Deposit(w.bob, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	terms := contracts.PurchaseOrderData{MaxCostAllowance: e18(1), TTL: big.NewInt(3600), Liquidity: shares,
		Commission: big.NewInt(1e15), TTLThreshold: new(big.Int), TickLower: int32(r.TickLower), TickUpper: int32(r.TickUpper), IsCall: true}
	req := orders.PrepareRequest{ChainID: chainID, Kind: orders.KindPurchase, User: maker.Addr, Market: p.Market, Purchase: terms}
	need := new(big.Int).Add(terms.MaxCostAllowance, terms.Commission)
	prep, err := w.svc.Prepare(w.ctx, req)
	if err != nil || len(prep.Before) != 1 || common.HexToAddress(prep.Before[0].Tx.To) != p.CallAsset {
		t.Fatalf("prepare without the allowance: %v %+v", err, prep.Before)
	}
	so := prep.Order
	so.Signature = sign(t, maker, prep.TypedData)
	if _, _, err := w.svc.Submit(w.ctx, so); code(err) != "ORDER_NOT_FILLABLE" {
		t.Fatalf("submit before the approval: %v", err)
	}
	if _, err := p.Chain.SendRaw(maker, p.CallAsset, hexutil.MustDecode(prep.Before[0].Tx.Data), "approve"); err != nil {
		t.Fatal(err)
	}
	v, created, err := w.svc.Submit(w.ctx, so)
	if err != nil || !created || v.Kind != orders.KindPurchase || v.Status != orders.StatusOpen {
		t.Fatalf("submit: %v %v %+v", err, created, v)
	}
	if _, err := p.Approve(maker, p.CallAsset, p.LimitOrders, new(big.Int)); err != nil {
		t.Fatal(err)
	}
	if got := w.status(t, v.Hash); got.Status != orders.StatusInvalid {
		t.Fatalf("after revoking the allowance: %+v", got)
	}
	if _, err := p.Approve(maker, p.CallAsset, p.LimitOrders, need); err != nil {
		t.Fatal(err)
	}
	o, sig := toContract(t, so)
	before := p.Balance(p.CallAsset, w.filler.Addr)
	rc, err := p.FillPurchase(w.filler, o, sig, []pt.Leg{{Range: r, Liquidity: shares}})
	if err != nil {
		t.Fatal(err)
	}
	if got := new(big.Int).Sub(p.Balance(p.CallAsset, w.filler.Addr), before); got.Cmp(terms.Commission) != 0 {
		t.Fatalf("filler got %s, want the commission %s", got, terms.Commission)
	}
	id := p.Find(rc, "LogMintOption").Args["tokenId"].(*big.Int)
	if p.OwnerOf(id) != maker.Addr {
		t.Fatalf("option %s owned by %s", id, p.OwnerOf(id))
	}
	got := w.status(t, v.Hash)
	if got.Status != orders.StatusFilled || got.Closed.Event != "LogPurchasedOrderFilled" || got.Closed.Commission != terms.Commission.String() ||
		common.HexToAddress(got.Closed.Executor) != w.filler.Addr {
		t.Fatalf("after the fill: %+v %+v", got, got.Closed)
	}
}
