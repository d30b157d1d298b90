package protocoltest

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// The V1 market: 5-argument LogMintOption (topic 0xe423bff1...), 5-word
// opTickMap, IV required per TTL, four-word handler payloads (a V1 handler
// under the V2 market and a V2 handler under the V1 market both revert),
// and an exercise that swaps every leg, zero included.
func TestV1Market(t *testing.T) {
	p := Deploy(t, Config{})
	p.DeployV1()
	_, tick := p.Slot0(p.Pool)
	lp, buyer := p.Users[0], p.Users[1]
	r := Range{TickLower: tick + 100, TickUpper: tick + 110}
	r2 := Range{TickLower: tick + 90, TickUpper: tick + 110}
	id1, l, err := p.DepositV1(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "V1 token id", id1, p.TokenIDV1(r))
	_, l2, err := p.DepositV1(lp, r2, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	if info := p.RangeInfoV1(r); info.TotalLiquidity.Cmp(l) != 0 || info.Token0 != p.Token0 {
		t.Fatalf("V1 tokenIds %+v", info)
	}
	opt := Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []Leg{{r, l}, {r2, l2}}}
	if _, _, err := p.BuyV1(buyer, Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7200, Legs: opt.Legs}); !IsRevert(err, "DopexV2OptionMarket__IVNotSet") {
		t.Fatalf("TTL without IV: %v", err)
	}
	id, rc, err := p.BuyV1(buyer, opt)
	if err != nil {
		t.Fatal(err)
	}
	mint := p.Find(rc, "LogMintOption")
	if got, want := mint.Log.Topics[0], crypto.Keccak256Hash([]byte("LogMintOption(address,uint256,bool,uint256,uint256)")); got != want || got.Hex()[:10] != "0xe423bff1" {
		t.Fatalf("V1 LogMintOption topic %s", got)
	}
	a0, _ := rangeAmounts(t, r, l)
	b0, _ := rangeAmounts(t, r2, l2)
	eq(t, "totalAssetWithdrawn", mint.Args["totalAssetWithdrawn"].(*big.Int), add(a0, b0))
	v := p.Chain.Call(p.MarketV1, MarketV1.ABI, "opTickMap", id, big.NewInt(1))
	if len(v) != 5 || v[0].(common.Address) != p.HandlerV1 || v[4].(*big.Int).Cmp(l2) != 0 {
		t.Fatalf("V1 opTickMap %v", v)
	}
	if name := p.Chain.Call(p.MarketV1, MarketV1.ABI, "name")[0].(string); name != "Dopex V2 Option Market" {
		t.Fatalf("name %q", name)
	}

	if _, err := p.SwapToTick(p.Users[2], 500, tick+300); err != nil {
		t.Fatal(err)
	}
	swap := UniV3SwapData(500, big.NewInt(0))
	if _, err := p.ExerciseV1(buyer, id, []ExerciseLeg{{p.Swapper, swap, l}, {p.Swapper, swap, new(big.Int)}}); err == nil {
		t.Fatal("V1 swaps a zero leg too: Uniswap refuses a zero amount")
	}
	_, req := rangeAmounts(t, r, l)
	out, _ := p.Quote(p.CallAsset, a0, 500)
	rc, err = p.ExerciseV1(buyer, id, []ExerciseLeg{{p.Swapper, swap, l}, {p.Swapper, swap, big.NewInt(1e12)}})
	if err != nil {
		t.Fatal(err)
	}
	outs := swapOuts(p, p.Events(rc), false)
	eq(t, "leg 0 output", outs[0], out)
	_, req2 := rangeAmounts(t, r2, big.NewInt(1e12))
	eq(t, "V1 profit", p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int), sub(add(outs[0], outs[1]), add(req, req2)))

	// Payload formats: each market can only use its own handler version,
	// even when the position manager pairs them.
	// Both handler versions hold a range above the current price; each
	// market buys from its own version and fails on the other's payload.
	p.WhitelistApp(p.HandlerV1, p.Market, true)
	p.WhitelistApp(p.Handler, p.MarketV1, true)
	_, now := p.Slot0(p.Pool)
	now = now / 10 * 10
	rr := Range{TickLower: now + 100, TickUpper: now + 110}
	if _, _, err := p.Deposit(lp, rr, e18(1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.DepositV1(lp, rr, e18(1)); err != nil {
		t.Fatal(err)
	}
	small := big.NewInt(1e15)
	leg := func(h common.Address) Option {
		return Option{IsCall: true, TickLower: rr.TickLower, TickUpper: rr.TickUpper, TTL: 3600,
			Legs: []Leg{{Range{Handler: h, TickLower: rr.TickLower, TickUpper: rr.TickUpper}, small}}}
	}
	if _, _, err := p.Buy(buyer, leg(p.HandlerV1)); err == nil {
		t.Fatal("a V1 handler under the V2 market")
	}
	if _, _, err := p.BuyV1(buyer, leg(p.Handler)); err == nil {
		t.Fatal("a V2 handler under the V1 market")
	}
	if _, _, err := p.Buy(buyer, leg(p.Handler)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.BuyV1(buyer, leg(p.HandlerV1)); err != nil {
		t.Fatal(err)
	}
}
