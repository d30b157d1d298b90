package market

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// MaxCandles is the most candles one answer holds: a day of 1-minute
// intervals; a window of more is refused, and a chart pages by asking the
// next window.
const MaxCandles = 1440

// CandleFinality is how long after a window's end its candles are taken
// as final: a window that closed at least this long before the answer's
// block is kept (closedCandles) and answered again without the node. A
// reorg deeper than this would change them: Arbitrum's and Ethereum's
// blocks are final well within it.
const CandleFinality = 15 * time.Minute

// closedCandles bound the closed windows kept: 256 answers, 32 MiB.
const (
	closedCandlesEntries = 256
	closedCandlesBytes   = 32 << 20
)

// CandleIntervals are the interval names served and their lengths in
// seconds.
var CandleIntervals = map[string]int64{"1m": 60, "5m": 300, "15m": 900, "1h": 3600, "4h": 14400, "1d": 86400}

// CandlesRequest is a validated candles request: a market, an interval
// (name and length in seconds) and the half-open window [From, To) of
// unix seconds, which the candles' intervals meet.
type CandlesRequest struct {
	ChainID  uint64
	Market   common.Address
	Interval string
	Seconds  int64
	From, To int64
}

// Candles is the candles answer: the prime pool's price per call asset in
// the put asset over each interval of the window, with the swaps' volume.
type Candles struct {
	Market    string      `json:"market"`
	Pool      string      `json:"pool"`
	CallAsset vocab.Token `json:"callAsset"`
	PutAsset  vocab.Token `json:"putAsset"`
	Interval  string      `json:"interval"`
	From      string      `json:"from"`
	To        string      `json:"to"`
	Candles   []Candle    `json:"candles"`
}

// Candle is one interval. Prices are one whole call asset in the put
// asset, exact decimals of the put-asset base units the market's
// getPricePerCallAssetViaTick rule gives for the pool's price after a swap
// (clamm.PricePerCallAsset): open after the interval's first swap, close
// after its last, high and low the highest and lowest of the interval. An
// interval without a swap is flat at the previous close (swaps 0).
type Candle struct {
	Time   int64  `json:"time"`
	Open   string `json:"open"`
	High   string `json:"high"`
	Low    string `json:"low"`
	Close  string `json:"close"`
	Swaps  int    `json:"swaps"`
	Volume struct {
		// CallAsset and PutAsset are the sums of the swaps' amounts of
		// each token, in or out of the pool, in base units.
		CallAsset string `json:"callAsset"`
		PutAsset  string `json:"putAsset"`
	} `json:"volume"`
}

// Candles answers a market's candles from its prime pool's Swap events:
// its immutables (cached after the first read) name the pool, whose swaps
// over the window the node's logs give (chain.Reader.PoolSwaps: a few
// round trips a window, whatever the pool's rate), with its price at the
// block before the window. No index holds the swaps, so a chain indexed
// by the gateway and one served by Graph Node give the same candles. A
// window closed CandleFinality before the answer's block is kept and
// answered again from memory.
func (s *Market) Candles(ctx context.Context, req CandlesRequest) (Candles, error) {
	up, err := s.chains.Of(req.ChainID, false)
	if err != nil {
		return Candles{}, err
	}
	info, err := up.Chain.Market(ctx, req.Market)
	if err != nil {
		return Candles{}, err
	}
	key := fmt.Sprintf("%d/%s/%d/%d/%d", req.ChainID, info.Pool.Hex(), req.Seconds, req.From, req.To)
	head := atHead(ctx)
	if c, _, ok := s.closedCandles.Peek(key); ok && head {
		return c, nil
	}
	first := req.From / req.Seconds * req.Seconds
	w, err := up.Chain.PoolSwaps(ctx, info.Pool, first, req.To)
	if err != nil {
		return Candles{}, err
	}
	out := Candles{
		Market: info.Market.Hex(), Pool: info.Pool.Hex(), CallAsset: vocab.TokenOf(info.CallAsset), PutAsset: vocab.TokenOf(info.PutAsset),
		Interval: req.Interval, From: strconv.FormatInt(req.From, 10), To: strconv.FormatInt(req.To, 10),
	}
	out.Candles = candlePricer{info}.series(w.Open, w.Swaps, first, min(req.To, w.Head.Timestamp+1), req.Seconds)
	if head && req.To+int64(CandleFinality/time.Second) <= w.Head.Timestamp {
		s.closedCandles.Set(key, out, cache.Policy{TTL: 24 * time.Hour})
	}
	return out, nil
}

// atHead reports whether the answer is read at the head: only such
// answers use the closed windows kept. One asked at a block reads the
// node at that block and keeps nothing, so what it reads never depends
// on what other answers read before it (a recording of the node's answers
// replays whatever the order; a stream asking each new block reads the
// window each time, as for any other route).
func atHead(ctx context.Context) bool {
	p := block.From(ctx)
	return p == nil || p.Want == 0
}

// series is one candle per interval starting in [first, end) from the
// first one with a known price (the pool's before the window, or its
// first swap's): an interval with swaps opens at the price after its
// first, closes after its last, its high and low the extremes after each;
// one without is flat at the close before it (or at the pool's Initialize
// price, before its first swap). Swaps are bucketed by their
// block's time and walked in chain order (block, log index), whatever
// order they came in; those before first only carry the price to it.
func (p candlePricer) series(open *big.Int, swaps []chain.Swap, first, end, step int64) []Candle {
	swaps = slices.Clone(swaps)
	slices.SortStableFunc(swaps, func(a, b chain.Swap) int {
		if a.Block != b.Block {
			return cmp.Compare(a.Block, b.Block)
		}
		return cmp.Compare(a.Index, b.Index)
	})
	last := open
	i := 0
	for ; i < len(swaps) && swaps[i].Time < first; i++ {
		last = swaps[i].SqrtPriceX96
	}
	out := []Candle{}
	for t := first; t < end; t += step {
		var in []chain.Swap
		for ; i < len(swaps) && swaps[i].Time < t+step; i++ {
			if swaps[i].Initialize {
				if len(in) == 0 {
					last = swaps[i].SqrtPriceX96 // the pool's first price: no swap
				}
				continue
			}
			in = append(in, swaps[i])
		}
		switch {
		case len(in) > 0:
			out = append(out, p.candle(t, in))
			last = in[len(in)-1].SqrtPriceX96
		case last != nil:
			out = append(out, p.flat(t, last))
		}
	}
	return out
}

// newClosedCandles is the service's memory of closed windows.
func newClosedCandles() *cache.Cache[Candles] {
	return cache.New[Candles](cache.Options{MaxEntries: closedCandlesEntries, MaxBytes: closedCandlesBytes, FillTimeout: time.Minute,
		Size: func(v any) int64 { return int64(len(v.(Candles).Candles)) * 320 }})
}

// candlePricer turns a pool's sqrtPriceX96 records into the market's
// prices and tokens.
type candlePricer struct{ info *chain.MarketInfo }

func (p candlePricer) price(sqrtP *big.Int) string {
	raw := clamm.PricePerCallAsset(sqrtP, p.info.Token0IsCall(), int(p.info.CallAsset.Decimals))
	return clamm.FormatUnits(raw, int(p.info.PutAsset.Decimals))
}

// candle is an interval's candle from its swaps, in chain order: where
// the call asset is token1 its price falls as sqrtPriceX96 rises, so the
// pool's high is the call's low.
func (p candlePricer) candle(t int64, swaps []chain.Swap) Candle {
	open, hi, lo := swaps[0].SqrtPriceX96, swaps[0].SqrtPriceX96, swaps[0].SqrtPriceX96
	v0, v1 := new(big.Int), new(big.Int)
	for _, sw := range swaps {
		if sw.SqrtPriceX96.Cmp(hi) > 0 {
			hi = sw.SqrtPriceX96
		}
		if sw.SqrtPriceX96.Cmp(lo) < 0 {
			lo = sw.SqrtPriceX96
		}
		v0.Add(v0, new(big.Int).Abs(sw.Amount0))
		v1.Add(v1, new(big.Int).Abs(sw.Amount1))
	}
	closing := swaps[len(swaps)-1].SqrtPriceX96
	vCall, vPut := v0, v1
	if !p.info.Token0IsCall() {
		hi, lo = lo, hi
		vCall, vPut = v1, v0
	}
	c := Candle{Time: t, Open: p.price(open), High: p.price(hi), Low: p.price(lo), Close: p.price(closing), Swaps: len(swaps)}
	c.Volume.CallAsset, c.Volume.PutAsset = vCall.String(), vPut.String()
	return c
}

// flat is the candle of an interval without a swap: the previous close.
func (p candlePricer) flat(t int64, sqrtP *big.Int) Candle {
	s := p.price(sqrtP)
	c := Candle{Time: t, Open: s, High: s, Low: s, Close: s}
	c.Volume.CallAsset, c.Volume.PutAsset = "0", "0"
	return c
}
