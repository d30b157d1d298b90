package pipeline

import (
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// Market data on the pipeline: swaps both ways through the prime pool at
// uneven times over some hours (intervals with several swaps, with one,
// with none), indexed by the compiled mappings, then the live gateway's
// candles of every interval length checked against the pool's own Swap
// events read from the chain: per interval, open, high, low and close are
// the market's getCurrentPricePerCallAsset at the blocks of its first,
// highest, lowest and last swap (one swap per block, checked), an interval
// without a swap is flat at the previous close, and the volumes are the
// sums of the swaps' |amount| of each token. The mark price is checked
// against slot0 and getCurrentPricePerCallAsset at the answer's block, and
// the price rule against getPricePerCallAssetViaTick over the tick range
// (both of _getPrice's branches).
func TestPipelineMarketData(t *testing.T) { marketData(t, pt.Config{}) }

// The same on an inverted market (the call asset is token1: its price
// falls as the pool's rises, so the pool's high is the call's low).
func TestPipelineMarketDataInverted(t *testing.T) { marketData(t, pt.Config{Inverted: true}) }

func marketData(t *testing.T, cfg pt.Config) {
	p := pt.Deploy(t, cfg)
	ix := New(t, p)
	swapActivity(t, p)
	multicall := p.DeployMulticall3()
	ix.Sync()
	a := statsGateway(t, p, ix, multicall, true)
	swaps := poolSwaps(t, p)
	first, last := int64(0), swaps[len(swaps)-1].time
	for i := len(swaps) - 1; i >= 0 && !swaps[i].init; i-- {
		first = swaps[i].time // the first swap (after the pool's Initialize)
	}
	for name, step := range market.CandleIntervals {
		// from before the first swap (flat at the pool's price before
		// the window, where the pool was there) to past the last, paged
		// by window where it is more than MaxCandles intervals
		from, to := first-2*step+7, last+3*step
		var got []market.Candle
		var at uint64
		for w := from; w < to; w = w/step*step + market.MaxCandles*step {
			page, n := askCandles(t, a, p, name, w, min(to, w/step*step+market.MaxCandles*step))
			got, at = append(got, page.Candles...), n
		}
		want := expectCandles(t, p, swaps, step, from, min(to, blockTime(t, p, at)+1))
		checkCandles(t, name, got, want)
	}
	refusedCandles(t, a, p)
	checkMarkPrice(t, p, a, true)
	checkMarkPrice(t, p, statsGateway(t, p, ix, multicall, false), false)
	checkPriceRule(t, p)
}

// swapActivity swaps through the prime pool from 00:00:30 UTC of the next
// day on: bursts within one minute, gaps of several minutes and hours,
// both directions, so every interval length has candles of several swaps,
// of one, and none.
func swapActivity(t *testing.T, p *pt.Protocol) {
	t.Helper()
	trader := p.Users[1]
	now := int64(p.Chain.Now())
	p.Chain.AdjustTime(time.Duration(now/86400*86400+86400+30-now) * time.Second)
	_, tick := p.Slot0(p.Pool)
	steps := []struct {
		wait time.Duration
		tick int // target, relative to the start
	}{
		{0, 120}, {5 * time.Second, 60}, {5 * time.Second, 200}, {20 * time.Second, -40}, // one minute, four swaps
		{4 * time.Minute, -150}, {30 * time.Second, 10},
		{17 * time.Minute, 300}, {50 * time.Minute, 250}, {10 * time.Second, 320},
		{3 * time.Hour, -220}, {5 * time.Hour, -100}, {20 * time.Hour, 80},
	}
	for _, s := range steps {
		p.Chain.AdjustTime(s.wait)
		if _, err := p.SwapToTick(trader, p.Fee, tick+s.tick); err != nil {
			t.Fatal(err)
		}
	}
}

// chainSwap is one Swap event of the prime pool, decoded here from the
// chain, with the market's price per call asset at its block.
type chainSwap struct {
	time             int64
	block            uint64
	sqrtP            *big.Int
	price            *big.Int // getCurrentPricePerCallAsset at the swap's block
	amount0, amount1 *big.Int
	// init marks the pool's Initialize event: its first price, no swap
	init bool
}

// poolSwaps are every Swap event of the prime pool, and its Initialize
// (its first price), in chain order; each block holds at most one, so the
// market's price at the block is the price after it.
func poolSwaps(t *testing.T, p *pt.Protocol) []chainSwap {
	t.Helper()
	logs, err := p.Chain.Client().FilterLogs(t.Context(), ethereum.FilterQuery{FromBlock: big.NewInt(0), Addresses: []common.Address{p.Pool}})
	if err != nil {
		t.Fatal(err)
	}
	ptrs := make([]*types.Log, len(logs))
	for i := range logs {
		ptrs[i] = &logs[i]
	}
	var out []chainSwap
	swaps := 0
	for _, e := range p.Events(&types.Receipt{Logs: ptrs}) {
		if e.Name != "Swap" && e.Name != "Initialize" {
			continue
		}
		n := e.Log.BlockNumber
		if len(out) > 0 && out[len(out)-1].block == n {
			t.Fatalf("setup: two swaps in block %d", n)
		}
		if e.Name == "Initialize" {
			// the market may come after its pool: its price rule is read
			// where the pool still holds this price, before the next swap
			out = append(out, chainSwap{time: blockTime(t, p, n), block: n, sqrtP: e.Args["sqrtPriceX96"].(*big.Int), init: true})
			continue
		}
		price := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
		if len(out) > 0 && out[len(out)-1].init {
			out[len(out)-1].price = callAt(t, p, p.Market, pt.MarketV2.ABI, n-1, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
		}
		swaps++
		out = append(out, chainSwap{time: blockTime(t, p, n), block: n, sqrtP: e.Args["sqrtPriceX96"].(*big.Int), price: price,
			amount0: e.Args["amount0"].(*big.Int), amount1: e.Args["amount1"].(*big.Int)})
	}
	if swaps < 10 {
		t.Fatalf("setup: %d swaps", len(out))
	}
	return out
}

func blockTime(t *testing.T, p *pt.Protocol, n uint64) int64 {
	t.Helper()
	h, err := p.Chain.Client().HeaderByNumber(t.Context(), new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatal(err)
	}
	return int64(h.Time)
}

func askCandles(t *testing.T, a *app.App, p *pt.Protocol, interval string, from, to int64) (market.Candles, uint64) {
	t.Helper()
	url := gateway.PathCandles + "?chainId=42161&optionMarket=" + p.Market.Hex() + "&interval=" + interval + "&from=" + strconv.FormatInt(from, 10) + "&to=" + strconv.FormatInt(to, 10)
	var out market.Candles
	at := get(t, a, url, &out)
	if out.Pool != p.Pool.Hex() || out.Interval != interval || out.CallAsset.Address != p.CallAsset.Hex() || out.PutAsset.Address != p.PutAsset.Hex() {
		t.Errorf("%s: pool %s interval %s assets %s %s", url, out.Pool, out.Interval, out.CallAsset.Address, out.PutAsset.Address)
	}
	return out, at
}

// expectCandles builds the candles of the intervals starting in
// [from aligned down, end) from the swaps: from the first interval with a
// price (the market's price at the last block before the window, where
// its pool answered there, or a swap in it or before it) on.
func expectCandles(t *testing.T, p *pt.Protocol, swaps []chainSwap, step, from, end int64) []market.Candle {
	t.Helper()
	put := int(p.PutDecimals)
	format := func(v *big.Int) string { return clamm.FormatUnits(v, put) }
	var out []market.Candle
	prev := priceBefore(t, p, from/step*step)
	i := 0
	for ; i < len(swaps) && swaps[i].time < from/step*step; i++ {
		prev = swaps[i].price
	}
	for s := from / step * step; s < end; s += step {
		var c market.Candle
		c.Time = s
		vol0, vol1 := new(big.Int), new(big.Int)
		var hi, lo *big.Int
		for ; i < len(swaps) && swaps[i].time < s+step; i++ {
			sw := swaps[i]
			if sw.init {
				if c.Swaps == 0 {
					prev = sw.price
				}
				continue
			}
			if c.Swaps == 0 {
				c.Open, hi, lo = format(sw.price), sw.price, sw.price
			}
			c.Swaps++
			if sw.price.Cmp(hi) > 0 {
				hi = sw.price
			}
			if sw.price.Cmp(lo) < 0 {
				lo = sw.price
			}
			vol0.Add(vol0, new(big.Int).Abs(sw.amount0))
			vol1.Add(vol1, new(big.Int).Abs(sw.amount1))
			prev = sw.price
		}
		if prev == nil {
			continue
		}
		if c.Swaps == 0 {
			c.Open, hi, lo = format(prev), prev, prev
		}
		c.High, c.Low, c.Close = format(hi), format(lo), format(prev)
		c.Volume.CallAsset, c.Volume.PutAsset = vol0.String(), vol1.String()
		if p.CallAsset != p.Token0 {
			c.Volume.CallAsset, c.Volume.PutAsset = vol1.String(), vol0.String()
		}
		out = append(out, c)
	}
	return out
}

// priceBefore is the market's price at the end of the last block before
// time ts; nil where no block is before it or the pool was not there.
func priceBefore(t *testing.T, p *pt.Protocol, ts int64) *big.Int {
	t.Helper()
	head, err := p.Chain.Client().BlockNumber(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := head
	for n > 0 && blockTime(t, p, n) >= ts {
		n--
	}
	if blockTime(t, p, n) >= ts {
		return nil
	}
	data, err := pt.MarketV2.ABI.Pack("getCurrentPricePerCallAsset", p.Pool)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Chain.Client().CallContract(t.Context(), ethereum.CallMsg{To: &p.Market, Data: data}, new(big.Int).SetUint64(n))
	if err != nil || len(out) < 32 {
		return nil // the market or its pool not there yet
	}
	return new(big.Int).SetBytes(out[:32])
}

func checkCandles(t *testing.T, interval string, got, want []market.Candle) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d candles, want %d: %+v", interval, len(got), len(want), got)
	}
	swapped, empty := 0, 0
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s candle %d:\n got %+v\nwant %+v", interval, i, got[i], want[i])
		}
		if want[i].Swaps > 1 {
			swapped++
		}
		if want[i].Swaps == 0 {
			empty++
		}
	}
	if swapped == 0 || (interval != "1d" && empty == 0) {
		t.Errorf("setup: %s has %d candles of several swaps and %d without one", interval, swapped, empty)
	}
}

// refusedCandles: a bad interval, a reversed window and one of more than
// MaxCandles intervals are 400s naming the parameter.
func refusedCandles(t *testing.T, a *app.App, p *pt.Protocol) {
	t.Helper()
	base := gateway.PathCandles + "?chainId=42161&optionMarket=" + p.Market.Hex()
	for _, c := range []struct{ query, param string }{
		{"&interval=2h&from=0&to=3600", "interval"},
		{"&interval=1h&from=7200&to=3600", "to"},
		{"&interval=1m&from=0&to=86401", "to"}, // 1,441 minutes: past MaxCandles
	} {
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, base+c.query, nil))
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"param":"`+c.param+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.query, rec.Code, rec.Body, c.param)
		}
	}
}

// checkMarkPrice: the mark price's slot0 and price are the pool's and the
// market's at the answer's block; usd only for a configured stablecoin.
func checkMarkPrice(t *testing.T, p *pt.Protocol, a *app.App, usd bool) {
	t.Helper()
	var got market.MarkPrice
	n := get(t, a, gateway.PathMarkPrice+"?chainId=42161&optionMarket="+p.Market.Hex(), &got)
	sqrtP := slot0At(t, p, p.Pool, n)
	tick := tickAt(t, p, n)
	price := callAt(t, p, p.Market, pt.MarketV2.ABI, n, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
	if got.SqrtPriceX96 != sqrtP.String() || int64(got.Tick) != tick.Int64() || got.Price != price.String() || got.MarkPrice != clamm.FormatUnits(price, int(p.PutDecimals)) || got.Pool != p.Pool.Hex() {
		t.Errorf("mark price at %d: %+v, want slot0 (%s, %s) and price %s", n, got, sqrtP, tick, price)
	}
	if got.USD != usd || (got.MarkPriceUSD != nil) != usd || (got.QuoteAssetPriceUSD != nil) != usd || (usd && (*got.MarkPriceUSD != got.MarkPrice || *got.QuoteAssetPriceUSD != "1")) {
		t.Errorf("mark price usd (stablecoin %v): %+v", usd, got)
	}
}

// tickAt is the prime pool's slot0 tick at block n (its second word,
// an int24 sign-extended).
func tickAt(t *testing.T, p *pt.Protocol, n uint64) *big.Int {
	t.Helper()
	out, err := p.Chain.Client().CallContract(t.Context(), ethereum.CallMsg{To: &p.Pool, Data: common.FromHex("0x3850c7bd")}, new(big.Int).SetUint64(n)) // slot0()
	if err != nil || len(out) < 64 {
		t.Fatalf("slot0 at %d: %v", n, err)
	}
	v := new(big.Int).SetBytes(out[32:64])
	if out[32]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), 256))
	}
	return v
}

// checkPriceRule holds clamm.PricePerCallAsset to the market's
// getPricePerCallAssetViaTick over the tick range, past 2^128 too.
func checkPriceRule(t *testing.T, p *pt.Protocol) {
	t.Helper()
	for _, tick := range []int{-600000, -300000, -196256, -1, 0, 1, 196256, 300000, 600000, 800000} {
		want := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(tick)))[0].(*big.Int)
		sqrtP, err := clamm.SqrtRatioAtTick(tick)
		if err != nil {
			t.Fatal(err)
		}
		if got := clamm.PricePerCallAsset(sqrtP, p.CallAsset == p.Token0, int(p.CallDecimals)); got.Cmp(want) != 0 {
			t.Errorf("tick %d: price %s, the market's %s", tick, got, want)
		}
	}
}
