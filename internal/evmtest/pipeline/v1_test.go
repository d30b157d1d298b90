package pipeline

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// v1Market reads the V1 market's getters for the checks (the test protocol's
// V2 helpers read the V2 market).
type v1Market struct {
	t *testing.T
	p *pt.Protocol
}

func (m v1Market) opData(id *big.Int) pt.OptionData {
	v := m.p.Chain.Call(m.p.MarketV1, pt.MarketV1.ABI, "opData", id)
	return pt.OptionData{OpTickArrayLen: v[0].(*big.Int), TickLower: int(v[1].(*big.Int).Int64()), TickUpper: int(v[2].(*big.Int).Int64()), Expiry: v[3].(*big.Int), IsCall: v[4].(bool)}
}

// opTick is opTickMap(id, i): handler, pool, tickLower, tickUpper, liquidityToUse.
func (m v1Market) opTick(id *big.Int, i int) []any {
	return m.p.Chain.Call(m.p.MarketV1, pt.MarketV1.ABI, "opTickMap", id, big.NewInt(int64(i)))
}

func (m v1Market) ownerOf(id *big.Int) common.Address {
	return m.p.Chain.Call(m.p.MarketV1, pt.MarketV1.ABI, "ownerOf", id)[0].(common.Address)
}

func (m v1Market) send(from *pt.Account, method string, args ...any) *types.Receipt {
	m.t.Helper()
	rc, err := m.p.Chain.Send(from, m.p.MarketV1, pt.MarketV1.ABI, method, args...)
	if err != nil {
		m.t.Fatalf("%s: %v", method, err)
	}
	return rc
}

// checkStrikeV1: the V1 range's Strike (zero hook) equals the V1 handler's
// tokenIds getter, under the V1 handler's own four-word id.
func checkStrikeV1(t *testing.T, p *pt.Protocol, ix *Indexer, r pt.Range) {
	t.Helper()
	id := lower(p.HandlerV1) + "-" + lower(p.Pool) + "-" + lower(common.Address{}) + "-" + big.NewInt(int64(r.TickLower)).String() + "-" + big.NewInt(int64(r.TickUpper)).String()
	s := ix.Store.Get("Strike", id)
	if s == nil {
		t.Fatalf("no V1 Strike %s (%s)", id, ix)
	}
	info := p.RangeInfoV1(r)
	if s["totalLiquidity"].Big.Cmp(info.TotalLiquidity) != 0 || s["usedLiquidity"].Big.Cmp(info.LiquidityUsed) != 0 {
		t.Errorf("V1 Strike total %s used %s, getter %s %s", s["totalLiquidity"].Big, s["usedLiquidity"].Big, info.TotalLiquidity, info.LiquidityUsed)
	}
	if s["tokenId"].Big.Cmp(p.TokenIDV1(r)) != 0 {
		t.Errorf("V1 Strike tokenId %s, handler id %s", s["tokenId"].Big, p.TokenIDV1(r))
	}
}

func checkOptionV1(t *testing.T, m v1Market, ix *Indexer, id *big.Int, state string) {
	t.Helper()
	o := ix.Store.Get("Option", lower(m.p.MarketV1)+"-"+id.String())
	if o == nil {
		t.Fatalf("no V1 Option %s (%s)", id, ix)
	}
	d := m.opData(id)
	if o["tickLower"].Int != int64(d.TickLower) || o["tickUpper"].Int != int64(d.TickUpper) || o["expiry"].Big.Cmp(d.Expiry) != 0 || o["isCall"].Bool != d.IsCall {
		t.Errorf("V1 option %s: %+v, opData %+v", id, o, d)
	}
	if owner := m.ownerOf(id); !bytes.Equal(o["owner"].Bytes, owner.Bytes()) {
		t.Errorf("V1 option %s owner %x, ownerOf %s", id, o["owner"].Bytes, owner)
	}
	if o["state"].Str != state {
		t.Errorf("V1 option %s state %s, want %s", id, o["state"].Str, state)
	}
}

// A V1 market and V1 handler through the same pipeline as V2: an LP mint,
// a purchase (its leg on the V1 range), a purchase through the router, a
// transfer, a split, a partial exercise of the parent and a full exercise
// of the split option, an exercise by an auto-exercise keeper taking a fee
// and one by a smart-wallet owner, a settlement; every Strike equals the V1
// handler's getter, every Option the market's, every Exercise the
// transaction's transfers and balances.
func TestPipelineV1(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	p.DeployV1()
	ix := New(t, p)
	m := v1Market{t, p}
	lp, buyer, trader, other := p.Users[0], p.Users[1], p.Users[2], p.Users[3]
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	r := pt.Range{TickLower: base + 10*p.TickSpacing, TickUpper: base + 11*p.TickSpacing}
	_, l, err := p.DepositV1(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikeV1(t, p, ix, r)

	id, _, err := p.BuyV1(buyer, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikeV1(t, p, ix, r)
	checkOptionV1(t, m, ix, id, "Open")
	leg := ix.Store.Get("OptionLeg", lower(p.MarketV1)+"-"+id.String()+"-0")
	if tk := m.opTick(id, 0); leg == nil || leg["liquidity"].Big.Cmp(tk[4].(*big.Int)) != 0 || !bytes.Equal(leg["handler"].Bytes, p.HandlerV1.Bytes()) ||
		leg["tickLower"].Int != tk[2].(*big.Int).Int64() || !bytes.Equal(leg["hook"].Bytes, make([]byte, 20)) {
		t.Fatalf("V1 leg %v, opTickMap %v", leg, tk)
	}

	// a purchase through the router, handed to its caller
	r2 := pt.Range{TickLower: base + 12*p.TickSpacing, TickUpper: base + 13*p.TickSpacing}
	_, l2, err := p.DepositV1(lp, r2, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	router := p.DeployRouter()
	routedID, rcRouted, err := p.BuyVia(router, other, other.Addr, pt.Option{IsCall: true, TickLower: r2.TickLower, TickUpper: r2.TickUpper, TTL: 3600,
		MaxCost: e18(1000), Legs: []pt.Leg{{Range: r2, Liquidity: l2}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikeV1(t, p, ix, r2)
	checkOptionV1(t, m, ix, routedID, "Open")
	checkPurchase(t, p, ix, rcRouted, p.MarketV1, other.Addr, router)

	m.send(buyer, "transferFrom", buyer.Addr, trader.Addr, id)
	quarter := new(big.Int).Div(l, big.NewInt(4))
	rc := m.send(trader, "positionSplitter", struct {
		OptionId         *big.Int
		To               common.Address
		LiquidityToSplit []*big.Int
	}{id, other.Addr, []*big.Int{quarter}})
	splitID := p.Find(rc, "LogSplitOption").Args["newTokenId"].(*big.Int)
	ix.Sync()
	checkOptionV1(t, m, ix, id, "Open")
	checkOptionV1(t, m, ix, splitID, "Open")

	// the price crosses the range: a partial exercise of the parent, then
	// the split option exercised whole
	if _, err := p.SwapToTick(p.Users[2], p.Fee, tick+300); err != nil {
		t.Fatal(err)
	}
	swap := pt.UniV3SwapData(p.Fee, big.NewInt(0))
	rcPart, err := p.ExerciseV1(trader, id, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: quarter}})
	if err != nil {
		t.Fatal(err)
	}
	rcFull, err := p.ExerciseV1(other, splitID, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: quarter}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikeV1(t, p, ix, r)
	checkOptionV1(t, m, ix, id, "Exercised")
	checkOptionV1(t, m, ix, splitID, "Exercised")
	for _, rc := range []*types.Receipt{rcPart, rcFull} {
		ev := p.Find(rc, "LogExerciseOption")
		x := ix.Store.Get("Exercise", hashID(rc, ev))
		if x == nil || x["totalProfit"].Big.Cmp(ev.Args["totalProfit"].(*big.Int)) != 0 || x["totalAssetRelocked"].Big.Cmp(ev.Args["totalAssetRelocked"].(*big.Int)) != 0 {
			t.Errorf("V1 exercise %v, event %v", x, ev.Args)
		}
	}
	if rest := m.opTick(id, 0)[4].(*big.Int); rest.Cmp(new(big.Int).Sub(l, new(big.Int).Add(quarter, quarter))) != 0 {
		t.Errorf("setup: parent keeps %s", rest)
	}
	checkExercise(t, p, ix, rcPart, p.MarketV1, p.PutAsset, trader.Addr)
	checkExercise(t, p, ix, rcFull, p.MarketV1, p.PutAsset, other.Addr)

	// an auto-exercise keeper (5% executor fee) exercises a quarter for the
	// trader; then the trader's smart wallet holds the option and exercises
	// the last quarter by the trader's key
	feeTo := common.HexToAddress("0x000000000000000000000000000000000000fee1")
	p.Chain.MustSend(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "updateFeeTo", feeTo)
	p.Chain.MustSend(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "updateTimeForSettle", big.NewInt(7200))
	m.send(trader, "updateExerciseDelegate", p.AutoExercise, true)
	legs := []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: quarter}}
	p.GrantExecutor()
	rcKeeper, err := p.Chain.Send(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "autoExercise", p.MarketV1, id, big.NewInt(50_000), pt.ExerciseArgs(id, legs))
	if err != nil {
		t.Fatal(err)
	}
	w := p.DeployWallet(trader)
	m.send(trader, "transferFrom", trader.Addr, w, id)
	rcWallet, err := p.WalletExercise(trader, w, p.MarketV1, id, legs)
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkExercise(t, p, ix, rcKeeper, p.MarketV1, p.PutAsset, p.AutoExercise)
	checkExercise(t, p, ix, rcWallet, p.MarketV1, p.PutAsset, w)
	checkOptionV1(t, m, ix, id, "Exercised")
	checkStrikeV1(t, p, ix, r)

	// an out-of-the-money V1 call expires and is settled
	r3 := pt.Range{TickLower: base + 40*p.TickSpacing, TickUpper: base + 41*p.TickSpacing}
	_, l3, err := p.DepositV1(lp, r3, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	otm, _, err := p.BuyV1(buyer, pt.Option{IsCall: true, TickLower: r3.TickLower, TickUpper: r3.TickUpper, TTL: 600, Legs: []pt.Leg{{Range: r3, Liquidity: l3}}})
	if err != nil {
		t.Fatal(err)
	}
	p.Chain.AdjustTime(time.Hour)
	p.Chain.MustSend(p.Owner, p.MarketV1, pt.MarketV1.ABI, "updateSettler", lp.Addr, true)
	ep := pt.ExerciseArgs(otm, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: l3}})
	m.send(lp, "settleOption", struct {
		OptionId          *big.Int
		Swapper           []common.Address
		SwapData          [][]byte
		LiquidityToSettle []*big.Int
	}{ep.OptionId, ep.Swapper, ep.SwapData, ep.LiquidityToExercise})
	ix.Sync()
	checkOptionV1(t, m, ix, otm, "Settled")
	checkStrikeV1(t, p, ix, r3)
	if used := p.RangeInfoV1(r3).LiquidityUsed; used.Cmp(l3) >= 0 {
		t.Errorf("setup: the settlement returned nothing (%s used)", used)
	}
}

// hashID is the id of a receipt's entity created by one of its logs: tx-logIndex.
func hashID(rc *types.Receipt, ev *pt.Event) string {
	return strings.ToLower(rc.TxHash.Hex()) + "-" + big.NewInt(int64(ev.Log.Index)).String()
}
