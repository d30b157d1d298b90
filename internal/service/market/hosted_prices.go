package market

import (
	"context"
	"encoding/json"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// The hosted API's /uniswap-prices/* answers, keyed by ticker
// (hosted_tickers.go): the same figures as /clamm/mark-price and
// /clamm/candles, from the same use cases, in the shapes its clients
// parse. Its clients read every figure as a JSON number, so decimals are
// written as JSON numbers holding the exact decimal (json.Number): no
// float rounding on the way out.

// TickerRequest is a validated ticker request: a chain and a ticker.
type TickerRequest struct {
	ChainID uint64
	Ticker  string
}

// HostedMarkPrice is /uniswap-prices/mark-price's answer (stryke-fe's
// PriceAndTickSchema). MarkPrice is one call asset in the put asset (the
// quote asset); QuoteAssetPriceUSD is the put asset's dollar price and
// MarkPriceUSD their product. The dollar price of a put asset that is a
// configured USD stablecoin is 1; of another, the mark price of the
// chain's live market that has it as call asset and a USD stablecoin as
// put asset (WETH on BOOP/WETH from WETH/USDC); 0 where no market prices
// it, the value the hosted API's clients already read as "unknown" (their
// wrappers answer 0 on an error, and the chart keeps its last close on 0).
type HostedMarkPrice struct {
	MarkPrice          json.Number `json:"markPrice"`
	Tick               int         `json:"tick"`
	MarkPriceUSD       json.Number `json:"markPriceUsd"`
	QuoteAssetPriceUSD json.Number `json:"quoteAssetPriceUsd"`
}

// HostedLastPrice is /uniswap-prices/last-price's answer: the mark price
// and its pool's tick, as the hosted API's last-price gave them.
type HostedLastPrice struct {
	LastPrice json.Number `json:"lastPrice"`
	Tick      int         `json:"tick"`
}

// HostedCandle is one candle as /uniswap-prices/candles gives it: prices
// as /clamm/candles gives them (one call asset in the put asset), time
// the interval's start in unix seconds.
type HostedCandle struct {
	Open  json.Number `json:"open"`
	High  json.Number `json:"high"`
	Low   json.Number `json:"low"`
	Close json.Number `json:"close"`
	Time  int64       `json:"time"`
}

// TickerCandlesRequest is a validated candles request by ticker.
type TickerCandlesRequest struct {
	TickerRequest
	Interval string
	Seconds  int64
	From, To int64
}

// TickerMarkPrice answers the mark price of the market a ticker names.
func (s *Market) TickerMarkPrice(ctx context.Context, req TickerRequest) (HostedMarkPrice, error) {
	reg, _, err := s.Tickers(ctx, req.ChainID)
	if err != nil {
		return HostedMarkPrice{}, err
	}
	m, err := reg.Resolve(req.Ticker)
	if err != nil {
		return HostedMarkPrice{}, err
	}
	mp, err := s.MarkPrice(ctx, MarketRequest{ChainID: req.ChainID, Market: m.Market})
	if err != nil {
		return HostedMarkPrice{}, err
	}
	quoteUSD, err := s.quoteUSD(ctx, req.ChainID, reg, m, mp)
	if err != nil {
		return HostedMarkPrice{}, err
	}
	return HostedMarkPrice{
		MarkPrice: json.Number(mp.MarkPrice), Tick: mp.Tick,
		MarkPriceUSD: json.Number(mulDecimal(mp.MarkPrice, quoteUSD)), QuoteAssetPriceUSD: json.Number(quoteUSD),
	}, nil
}

// quoteUSD is the put asset's dollar price as an exact decimal: 1 for a
// configured USD stablecoin, else the mark price of a live market of the
// chain that has it as call asset and a stablecoin as put asset, else 0.
func (s *Market) quoteUSD(ctx context.Context, chainID uint64, reg *TickerRegistry, m TickerMarket, mp MarkPrice) (string, error) {
	if mp.USD {
		return "1", nil
	}
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return "", err
	}
	via, ok := reg.pricedBy(m.PutAsset, up)
	if !ok {
		return "0", nil
	}
	vp, err := s.MarkPrice(ctx, MarketRequest{ChainID: chainID, Market: via})
	if err != nil {
		return "", err
	}
	return vp.MarkPrice, nil
}

// pricedBy is the market whose call asset is token and whose put asset is
// a USD stablecoin of the configuration: a live one (lowest address
// first), else a superseded one (its pool prices the token as well; the
// demo lists Arbitrum's superseded WETH/USDC alone). A V1 market never
// prices another, as before markets could be superseded.
func (r *TickerRegistry) pricedBy(token common.Address, up *vocab.Upstreams) (common.Address, bool) {
	var best TickerMarket
	found := false
	rank := func(m TickerMarket) int {
		if m.Deprecated {
			return 1
		}
		return 0
	}
	for _, ms := range r.byKey {
		for _, m := range ms {
			v1 := m.Deprecated && m.SupersededBy == (common.Address{})
			if v1 || m.CallAsset != token || !up.Config.IsUSDStablecoin(m.PutAsset) {
				continue
			}
			if !found || rank(m) < rank(best) || rank(m) == rank(best) && m.Market.Hex() < best.Market.Hex() {
				best, found = m, true
			}
		}
	}
	return best.Market, found
}

// TickerLastPrice answers the hosted API's last price: the mark price and
// tick of the market the ticker names.
func (s *Market) TickerLastPrice(ctx context.Context, req TickerRequest) (HostedLastPrice, error) {
	m, _, err := s.resolveTicker(ctx, req.ChainID, req.Ticker)
	if err != nil {
		return HostedLastPrice{}, err
	}
	mp, err := s.MarkPrice(ctx, MarketRequest{ChainID: req.ChainID, Market: m.Market})
	if err != nil {
		return HostedLastPrice{}, err
	}
	return HostedLastPrice{LastPrice: json.Number(mp.MarkPrice), Tick: mp.Tick}, nil
}

// TickerCandles answers the candles of the market a ticker names, as a
// bare array (the hosted shape: no envelope, no volume).
func (s *Market) TickerCandles(ctx context.Context, req TickerCandlesRequest) ([]HostedCandle, error) {
	m, _, err := s.resolveTicker(ctx, req.ChainID, req.Ticker)
	if err != nil {
		return nil, err
	}
	cs, err := s.Candles(ctx, CandlesRequest{ChainID: req.ChainID, Market: m.Market, Interval: req.Interval, Seconds: req.Seconds, From: req.From, To: req.To})
	if err != nil {
		return nil, err
	}
	out := make([]HostedCandle, len(cs.Candles))
	for i, c := range cs.Candles {
		out[i] = HostedCandle{Open: json.Number(c.Open), High: json.Number(c.High), Low: json.Number(c.Low), Close: json.Number(c.Close), Time: c.Time}
	}
	return out, nil
}
