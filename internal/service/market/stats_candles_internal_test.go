package market

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
)

// S11: a series drawn from swaps in any order is the series of the swaps
// in chain order: each interval with swaps shows them, opening after its
// first and closing after its last, and only the interval without one is
// flat, at the close before it.
func TestSeriesDoesNotTrustRecordOrder(t *testing.T) {
	call, put := common.HexToAddress("0x01"), common.HexToAddress("0x02")
	p := candlePricer{&chain.MarketInfo{CallAsset: chain.Token{Address: call, Decimals: 0}, PutAsset: chain.Token{Address: put, Decimals: 0}, Token0: call, Token1: put}}
	sqrt := func(v int64) *big.Int { return new(big.Int).Lsh(big.NewInt(v), 96) }
	sw := func(blk uint64, idx uint, tm, price int64) chain.Swap {
		return chain.Swap{Block: blk, Index: idx, Time: tm, SqrtPriceX96: sqrt(price), Amount0: big.NewInt(-1), Amount1: big.NewInt(price)}
	}
	// in chain order: one swap before the window, two in [60, 120), one in
	// [120, 180), one in [180, 240), none in [240, 300), one in [300, 360)
	ordered := []chain.Swap{sw(10, 0, 50, 2), sw(11, 0, 61, 3), sw(11, 1, 61, 5), sw(12, 0, 130, 4), sw(13, 0, 190, 6), sw(14, 0, 310, 7)}
	// the first and last swapped, as the attack's upstream did
	shuffled := append([]chain.Swap{ordered[5]}, ordered[1:5]...)
	shuffled = append(shuffled, ordered[0])
	got := p.series(nil, shuffled, 60, 360, 60)
	// prices are (sqrt)^2 put units a call unit with no decimals
	want := []struct {
		swaps                  int
		open, high, low, close string
		volPut                 string
	}{
		{2, "9", "25", "9", "25", "8"},
		{1, "16", "16", "16", "16", "4"},
		{1, "36", "36", "36", "36", "6"},
		{0, "36", "36", "36", "36", "0"},
		{1, "49", "49", "49", "49", "7"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d candles, want %d: %+v", len(got), len(want), got)
	}
	for i, c := range got {
		w := want[i]
		if c.Time != 60+int64(i)*60 || c.Swaps != w.swaps || c.Open != w.open || c.High != w.high || c.Low != w.low || c.Close != w.close || c.Volume.PutAsset != w.volPut {
			t.Errorf("candle %d: %+v, want time %d %+v", i, c, 60+int64(i)*60, w)
		}
	}
}
