package gateway

import (
	"sort"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// The market data routes' parameters, in the order their documentation
// lists them.
var (
	markPriceParams  = []string{"chainId", "optionMarket"}
	candlesParams    = []string{"chainId", "optionMarket", "interval", "from", "to"}
	chainStatsParams = []string{"chainId", "from", "to"}
)

// parseMarket reads chainId and optionMarket.
func parseMarket(s *Server, p *params) (market.MarketRequest, error) {
	var req market.MarketRequest
	var err error
	if req.ChainID, err = p.chainID(s.chains, s.opts.ServeHint); err != nil {
		return req, err
	}
	req.Market, err = p.address("optionMarket")
	return req, err
}

// parseCandles reads a candles request: a market, an interval name and the
// window [from, to) of unix seconds (candleWindow).
func parseCandles(s *Server, p *params) (market.CandlesRequest, error) {
	m, err := parseMarket(s, p)
	if err != nil {
		return market.CandlesRequest{}, err
	}
	req, err := candleWindow(p)
	req.ChainID, req.Market = m.ChainID, m.Market
	return req, err
}

// candleWindow reads a candles request's interval name and window
// [from, to) of unix seconds, which may meet at most service.MaxCandles
// intervals.
func candleWindow(p *params) (market.CandlesRequest, error) {
	var req market.CandlesRequest
	var err error
	if req.Interval, err = p.one("interval"); err != nil {
		return req, err
	}
	var ok bool
	if req.Seconds, ok = market.CandleIntervals[req.Interval]; !ok {
		return req, problem.InvalidParam("interval", "interval must be one of %s", intervalNames())
	}
	if req.From, req.To, err = p.window(); err != nil {
		return req, err
	}
	if n := (req.To-1)/req.Seconds - req.From/req.Seconds + 1; n > market.MaxCandles {
		return req, problem.InvalidParam("to", "the window [from, to) meets %d intervals of %s; at most %d: ask the next window after this one", n, req.Interval, market.MaxCandles)
	}
	return req, nil
}

// intervalNames lists the intervals served, shortest first.
func intervalNames() string {
	names := make([]string, 0, len(market.CandleIntervals))
	for n := range market.CandleIntervals {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return market.CandleIntervals[names[i]] < market.CandleIntervals[names[j]] })
	return strings.Join(names, ", ")
}
