package pipeline

import (
	"bytes"
	"context"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

func lower(a common.Address) string { return strings.ToLower(a.Hex()) }

// checkStrikes: every indexed range's liquidity equals the handler's
// tokenIds(id) getter on the chain after the same transactions.
func checkStrikes(t *testing.T, p *pt.Protocol, ix *Indexer, ranges []pt.Range) {
	t.Helper()
	for _, r := range ranges {
		info := p.RangeInfo(r)
		hook := r.Hook
		id := lower(p.Handler) + "-" + lower(p.Pool) + "-" + lower(hook) + "-" + big.NewInt(int64(r.TickLower)).String() + "-" + big.NewInt(int64(r.TickUpper)).String()
		s := ix.Store.Get("Strike", id)
		if s == nil {
			t.Fatalf("no Strike %s (%s)", id, ix)
		}
		for _, f := range []struct {
			name string
			want *big.Int
		}{{"totalLiquidity", info.TotalLiquidity}, {"usedLiquidity", info.LiquidityUsed}, {"reservedLiquidity", info.ReservedLiquidity}} {
			if got := s[f.name].Big; got == nil || got.Cmp(f.want) != 0 {
				t.Errorf("Strike [%d,%d] %s = %v, handler getter %s", r.TickLower, r.TickUpper, f.name, got, f.want)
			}
		}
		if s["tokenId"].Big.Cmp(p.TokenID(r)) != 0 {
			t.Errorf("Strike tokenId %s, handler id %s", s["tokenId"].Big, p.TokenID(r))
		}
	}
}

// checkOption: the indexed option against the market's getters.
func checkOption(t *testing.T, p *pt.Protocol, ix *Indexer, id *big.Int, state string) {
	t.Helper()
	o := ix.Store.Get("Option", lower(p.Market)+"-"+id.String())
	if o == nil {
		t.Fatalf("no Option %s (%s)", id, ix)
	}
	d := p.OpData(id)
	if o["tickLower"].Int != int64(d.TickLower) || o["tickUpper"].Int != int64(d.TickUpper) ||
		o["expiry"].Big.Cmp(d.Expiry) != 0 || o["isCall"].Bool != d.IsCall {
		t.Errorf("option %s: %+v, opData %+v", id, o, d)
	}
	if owner := p.OwnerOf(id); !bytes.Equal(o["owner"].Bytes, owner.Bytes()) {
		t.Errorf("option %s owner %x, ownerOf %s", id, o["owner"].Bytes, owner)
	}
	if o["state"].Str != state {
		t.Errorf("option %s state %s, want %s", id, o["state"].Str, state)
	}
}

// holderAfter is who holds option id of market when the transaction of rc
// ends: the receiver of the last ERC721 Transfer of that id in its logs.
func holderAfter(t *testing.T, rc *types.Receipt, market common.Address, id *big.Int) common.Address {
	t.Helper()
	topic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	var holder common.Address
	for _, lg := range rc.Logs {
		if lg.Address == market && len(lg.Topics) == 4 && lg.Topics[0] == topic && lg.Topics[3].Big().Cmp(id) == 0 {
			holder = common.BytesToAddress(lg.Topics[2].Bytes())
		}
	}
	if holder == (common.Address{}) {
		t.Fatalf("no Transfer of option %s in %s", id, rc.TxHash)
	}
	return holder
}

// checkPurchase: the Purchase of a mint receipt names as buyer the holder
// at the transaction's end (the option's minter too) and as caller the
// market's msg.sender (LogMintOption.user).
func checkPurchase(t *testing.T, p *pt.Protocol, ix *Indexer, rc *types.Receipt, market, buyer, caller common.Address) {
	t.Helper()
	var ev *pt.Event
	for _, e := range p.Events(rc) {
		if e.Name == "LogMintOption" && e.Address == market {
			e := e
			ev = &e
			break
		}
	}
	if ev == nil {
		t.Fatalf("no LogMintOption of %s in %s", market, rc.TxHash)
	}
	id := ev.Args["tokenId"].(*big.Int)
	if h := holderAfter(t, rc, market, id); h != buyer {
		t.Fatalf("setup: option %s ends with %s, not %s", id, h, buyer)
	}
	x := ix.Store.Get("Purchase", strings.ToLower(rc.TxHash.Hex())+"-"+big.NewInt(int64(ev.Log.Index)).String())
	o := ix.Store.Get("Option", lower(market)+"-"+id.String())
	if x == nil || o == nil {
		t.Fatalf("no Purchase/Option for %s", rc.TxHash)
	}
	if !bytes.Equal(x["buyer"].Bytes, buyer.Bytes()) || !bytes.Equal(o["minter"].Bytes, buyer.Bytes()) || !bytes.Equal(x["caller"].Bytes, caller.Bytes()) ||
		!bytes.Equal(x["caller"].Bytes, ev.Args["user"].(common.Address).Bytes()) {
		t.Errorf("purchase buyer %x minter %x caller %x, want buyer %s caller %s", x["buyer"].Bytes, o["minter"].Bytes, x["caller"].Bytes, buyer, caller)
	}
}

// checkLegs: the option's legs are its opTickMap entries, index by index,
// with the liquidity opTickMap holds now (call before any exercise of it).
func checkLegs(t *testing.T, p *pt.Protocol, ix *Indexer, id *big.Int) {
	t.Helper()
	ticks := p.OpTicks(id)
	for i, tk := range ticks {
		leg := ix.Store.Get("OptionLeg", lower(p.Market)+"-"+id.String()+"-"+big.NewInt(int64(i)).String())
		if leg == nil || leg["index"].Int != int64(i) || !bytes.Equal(leg["handler"].Bytes, tk.Handler.Bytes()) || !bytes.Equal(leg["hook"].Bytes, tk.Hook.Bytes()) ||
			leg["tickLower"].Int != int64(tk.TickLower) || leg["tickUpper"].Int != int64(tk.TickUpper) || leg["liquidity"].Big.Cmp(tk.Liquidity) != 0 {
			t.Errorf("option %s leg %d %v, opTickMap %+v", id, i, leg, tk)
		}
	}
	if n := len(ticks); n == 0 {
		t.Fatalf("setup: option %s without legs", id)
	}
}

// exerciseIn is a receipt's LogExerciseOption and the prime pool's price
// after the exercise's own swap (the last Swap of that pool before it).
func exerciseIn(t *testing.T, p *pt.Protocol, rc *types.Receipt, market common.Address) (*pt.Event, *big.Int) {
	t.Helper()
	var price *big.Int
	for _, e := range p.Events(rc) {
		e := e
		if e.Name == "Swap" && e.Address == p.Pool {
			price = e.Args["sqrtPriceX96"].(*big.Int)
		}
		if e.Name == "LogExerciseOption" && e.Address == market {
			if price == nil {
				t.Fatal("an exercise without a swap in the prime pool")
			}
			return &e, price
		}
	}
	t.Fatal("receipt without LogExerciseOption")
	return nil, nil
}

// balanceAt is token.balanceOf(owner) at the end of block n.
func balanceAt(t *testing.T, p *pt.Protocol, token, owner common.Address, n *big.Int) *big.Int {
	t.Helper()
	data, err := pt.Token.ABI.Pack("balanceOf", owner)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Chain.Client().CallContract(context.Background(), ethereum.CallMsg{To: &token, Data: data}, n)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(out)
}

// checkExercise: the Exercise of a receipt carries the event's amounts, the
// account the market paid (paid: whoever called exerciseOption, known to the
// test), delegated when that is not the owner, the prime pool's price after
// the exercise's own swap (the receipt's last Swap of that pool before
// LogExerciseOption), and as profitToOwner what the owner's balance of the
// profit token gained over the transaction's block (the transaction is the
// only one in its block touching the owner's balance).
func checkExercise(t *testing.T, p *pt.Protocol, ix *Indexer, rc *types.Receipt, market, profitToken, paid common.Address) {
	t.Helper()
	ex, price := exerciseIn(t, p, rc, market)
	x := ix.Store.Get("Exercise", strings.ToLower(rc.TxHash.Hex())+"-"+big.NewInt(int64(ex.Log.Index)).String())
	if x == nil {
		t.Fatalf("no Exercise for %s", rc.TxHash)
	}
	owner := ex.Args["user"].(common.Address)
	if x["totalProfit"].Big.Cmp(ex.Args["totalProfit"].(*big.Int)) != 0 || x["totalAssetRelocked"].Big.Cmp(ex.Args["totalAssetRelocked"].(*big.Int)) != 0 ||
		!bytes.Equal(x["user"].Bytes, owner.Bytes()) || !bytes.Equal(x["exerciser"].Bytes, paid.Bytes()) ||
		x["sqrtPriceX96"].Big.Cmp(price) != 0 || x["blockNumber"].Big.Cmp(rc.BlockNumber) != 0 {
		t.Errorf("exercise %+v; event %v, paid %s, price %s", x, ex.Args, paid, price)
	}
	if delegated := paid != owner; x["delegated"].Bool != delegated {
		t.Errorf("delegated %v, want %v", x["delegated"].Bool, delegated)
	}
	gain := new(big.Int).Sub(balanceAt(t, p, profitToken, owner, rc.BlockNumber), balanceAt(t, p, profitToken, owner, new(big.Int).Sub(rc.BlockNumber, big.NewInt(1))))
	if got := x["profitToOwner"].Big; got == nil || got.Cmp(gain) != 0 {
		t.Errorf("profitToOwner %v, the owner's balance gained %s (totalProfit %s)", got, gain, ex.Args["totalProfit"])
	}
}

// One market's life on the simulated EVM, indexed by the compiled mappings
// (the market and handler discovered from the position manager): a call
// and a put, a put bought through the router for its caller, a fee
// compound, a split, a transfer, a partial exercise by a delegate, a
// reservation, the unuse overflow branch, a mint and an exercise (of the
// split option, by its owner) in one block, the put's exercise, an
// exercise by an auto-exercise keeper taking a fee, one by a smart-wallet
// owner, and a settlement. After each stage every range equals the
// handler's getter, options and legs the market's, exercises their
// transactions' transfers and balances; at the end the gateway's client and
// the gateway itself read the store through the fake Graph Node.
func TestPipelineNormalMarket(t *testing.T) { pipeline(t, pt.Config{}) }

// The same on an inverted market (the call asset is token1).
func TestPipelineInvertedMarket(t *testing.T) { pipeline(t, pt.Config{Inverted: true}) }

func pipeline(t *testing.T, cfg pt.Config) {
	p := pt.Deploy(t, cfg)
	stats := holdingsChecker(t, p, p.DeployMulticall3())
	ix := New(t, p)
	stats.ix = ix
	lp, buyer, trader, other := p.Users[0], p.Users[1], p.Users[2], p.Users[3]
	_, tick := p.Slot0(p.Pool)
	// calls hold the call asset: above the price when it is token0, below when inverted
	callSide, putSide := 1, -1
	if cfg.Inverted {
		callSide, putSide = -1, 1
	}
	rng := func(side, k int) pt.Range {
		base := tick - tick%p.TickSpacing
		lo := base + side*k*p.TickSpacing
		if side < 0 {
			lo = base + side*(k+1)*p.TickSpacing
		}
		return pt.Range{TickLower: lo, TickUpper: lo + p.TickSpacing}
	}
	rCall, rPut := rng(callSide, 10), rng(putSide, 10)
	ranges := []pt.Range{rCall, rPut}
	_, lCall, err := p.Deposit(lp, rCall, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	_, lPut, err := p.Deposit(lp, rPut, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)

	tl, tu := rCall.TickLower, rCall.TickUpper
	callID, rcCallMint, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: tl, TickUpper: tu, TTL: 7 * 3600, Legs: []pt.Leg{{Range: rCall, Liquidity: lCall}}})
	if err != nil {
		t.Fatal(err)
	}
	tl, tu = rPut.TickLower, rPut.TickUpper
	putID, rcPutMint, err := p.Buy(buyer, pt.Option{IsCall: false, TickLower: tl, TickUpper: tu, TTL: 7 * 3600, Legs: []pt.Leg{{Range: rPut, Liquidity: new(big.Int).Div(lPut, big.NewInt(2))}}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)
	checkOption(t, p, ix, callID, "Open")
	checkOption(t, p, ix, putID, "Open")
	checkLegs(t, p, ix, callID)
	checkLegs(t, p, ix, putID)
	legs := ix.Store.All("OptionLeg")
	if len(legs) != 2 {
		t.Fatalf("legs %v", legs)
	}

	// the trader buys a put through the router, which the market mints to
	// and which hands the NFT to the trader after the market's event
	router := p.DeployRouter()
	routedID, rcRouted, err := p.BuyVia(router, trader, trader.Addr, pt.Option{IsCall: false, TickLower: tl, TickUpper: tu, TTL: 7 * 3600,
		MaxCost: big.NewInt(1e12), Legs: []pt.Leg{{Range: rPut, Liquidity: new(big.Int).Div(lPut, big.NewInt(4))}}}, false)
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkOption(t, p, ix, routedID, "Open")
	checkPurchase(t, p, ix, rcRouted, p.Market, trader.Addr, router)
	if leg := ix.Store.Get("OptionLeg", lower(p.Market)+"-"+callID.String()+"-0"); leg["liquidity"].Big.Cmp(p.OpTicks(callID)[0].Liquidity) != 0 {
		t.Errorf("call leg %s, opTickMap %s", leg["liquidity"].Big, p.OpTicks(callID)[0].Liquidity)
	}

	// the price moves through the call range (fees accrue there, the call
	// goes in the money); a second deposit compounds the fees
	toward := tick + callSide*300
	if _, err := p.SwapToTick(trader, p.Fee, toward); err != nil {
		t.Fatal(err)
	}
	rc, err := p.Chain.Send(other, p.PositionManager, pt.PositionManager.ABI, "mintPosition", p.Handler, positionData(t, p, rCall, e18(1)))
	if err != nil {
		t.Fatal(err)
	}
	if p.Find(rc, "LogFeeCompound") == nil {
		t.Fatal("setup: no LogFeeCompound")
	}
	ix.Sync()
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)

	// split half the call off to `other`, transfer the rest to the trader
	half := new(big.Int).Div(lCall, big.NewInt(2))
	splitID, rcSplit, err := p.Split(buyer, callID, other.Addr, []*big.Int{half})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Transfer(buyer, trader.Addr, callID); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkOption(t, p, ix, splitID, "Open")
	checkOption(t, p, ix, callID, "Open")
	checkLegs(t, p, ix, splitID)
	if s, c := ix.Store.Get("Option", lower(p.Market)+"-"+splitID.String()), ix.Store.Get("Option", lower(p.Market)+"-"+callID.String()); s["mintTimestamp"].Big.Cmp(c["mintTimestamp"].Big) != 0 ||
		s["splitTimestamp"].Big == nil {
		t.Errorf("split option mintTimestamp %v splitTimestamp %v, parent minted %v", s["mintTimestamp"].Big, s["splitTimestamp"].Big, c["mintTimestamp"].Big)
	}

	// the trader lets `lp` exercise for it, part of the parent
	if _, err := p.Delegate(trader, lp.Addr, true); err != nil {
		t.Fatal(err)
	}
	swap := pt.UniV3SwapData(p.Fee, big.NewInt(0))
	part := new(big.Int).Div(half, big.NewInt(3))
	rc, err = p.Exercise(lp, callID, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: part}})
	rcDelegated := rc
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkExercise(t, p, ix, rc, p.Market, profit(p, true), lp.Addr)
	checkOption(t, p, ix, callID, "Exercised")
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)

	// reserve part of the put range while the put uses it
	shares := new(big.Int).Div(p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "balanceOf", lp.Addr, p.TokenID(rPut))[0].(*big.Int), big.NewInt(4))
	if _, err := p.Reserve(lp, rPut, shares); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)

	// the unuse overflow branch: an app re-mints more than the range's used liquidity
	app := p.Users[3]
	p.WhitelistApp(p.Handler, app.Addr, true)
	before := p.RangeInfo(rCall)
	if _, err := p.UnuseDirect(app, rCall, new(big.Int).Add(before.LiquidityUsed, e18(1))); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)
	if p.RangeInfo(rCall).LiquidityUsed.Sign() != 0 {
		t.Fatal("setup: the overflow branch did not run")
	}

	// a mint and an exercise in one block: a call on a range beyond the
	// new price, and the split option exercised by its owner
	rCall2 := rng(callSide, 40)
	ranges = append(ranges, rCall2)
	_, lCall2, err := p.Deposit(lp, rCall2, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	tl, tu = rCall2.TickLower, rCall2.TickUpper
	free := lCall2
	rcs := p.Chain.Block(func() {
		if _, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: tl, TickUpper: tu, TTL: 3600, Legs: []pt.Leg{{Range: rCall2, Liquidity: free}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exercise(other, splitID, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: half}}); err != nil {
			t.Fatal(err)
		}
	})
	for i, r := range rcs {
		if r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("same-block transaction %d failed", i)
		}
	}
	ix.Sync()
	newID := p.Find(rcs[0], "LogMintOption").Args["tokenId"].(*big.Int)
	checkOption(t, p, ix, newID, "Open")
	checkOption(t, p, ix, splitID, "Exercised")
	checkExercise(t, p, ix, rcs[1], p.Market, profit(p, true), other.Addr)
	checkStrikes(t, p, ix, ranges)
	stats.check(ranges)

	// the price swings through the put range: the put's owner exercises it
	later := buyLaterPuts(t, p, rng(putSide, 12), rng(putSide, 14), rng(putSide, 40))
	if _, err := p.SwapToTick(trader, p.Fee, tick+putSide*300); err != nil {
		t.Fatal(err)
	}
	rcPut, err := p.Exercise(buyer, putID, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: swap, Liquidity: new(big.Int).Div(lPut, big.NewInt(2))}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	checkExercise(t, p, ix, rcPut, p.Market, profit(p, false), buyer.Addr)
	rcKeeper, rcWallet := keeperAndWallet(t, p, ix, later)
	checkOption(t, p, ix, putID, "Exercised")
	checkStrikes(t, p, ix, ranges)
	stats.check(append(ranges, later.ranges...)) // TVL counts the later puts' ranges too

	// the gateway's own client, through the fake Graph Node serving the store
	wallet := p.Find(rcWallet, "LogExerciseOption").Args["user"].(common.Address)
	exercised := map[common.Address][]*types.Receipt{trader.Addr: {rcDelegated}, other.Addr: {rcs[1]}, buyer.Addr: {rcPut, rcKeeper}, wallet: {rcWallet}}
	gatewayReads(t, p, ix, ranges, exercised)
	created := map[string]*types.Receipt{callID.String(): rcCallMint, splitID.String(): rcSplit, putID.String(): rcPutMint, routedID.String(): rcRouted,
		later.ids[0].String(): later.mints[0], later.ids[1].String(): later.mints[1]}
	gatewayHistory(t, p, ix, exercised, created)
	gatewayPurchases(t, p, ix, created)
	checkDaily(t, p, ix)

	// every option the market minted or split is indexed
	if n := len(ix.Store.All("Option")); n != 8 {
		t.Errorf("%d options indexed, want 8", n)
	}
	gatewayMarkets(t, p, ix, cfg.Inverted) // last: it moves the clock a day on
}

// statsCheck asks the statistics at every stage and checks open interest,
// the expired options and TVL against the market's and the handler's
// getters at the block the answer names (holdingsAt).
type statsCheck struct {
	t     *testing.T
	p     *pt.Protocol
	ix    *Indexer
	mc    common.Address
	app   *app.App
	stage int64
}

func holdingsChecker(t *testing.T, p *pt.Protocol, multicall common.Address) *statsCheck {
	return &statsCheck{t: t, p: p, mc: multicall}
}

func (s *statsCheck) check(ranges []pt.Range) {
	s.t.Helper()
	if s.app == nil {
		// every answer asks the subgraph's head anew (a nanosecond is the
		// shortest TTL, and stale bound, the configuration takes)
		s.app, _ = liveGatewayWith(s.t, s.p, s.ix, func(cfg *config.Config) {
			cfg.Chains[42161].Multicall3, cfg.StrikesTTL = s.mc, config.Duration(time.Nanosecond)
			cfg.USDStablecoins = []string{"42161:" + s.p.PutAsset.Hex()}
			if err := cfg.Validate(); err != nil { // which hands each chain its stablecoins
				s.t.Fatal(err)
			}
		})
	}
	s.stage++ // a new window each stage: no answer from the cache
	now := int64(s.p.Chain.Now())
	st, at := askStats(s.t, s.app, s.p, [2]int64{now - 86400 + s.stage, now + 1})
	if head := s.p.Chain.BlockNumber(); at != head {
		s.t.Fatalf("stats answered at block %d, the chain is at %d", at, head)
	}
	holdingsAt(s.t, s.p, at, ranges).check(s.t, s.p, st)
}

// gatewayReads runs the gateway's Strikes and ExerciseHistory documents
// through its subgraph client against the fake Graph Node loaded from the
// indexed store: ranges equal the handler's getter, and each owner's
// history holds their exercises with the receipts' amounts.
func gatewayReads(t *testing.T, p *pt.Protocol, ix *Indexer, ranges []pt.Range, exercised map[common.Address][]*types.Receipt) {
	t.Helper()
	srv := httptest.NewServer(ix.Serve())
	defer srv.Close()
	client := testenv.NewSubgraph(t, srv.URL, subgraph.Options{PageSize: 2}) // several pages
	strikes, _, meta, err := client.Strikes(context.Background(), subgraph.StrikesQuery{Pools: []common.Address{p.Pool}, TickLowerMin: -887272, TickLowerMax: 887272})
	if err != nil {
		t.Fatal(err)
	}
	if meta.Block != p.Chain.BlockNumber() {
		t.Errorf("_meta block %d, chain head %d", meta.Block, p.Chain.BlockNumber())
	}
	byTicks := map[[2]int]subgraph.Strike{}
	for _, s := range strikes {
		byTicks[[2]int{s.TickLower, s.TickUpper}] = s
	}
	for _, r := range ranges {
		info := p.RangeInfo(r)
		s, ok := byTicks[[2]int{r.TickLower, r.TickUpper}]
		if info.TotalLiquidity.Sign() == 0 {
			if ok {
				t.Errorf("range [%d,%d] without liquidity served", r.TickLower, r.TickUpper)
			}
			continue
		}
		if !ok || s.TotalLiquidity.Cmp(info.TotalLiquidity) != 0 || s.UsedLiquidity.Cmp(info.LiquidityUsed) != 0 || s.Handler.Addr() != p.Handler {
			t.Errorf("served range [%d,%d] %+v, handler getter total %s used %s", r.TickLower, r.TickUpper, s, info.TotalLiquidity, info.LiquidityUsed)
		}
	}
	for owner, rcs := range exercised {
		got, _, err := client.ExerciseHistory(context.Background(), subgraph.HistoryQuery{User: owner, Market: p.Market, First: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rcs) {
			t.Fatalf("%s: %d exercises served, want %d", owner, len(got), len(rcs))
		}
		for i, rc := range rcs {
			ev := p.Find(rc, "LogExerciseOption")
			e := got[len(got)-1-i] // newest first
			if e.TotalProfit.Cmp(ev.Args["totalProfit"].(*big.Int)) != 0 || e.TotalAssetRelocked.Cmp(ev.Args["totalAssetRelocked"].(*big.Int)) != 0 ||
				e.Option.TokenID.Cmp(ev.Args["tokenId"].(*big.Int)) != 0 || e.BlockNumber.Cmp(rc.BlockNumber) != 0 {
				t.Errorf("%s exercise %d: served %+v, event %v", owner, i, e, ev.Args)
			}
			d := p.OpData(ev.Args["tokenId"].(*big.Int))
			if e.Option.TickLower != d.TickLower || e.Option.TickUpper != d.TickUpper || e.Option.Expiry.Cmp(d.Expiry) != 0 || e.Option.IsCall != d.IsCall {
				t.Errorf("%s exercise %d option %+v, opData %+v", owner, i, e.Option, d)
			}
		}
	}
}

// checkDaily: each range's daily donation and compound records sum the
// handler's LogDonation / LogFeeCompound events of that UTC day (decoded
// with the test protocol's own ABI), and carry the pool's price after the
// day's last one: slot0 at the end of its block, where no later swap in that
// block moved it.
func checkDaily(t *testing.T, p *pt.Protocol, ix *Indexer) {
	t.Helper()
	ctx := context.Background()
	a := pt.HandlerV2.ABI
	logs, err := p.Chain.Client().FilterLogs(ctx, ethereum.FilterQuery{Addresses: []common.Address{p.Handler},
		Topics: [][]common.Hash{{a.Events["LogDonation"].ID, a.Events["LogFeeCompound"].ID}}})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pt.Uniswap("pool")
	if err != nil {
		t.Fatal(err)
	}
	type day struct {
		sum  *big.Int
		last types.Log
	}
	days := map[string]*day{}
	for _, lg := range logs {
		name, field, typ := "LogDonation", "liquidityDonated", "DailyDonation"
		if lg.Topics[0] == a.Events["LogFeeCompound"].ID {
			name, field, typ = "LogFeeCompound", "liquidity", "DailyFeeCompound"
		}
		vals := map[string]any{}
		if err := a.UnpackIntoMap(vals, name, lg.Data); err != nil {
			t.Fatal(err)
		}
		ref := ix.Store.Get("StrikeRef", lower(p.Handler)+"-"+vals["tokenId"].(*big.Int).String())
		header, err := p.Chain.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(lg.BlockNumber))
		if err != nil || ref == nil {
			t.Fatalf("log %d/%d: %v, ref %v", lg.BlockNumber, lg.Index, err, ref)
		}
		key := typ + "/" + ref["strike"].Str + "-" + big.NewInt(int64(header.Time-header.Time%86400)).String()
		d := days[key]
		if d == nil {
			d = &day{sum: new(big.Int)}
			days[key] = d
		}
		d.sum.Add(d.sum, vals[field].(*big.Int))
		d.last = lg
	}
	if len(days) < 3 {
		t.Fatalf("setup: %d daily records", len(days))
	}
	for key, d := range days {
		typ, id, _ := strings.Cut(key, "/")
		e := ix.Store.Get(typ, id)
		amount := map[string]string{"DailyDonation": "donation", "DailyFeeCompound": "compound"}[typ]
		if e == nil || e[amount].Big.Cmp(d.sum) != 0 {
			t.Errorf("%s %s: %v, events sum %s", typ, id, e, d.sum)
			continue
		}
		blockLogs, err := p.Chain.Client().FilterLogs(ctx, ethereum.FilterQuery{FromBlock: new(big.Int).SetUint64(d.last.BlockNumber),
			ToBlock: new(big.Int).SetUint64(d.last.BlockNumber), Addresses: []common.Address{p.Pool}, Topics: [][]common.Hash{{pool.ABI.Events["Swap"].ID}}})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(blockLogs); n > 0 && blockLogs[n-1].Index > d.last.Index {
			continue // a later swap in the block: the end-of-block price is not the record's
		}
		out, err := p.Chain.Client().CallContract(ctx, ethereum.CallMsg{To: &p.Pool, Data: pool.ABI.Methods["slot0"].ID}, new(big.Int).SetUint64(d.last.BlockNumber))
		if err != nil {
			t.Fatal(err)
		}
		slot0, err := pool.ABI.Unpack("slot0", out)
		if err != nil {
			t.Fatal(err)
		}
		if e["sqrtPriceX96"].Big.Cmp(slot0[0].(*big.Int)) != 0 {
			t.Errorf("%s %s: sqrtPriceX96 %s, slot0 after its block %s", typ, id, e["sqrtPriceX96"].Big, slot0[0])
		}
	}
}

// positionData is the handler's mint payload: abi.encode(pool, hook,
// tickLower, tickUpper, liquidity).
func positionData(t *testing.T, p *pt.Protocol, r pt.Range, l *big.Int) []byte {
	t.Helper()
	addr, _ := abi.NewType("address", "", nil)
	i24, _ := abi.NewType("int24", "", nil)
	u128, _ := abi.NewType("uint128", "", nil)
	b, err := abi.Arguments{{Type: addr}, {Type: addr}, {Type: i24}, {Type: i24}, {Type: u128}}.
		Pack(p.Pool, r.Hook, big.NewInt(int64(r.TickLower)), big.NewInt(int64(r.TickUpper)), l)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
