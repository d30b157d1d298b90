package market_test

import (
	"context"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer/indexertest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// scaleChain is a chain whose market is known and whose pools' swaps are
// read from a node at Arbitrum's scale (indexertest.Scale).
type scaleChain struct {
	vocab.Chain
	r    *chain.Reader
	info *chain.MarketInfo
}

func (c scaleChain) Market(context.Context, common.Address) (*chain.MarketInfo, error) {
	return c.info, nil
}

func (c scaleChain) PoolSwaps(ctx context.Context, pool common.Address, from, to int64) (chain.SwapWindow, error) {
	return c.r.PoolSwaps(ctx, pool, from, to)
}

// A day of 1-minute candles on a pool that swapped 60,000 times that day,
// 220 million blocks into a chain of four blocks a second, behind a
// provider's caps (10,000 logs an answer, 10,000 blocks a range): on a
// miss in at most 10 node round trips, each candle the one the pool's
// Swap events make (read back from the node one range at a time and
// decoded here); asked again, from memory with no round trip.
func TestCandlesOfADayOfABusyPool(t *testing.T) {
	s, h, svc, info := candleChain(t, 60_000)
	headTime := int64(s.Time(s.Head))
	day := (headTime - 2*86_400) / 86_400 * 86_400 // a whole UTC day, closed a day before the head
	req := market.CandlesRequest{ChainID: 42161, Market: info.Market, Interval: "1m", Seconds: 60, From: day, To: day + 86_400}
	before := requests(s)
	got, err := svc.Candles(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	trips := requests(s) - before
	want := expectedCandles(t, s, h, info, day, 60, 1440)
	if len(got.Candles) != 1440 || len(want) != 1440 {
		t.Fatalf("%d candles, %d expected, want 1440", len(got.Candles), len(want))
	}
	swaps := sameCandles(t, got.Candles, want)
	if swaps < 59_999 || swaps > 60_001 {
		t.Errorf("%d swaps in the day, want 60,000", swaps)
	}
	t.Logf("a day of 1m candles over %d swaps: %d round trips (%v)", swaps, trips, s.Requests())
	if trips > 10 {
		t.Errorf("%d round trips on a miss, want at most 10", trips)
	}
	before = requests(s)
	again, err := svc.Candles(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests(s) - before; n != 0 || len(again.Candles) != 1440 || again.Candles[700] != got.Candles[700] {
		t.Errorf("asked again: %d round trips, %d candles", n, len(again.Candles))
	}
}

// Ten days of hourly candles on a quiet pool (600 swaps a day): 350
// ranges of 10,000 blocks holding few logs each are asked in a few large
// batches once the first answers show they are small, not twelve a batch
// (29 batches).
func TestCandlesOfTenQuietDays(t *testing.T) {
	s, h, svc, info := candleChain(t, 600)
	from := (int64(s.Time(s.Head)) - 11*86_400) / 86_400 * 86_400
	req := market.CandlesRequest{ChainID: 42161, Market: info.Market, Interval: "1h", Seconds: 3600, From: from, To: from + 10*86_400}
	before := requests(s)
	got, err := svc.Candles(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	trips := requests(s) - before
	want := expectedCandles(t, s, h, info, from, 3600, 240)
	if len(got.Candles) != 240 || len(want) != 240 {
		t.Fatalf("%d candles, %d expected, want 240", len(got.Candles), len(want))
	}
	swaps := sameCandles(t, got.Candles, want)
	t.Logf("ten days of 1h candles over %d swaps: %d round trips (%v)", swaps, trips, s.Requests())
	if swaps < 5_999 || swaps > 6_001 || trips > 10 {
		t.Errorf("%d swaps in %d round trips, want 6,000 in at most 10", swaps, trips)
	}
}

// sameCandles fails at the first candle unlike its expected one, and
// returns the swaps they hold.
func sameCandles(t *testing.T, got, want []market.Candle) int {
	t.Helper()
	swaps := 0
	for i, c := range got {
		w := want[i]
		swaps += c.Swaps
		if c.Time != w.Time || c.Swaps != w.Swaps || c.Open != w.Open || c.High != w.High || c.Low != w.Low || c.Close != w.Close ||
			c.Volume.CallAsset != w.Volume.CallAsset || c.Volume.PutAsset != w.Volume.PutAsset {
			t.Fatalf("candle %d:\n got %+v\nwant %+v", i, c, w)
		}
	}
	return swaps
}

// candleChain is a market whose pool swaps perDay times a day on a node at
// Arbitrum's scale, and the service reading it.
func candleChain(t *testing.T, perDay uint64) (*indexertest.Scale, *indexertest.Handler, *market.Market, *chain.MarketInfo) {
	t.Helper()
	h, err := indexertest.NewHandler(common.HexToAddress("0xa0001"), common.HexToAddress("0xb0001"))
	if err != nil {
		t.Fatal(err)
	}
	s := indexertest.ArbitrumScale(42161, []*indexertest.Handler{h}, 1)
	s.SwapsPerDay = perDay
	s.Call = h.Slot0(new(big.Int).Lsh(big.NewInt(1), 96), 0)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	rc, err := rpc.Dial(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	r, err := chain.NewReader(rc, chain.Options{CallTimeout: time.Minute, ImmutablesTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	weth, usdc := common.HexToAddress("0xe1"), common.HexToAddress("0xe2")
	info := &chain.MarketInfo{Market: common.HexToAddress("0xc1"), Pool: h.Pool, Token0: weth, Token1: usdc,
		CallAsset: chain.Token{Address: weth, Decimals: 18, Symbol: "WETH"}, PutAsset: chain.Token{Address: usdc, Decimals: 6, Symbol: "USDC"}}
	svc := market.New(vocab.Chains{42161: {Chain: scaleChain{r: r, info: info}}})
	return s, h, svc, info
}

func requests(s *indexertest.Scale) int64 {
	var n int64
	for _, v := range s.Requests() {
		n += v
	}
	return n
}

// expectedCandles are the n candles of step seconds from time from, from
// the pool's Swap events as the node serves them, read here in
// 10,000-block ranges from an hour before from (the price before it) and
// bucketed by their blocks' times.
func expectedCandles(t *testing.T, s *indexertest.Scale, h *indexertest.Handler, info *chain.MarketInfo, from, step, n int64) []market.Candle {
	t.Helper()
	day := from
	first := s.Head - uint64(int64(s.Time(s.Head))-day+3600)*s.BlocksPerSecond
	last := first + uint64(n*step+2*3600)*s.BlocksPerSecond
	ty := func(n string) abi.Type { x, _ := abi.NewType(n, "", nil); return x }
	data := abi.Arguments{{Type: ty("int256")}, {Type: ty("int256")}, {Type: ty("uint160")}, {Type: ty("uint128")}, {Type: ty("int24")}}
	type sw struct {
		time        int64
		a0, a1, sqr *big.Int
	}
	var all []sw
	rc, err := rpc.Dial(httptest.NewServer(s).URL)
	if err != nil {
		t.Fatal(err)
	}
	for from := first; from <= last; from += 10_000 {
		var logs []types.Log
		q := map[string]any{"fromBlock": hexNum(from), "toBlock": hexNum(from + 9_999), "address": h.Pool, "topics": [][]common.Hash{{h.SwapTopic()}}}
		if err := rc.Call(&logs, "eth_getLogs", q); err != nil {
			t.Fatal(err)
		}
		for _, l := range logs {
			v, err := data.Unpack(l.Data)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, sw{int64(s.Time(l.BlockNumber)), v[0].(*big.Int), v[1].(*big.Int), v[2].(*big.Int)})
		}
	}
	price := func(x *big.Int) string {
		return clamm.FormatUnits(clamm.PricePerCallAsset(x, true, 18), 6)
	}
	var out []market.Candle
	var prev *big.Int
	i := 0
	for ; i < len(all) && all[i].time < day; i++ {
		prev = all[i].sqr
	}
	for k := int64(0); k < n; k++ {
		t0 := day + step*k
		c := market.Candle{Time: t0}
		v0, v1 := new(big.Int), new(big.Int)
		var hi, lo *big.Int
		for ; i < len(all) && all[i].time < t0+step; i++ {
			x := all[i].sqr
			if c.Swaps == 0 {
				c.Open, hi, lo = price(x), x, x
			}
			if x.Cmp(hi) > 0 {
				hi = x
			}
			if x.Cmp(lo) < 0 {
				lo = x
			}
			v0.Add(v0, new(big.Int).Abs(all[i].a0))
			v1.Add(v1, new(big.Int).Abs(all[i].a1))
			c.Swaps++
			prev = x
		}
		if c.Swaps == 0 {
			c.Open, hi, lo = price(prev), prev, prev
		}
		c.High, c.Low, c.Close = price(hi), price(lo), price(prev)
		c.Volume.CallAsset, c.Volume.PutAsset = v0.String(), v1.String()
		out = append(out, c)
	}
	return out
}

func hexNum(n uint64) string { return "0x" + new(big.Int).SetUint64(n).Text(16) }
