package market

import (
	"context"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The hosted API's profit-and-loss shapes (/clamm/stats/delta and
// /clamm/stats/delta-bounded-all|-user), built on the leaderboard's reads
// and its one definition of realised PnL (docs/api.md, "Portfolio and
// hosted stats"): a trader's PnL over a window is what the exercises of
// the window paid the owner (Exercise.profitToOwner) minus the premiums
// and protocol fees of the trader's purchases of the window, each valued
// in USD by the leaderboard's rule (boardMarket.usdOf) in the markets whose
// put asset is a configured USD stablecoin. So the deltas of a window sum
// to the leaderboard's usd.net for the trader over that window, exactly.

// DeltaRequest is a validated PnL-delta request of one chain: the user and
// the half-open window [From, To) of unix seconds.
type DeltaRequest struct {
	ChainID  uint64
	User     common.Address
	From, To int64
}

// PnlDelta is the hosted API's PnlDeltaResponseDto: one event's change of
// the user's realised PnL in USD (a purchase's premium and fees as a
// negative, an exercise's payment to the owner as a positive) at its
// block time.
type PnlDelta struct {
	Delta     USD   `json:"delta"`
	Timestamp int64 `json:"timestamp"`
	// order breaks ties of one timestamp: the event's id.
	order string
}

// PnlDeltas are the user's events of the window on one chain, oldest
// first, and the subgraph block they were read at. An event of a market
// whose put asset is no configured USD stablecoin has no USD figure and is
// left out, as the leaderboard leaves it out of usd; so is an exercise
// whose payment to the owner the subgraph did not find (it adds nothing).
func (s *Market) PnlDeltas(ctx context.Context, req DeltaRequest) ([]PnlDelta, uint64, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return nil, 0, err
	}
	markets, listed, err := boardMarkets(ctx, up, LeaderboardRequest{ChainID: req.ChainID})
	if err != nil || len(markets) == 0 {
		return []PnlDelta{}, listed.Block, err
	}
	ps, xs, meta, err := boardEvents(ctx, up, markets, req.From, req.To)
	if err != nil {
		return nil, 0, err
	}
	out := []PnlDelta{}
	for _, p := range ps {
		if p.Buyer.Addr() != req.User {
			continue
		}
		m := markets[p.Market.Addr()]
		premium, fees := m.usdOf(p.Premium.Int, p.SqrtPriceX96.Int, p.IsCall), m.usdOf(p.ProtocolFees.Int, p.SqrtPriceX96.Int, p.IsCall)
		if premium == nil || fees == nil {
			continue
		}
		d := new(big.Rat).Add(premium, fees)
		out = append(out, PnlDelta{Delta: USD{d.Neg(d)}, Timestamp: p.Timestamp.Int64(), order: p.ID})
	}
	for _, x := range xs {
		if x.User.Addr() != req.User || x.ProfitToOwner == nil {
			continue
		}
		m := markets[x.Market.Addr()]
		if v := m.usdOf(x.ProfitToOwner.Int, x.SqrtPriceX96.Int, !x.Option.IsCall); v != nil {
			out = append(out, PnlDelta{Delta: USD{v}, Timestamp: x.Timestamp.Int64(), order: x.ID})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Timestamp != out[j].Timestamp {
			return out[i].Timestamp < out[j].Timestamp
		}
		return out[i].order < out[j].order
	})
	return out, meta.Block, nil
}

// Periods are the hosted leaderboard's periods, in seconds (the frontend's
// app/leaderboard/consts.ts: 86400 s times 1, 7, 30 and 180).
var Periods = map[string]int64{"1D": day, "1W": 7 * day, "1M": 30 * day, "6M": 180 * day}

// BoundedRequest is a validated delta-bounded request: a chain, a period's
// length in seconds, and for delta-bounded-user the user (nil: every
// trader).
type BoundedRequest struct {
	ChainID uint64
	Period  int64
	User    *common.Address
}

// UserPnl is the hosted API's UserPnlResponseDto (the frontend's
// app/leaderboard/types.ts): one trader's figures over the period, USD as
// numbers.
type UserPnl struct {
	User string `json:"user"`
	// FirstTradeTimestamp and LastTradeTimestamp are the block times of
	// the trader's first and last purchase or exercise of the period (0
	// for a user with none).
	FirstTradeTimestamp int64 `json:"firstTradeTimestamp"`
	LastTradeTimestamp  int64 `json:"lastTradeTimestamp"`
	// Pnl is the leaderboard's usd.net: realised - premiums - fees.
	Pnl USD `json:"pnl"`
	// PremiumPaid is the premiums and protocol fees the trader paid.
	PremiumPaid USD `json:"premiumPaid"`
	// Volume is the collateral the trader's options locked (notional).
	Volume USD `json:"volume"`
	// Roi is pnl / premiumPaid (0 when nothing was paid), a ratio.
	Roi float64 `json:"roi"`
	// TotalOptionsBought counts the trader's purchases of the period.
	TotalOptionsBought int `json:"totalOptionsBought"`
}

// tradeSpan is a trader's first and last event time.
type tradeSpan struct{ first, last int64 }

func (t *tradeSpan) see(ts int64) {
	if t.first == 0 || ts < t.first {
		t.first = ts
	}
	t.last = max(t.last, ts)
}

// Bounded answers delta-bounded-all (every trader of the period, ranked as
// the leaderboard ranks them: pnl highest first, ties by address) and
// delta-bounded-user (req.User's one entry, zeros when the period holds
// none of the user's events). The period ends with the answer's block: its
// window is the Period seconds up to and including that block's time.
func (s *Market) Bounded(ctx context.Context, req BoundedRequest) ([]UserPnl, uint64, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return nil, 0, err
	}
	// The markets' list is read first: its block's time (the answer's
	// block, which this first read pins) ends the period.
	markets, head, err := boardMarkets(ctx, up, LeaderboardRequest{ChainID: req.ChainID})
	if err != nil {
		return nil, 0, err
	}
	if head.Timestamp <= 0 {
		return nil, 0, problem.New(problem.SubgraphError, "the subgraph's _meta names no block timestamp; the option markets document must select _meta { block { number timestamp } }")
	}
	to := head.Timestamp + 1
	from := max(to-req.Period, 0)
	var (
		ps []subgraph.BoardPurchase
		xs []subgraph.BoardExercise
	)
	if len(markets) > 0 {
		if ps, xs, _, err = boardEvents(ctx, up, markets, from, to); err != nil {
			if pe := problem.As(err); pe.Code == problem.InvalidParameter {
				return nil, 0, problem.InvalidParam("period", "the period's window [%d, %d) holds at least %d purchases or exercises, more than one answer reads: ask a shorter period, or /clamm/stats/leaderboard over shorter windows", from, to, MaxBoardEvents)
			}
			return nil, 0, err
		}
	}
	rows := boundedRows(markets, ps, xs)
	if req.User == nil {
		return rows, head.Block, nil
	}
	for _, r := range rows {
		if r.User == req.User.Hex() {
			return []UserPnl{r}, head.Block, nil
		}
	}
	return []UserPnl{{User: req.User.Hex()}}, head.Block, nil
}

// boundedRows sums the events per trader with the leaderboard's sums and
// ranks them as it does.
func boundedRows(markets map[common.Address]boardMarket, ps []subgraph.BoardPurchase, xs []subgraph.BoardExercise) []UserPnl {
	b := newBoardSums(markets)
	spans := map[common.Address]*tradeSpan{}
	span := func(a common.Address) *tradeSpan {
		if spans[a] == nil {
			spans[a] = &tradeSpan{}
		}
		return spans[a]
	}
	for _, p := range ps {
		b.purchase(p)
		span(p.Buyer.Addr()).see(p.Timestamp.Int64())
	}
	for _, x := range xs {
		b.exercise(x)
		span(x.User.Addr()).see(x.Timestamp.Int64())
	}
	ranked, _ := b.ranking(len(b.traders), 0)
	out := make([]UserPnl, 0, len(ranked))
	for _, e := range ranked {
		a := common.HexToAddress(e.Trader)
		t := b.traders[a]
		paid := new(big.Rat).Add(t.usd.premiums, t.usd.fees)
		net := new(big.Rat).Sub(t.usd.realised, paid)
		roi := 0.0
		if paid.Sign() != 0 {
			roi, _ = new(big.Rat).Quo(net, paid).Float64()
		}
		sp := spans[a]
		out = append(out, UserPnl{User: e.Trader, FirstTradeTimestamp: sp.first, LastTradeTimestamp: sp.last,
			Pnl: USD{net}, PremiumPaid: USD{paid}, Volume: USD{new(big.Rat).Set(t.usd.volume)}, Roi: roi, TotalOptionsBought: t.purchases})
	}
	return out
}
