package market

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// S11: a series drawn from records in any order is the series of the
// records in time order: each interval with a record shows its swaps,
// and only the interval without one is flat.
func TestSeriesDoesNotTrustRecordOrder(t *testing.T) {
	call, put := common.HexToAddress("0x01"), common.HexToAddress("0x02")
	p := candlePricer{&chain.MarketInfo{CallAsset: chain.Token{Address: call, Decimals: 18}, PutAsset: chain.Token{Address: put, Decimals: 6}, Token0: call, Token1: put}}
	sqrt := func(v int64) subgraph.BigInt { return subgraph.BigInt{Int: new(big.Int).Lsh(big.NewInt(v), 96)} }
	rec := func(start int64, swaps int, price int64) subgraph.Candle {
		return subgraph.Candle{ID: "x", Start: start, Open: sqrt(price), High: sqrt(price), Low: sqrt(price), Close: sqrt(price),
			Volume0: subgraph.BigInt{Int: big.NewInt(1)}, Volume1: subgraph.BigInt{Int: big.NewInt(1)}, Swaps: swaps}
	}
	// the first and last records swapped, as the attack's subgraph did
	recs := []subgraph.Candle{rec(300, 4, 5), rec(120, 2, 3), rec(180, 3, 4), rec(60, 1, 2)}
	got := p.series(recs, nil, 60, 360, 60)
	want := []int{1, 2, 3, 0, 4} // the interval at 240 has no record
	if len(got) != len(want) {
		t.Fatalf("%d candles, want %d: %+v", len(got), len(want), got)
	}
	for i, c := range got {
		if c.Time != 60+int64(i)*60 || c.Swaps != want[i] {
			t.Errorf("candle %d: time %d swaps %d, want time %d swaps %d", i, c.Time, c.Swaps, 60+int64(i)*60, want[i])
		}
	}
	// the interval without a record is flat at the close before it (the
	// record at 180, sqrt price 4: 16 put units a call unit, scaled)
	if got[3].Open != got[2].Close || got[3].Close != got[2].Close {
		t.Errorf("flat candle %+v, want open and close %s", got[3], got[2].Close)
	}
}
