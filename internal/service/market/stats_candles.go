package market

import (
	"context"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// MaxCandles is the most candles one answer holds: a window of more
// intervals is refused, and a chart pages by asking the next window.
const MaxCandles = 1000

// CandleIntervals are the interval names served and their lengths in
// seconds: the lengths the subgraph keeps candle records of.
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
	block     uint64
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

// Block is the subgraph block the answer reflects.
func (c Candles) Block() uint64 { return c.block }

// Candles answers a market's candles: its immutables (cached after the
// first read) name the prime pool, whose candle records of the interval
// the subgraph holds (one query per page, with the last record before the
// window for the price it opens at).
func (s *Market) Candles(ctx context.Context, req CandlesRequest) (Candles, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return Candles{}, err
	}
	info, err := up.Chain.Market(ctx, req.Market)
	if err != nil {
		return Candles{}, err
	}
	first := req.From / req.Seconds * req.Seconds
	recs, prev, meta, err := up.Subgraph.Candles(ctx, subgraph.CandleQuery{Pool: info.Pool, Interval: req.Seconds, From: first, To: req.To})
	if err != nil {
		return Candles{}, err
	}
	if meta.Timestamp <= 0 {
		// Without the block's time the series cannot stop at it.
		return Candles{}, problem.New(problem.SubgraphError, "the subgraph's _meta names no block timestamp; the candles document must select _meta { block { number timestamp } }")
	}
	out := Candles{
		Market: info.Market.Hex(), Pool: info.Pool.Hex(), CallAsset: vocab.TokenOf(info.CallAsset), PutAsset: vocab.TokenOf(info.PutAsset),
		Interval: req.Interval, From: strconv.FormatInt(req.From, 10), To: strconv.FormatInt(req.To, 10), block: meta.Block,
	}
	out.Candles = candlePricer{info}.series(recs, prev, first, min(req.To, meta.Timestamp+1), req.Seconds)
	return out, nil
}

// series is one candle per interval starting in [first, end) from
// the first one with a known price (a record, or the previous record's
// close): intervals with a record are that record's, the others flat at
// the previous close. Records are found by their start, not by their
// place in recs: an upstream's order is not trusted (a record out of
// order must not turn the intervals it skips flat), and one outside
// [first, end) or off the interval's grid is not drawn.
func (p candlePricer) series(recs []subgraph.Candle, prev *subgraph.Candle, first, end, step int64) []Candle {
	var last *big.Int
	if prev != nil {
		last = prev.Close.Int
	}
	byStart := make(map[int64]subgraph.Candle, len(recs))
	for _, r := range recs {
		byStart[r.Start] = r
	}
	out := []Candle{}
	for t := first; t < end; t += step {
		if r, ok := byStart[t]; ok {
			out = append(out, p.candle(r))
			last = r.Close.Int
			continue
		}
		if last != nil {
			out = append(out, p.flat(t, last))
		}
	}
	return out
}

// candlePricer turns a pool's sqrtPriceX96 records into the market's
// prices and tokens.
type candlePricer struct{ info *chain.MarketInfo }

func (p candlePricer) price(sqrtP *big.Int) string {
	raw := clamm.PricePerCallAsset(sqrtP, p.info.Token0IsCall(), int(p.info.CallAsset.Decimals))
	return clamm.FormatUnits(raw, int(p.info.PutAsset.Decimals))
}

// candle is a record's candle: where the call asset is token1 its price
// falls as sqrtPriceX96 rises, so the pool's high is the call's low.
func (p candlePricer) candle(r subgraph.Candle) Candle {
	hi, lo := r.High.Int, r.Low.Int
	vCall, vPut := r.Volume0.Int, r.Volume1.Int
	if !p.info.Token0IsCall() {
		hi, lo = lo, hi
		vCall, vPut = vPut, vCall
	}
	c := Candle{Time: r.Start, Open: p.price(r.Open.Int), High: p.price(hi), Low: p.price(lo), Close: p.price(r.Close.Int), Swaps: r.Swaps}
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
