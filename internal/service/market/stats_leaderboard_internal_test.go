package market

import (
	"math/big"
	"slices"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The leaderboard's sums, on a history whose every figure is worked out by
// hand: a WETH/USDC market (USDC a USD stablecoin, WETH token0, the price
// 4 raw USDC per raw WETH: sqrtPriceX96 = 2^97) and an ARB/WETH market
// whose put asset is no stablecoin, so it has no USD figures.
func TestLeaderboardSums(t *testing.T) {
	weth, usdc, arb := common.HexToAddress("0x01"), common.HexToAddress("0x02"), common.HexToAddress("0x03")
	usdMkt, other := common.HexToAddress("0xa1"), common.HexToAddress("0xa2")
	a, b, c, d := common.HexToAddress("0xaa"), common.HexToAddress("0xbb"), common.HexToAddress("0xcc"), common.HexToAddress("0xdd")
	e := common.HexToAddress("0x55") // ties with d at a USD net of 0: ranked first by address
	markets := map[common.Address]boardMarket{
		usdMkt: {info: &chain.MarketInfo{Market: usdMkt, CallAsset: chain.Token{Address: weth, Decimals: 18}, PutAsset: chain.Token{Address: usdc, Decimals: 6}, Token0: weth},
			v: valuer{callIs0: true, usd: true, decimals: 6}},
		other: {info: &chain.MarketInfo{Market: other, CallAsset: chain.Token{Address: arb, Decimals: 18}, PutAsset: chain.Token{Address: weth, Decimals: 18}, Token0: arb},
			v: valuer{callIs0: true, decimals: 18}},
	}
	n := func(v int64) subgraph.BigInt { return subgraph.BigInt{Int: big.NewInt(v)} }
	price := subgraph.BigInt{Int: new(big.Int).Lsh(big.NewInt(1), 97)}
	buy := func(id string, m, who common.Address, call bool, vol, prem, fees int64) subgraph.BoardPurchase {
		return subgraph.BoardPurchase{Market: subgraph.Address(m), StatsPurchase: subgraph.StatsPurchase{ID: id, Buyer: subgraph.Address(who), IsCall: call,
			TotalAssetWithdrawn: n(vol), Premium: n(prem), ProtocolFees: n(fees), SqrtPriceX96: price}}
	}
	exercise := func(id string, m, who common.Address, call bool, toOwner *subgraph.BigInt) subgraph.BoardExercise {
		x := subgraph.BoardExercise{Market: subgraph.Address(m), User: subgraph.Address(who), ProfitToOwner: toOwner,
			StatsExercise: subgraph.StatsExercise{ID: id, SqrtPriceX96: price}}
		x.Option.IsCall = call
		return x
	}
	bs := newBoardSums(markets)
	bs.purchase(buy("p1", usdMkt, a, true, 1000, 10, 1))               // WETH: 4000, 40, 4 raw USDC
	bs.exercise(exercise("x1", usdMkt, a, true, bigPtr(n(500))))       // 500 raw USDC
	bs.purchase(buy("p2", usdMkt, b, false, 2_000_000, 100_000, 5000)) // USDC
	bs.exercise(exercise("x2", usdMkt, b, false, nil))                 // payment to the owner not found
	bs.exercise(exercise("x3", usdMkt, c, true, bigPtr(n(1_000_000)))) // bought before the window
	bs.purchase(buy("p3", other, d, true, 7, 3, 1))                    // ARB, no USD figure
	bs.exercise(exercise("x4", other, d, true, bigPtr(n(900))))        // WETH
	bs.exercise(exercise("x5", other, e, false, bigPtr(n(7))))         // ARB, no USD figure

	entries, traders := bs.ranking(10, 0)
	if traders != 5 || len(entries) != 5 {
		t.Fatalf("%d traders, %d entries; want 5, 5", traders, len(entries))
	}
	want := []struct {
		trader              common.Address
		purchases, exercise int
		usd                 BoardUSD
		tokens              []string // token: volume premiums fees realised net
	}{
		{c, 0, 1, BoardUSD{"0", "0", "0", "1", "1"}, []string{"usdc 0 0 0 1000000 1000000"}},
		{a, 1, 1, BoardUSD{"0.004", "0.00004", "0.000004", "0.0005", "0.000456"}, []string{"weth 1000 10 1 0 -11", "usdc 0 0 0 500 500"}},
		{e, 0, 1, BoardUSD{"0", "0", "0", "0", "0"}, []string{"arb 0 0 0 7 7"}},
		{d, 1, 1, BoardUSD{"0", "0", "0", "0", "0"}, []string{"weth 0 0 0 900 900", "arb 7 3 1 0 -4"}},
		{b, 1, 1, BoardUSD{"2", "0.1", "0.005", "0", "-0.105"}, []string{"usdc 2000000 100000 5000 0 -105000"}},
	}
	names := map[string]string{weth.Hex(): "weth", usdc.Hex(): "usdc", arb.Hex(): "arb"}
	for i, w := range want {
		e := entries[i]
		var got []string
		for _, f := range e.Tokens {
			got = append(got, names[f.Token.Address]+" "+f.Volume+" "+f.Premiums+" "+f.ProtocolFees+" "+f.Realised+" "+f.Net)
		}
		if e.Rank != i+1 || e.Trader != w.trader.Hex() || e.Purchases != w.purchases || e.Exercises != w.exercise || e.USD != w.usd || !slices.Equal(got, w.tokens) {
			t.Errorf("entry %d: %+v %v; want %s %d %d %+v %v", i, e, got, w.trader.Hex(), w.purchases, w.exercise, w.usd, w.tokens)
		}
	}
	page, traders := bs.ranking(2, 1)
	if traders != 5 || len(page) != 2 || page[0].Trader != a.Hex() || page[0].Rank != 2 || page[1].Trader != e.Hex() {
		t.Errorf("page first 2 skip 1: %+v (of %d)", page, traders)
	}
	if page, _ := bs.ranking(5, 5); len(page) != 0 || page == nil {
		t.Errorf("page past the end: %#v; want an empty list", page)
	}
}

func bigPtr(v subgraph.BigInt) *subgraph.BigInt { return &v }
