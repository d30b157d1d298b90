package market

import (
	"context"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// MaxStatsWindow is the longest statistics window, in seconds: 366 days,
// so a year's daily series (at most 367 entries) fits one answer and the
// distinct buyers of a year are read in a bounded number of pages.
const MaxStatsWindow = 366 * day

// StatsRequest is a validated statistics request: a market and the
// half-open window [From, To) of unix seconds, 0 < To-From <= MaxStatsWindow.
type StatsRequest struct {
	ChainID  uint64
	Market   common.Address
	From, To int64
}

// MarketStats is the statistics answer: the market's flows over the window
// (totals and one entry per UTC day the window touches) and its state at
// the answer's block (open interest, expired options awaiting settlement,
// TVL: stats_market_holdings.go).
type MarketStats struct {
	Market    string      `json:"market"`
	CallAsset vocab.Token `json:"callAsset"`
	PutAsset  vocab.Token `json:"putAsset"`
	// USD says whether the figures carry a usd field: the put asset is a
	// USD stablecoin the configuration lists for this chain.
	USD  bool   `json:"usd"`
	From string `json:"from"`
	To   string `json:"to"`
	// Totals are the window's flows; Buyers there is the distinct buyers
	// of the whole window (not the sum of the days').
	Totals StatsFigures `json:"totals"`
	// Days are the UTC days the window touches, oldest first, each with
	// the part of it inside the window ([from, to) of the entry).
	Days         []StatsDay        `json:"days"`
	OpenInterest StatsOpenInterest `json:"openInterest"`
	// ExpiredUnsettled is what OpenInterest is, for the options past their
	// expiry that still hold collateral: no longer exercisable, not yet
	// settled (the settler returns it to the LPs).
	ExpiredUnsettled StatsOpenInterest `json:"expiredUnsettled"`
	TVL              StatsTVL          `json:"tvl"`
	block            uint64
	// held is what the answer counted per pool and range, and buyers the
	// window's buyers per UTC day: what the chain-wide statistics sum
	// without counting a range two markets reach, or a buyer of two
	// markets, twice (stats_chain.go).
	held   holdings
	buyers map[int64]map[common.Address]bool
	// callAsset and putAsset are the tokens' addresses (the JSON's are
	// printed)
	callAsset, putAsset common.Address
	// v and price value the market's holdings in USD (the prime pool's
	// sqrtPriceX96 at the answer's block): the hosted bare figures of a
	// pool value its ranges as the market's TVL is valued (hosted_stats.go).
	v     valuer
	price *big.Int
}

// StatsDay is one UTC day's flows within the window.
type StatsDay struct {
	Start string `json:"start"`
	From  string `json:"from"`
	To    string `json:"to"`
	StatsFigures
	start int64 // Start as a number
}

// StatsFigures are flows: counts, and amounts by the token they are in.
type StatsFigures struct {
	Purchases int `json:"purchases"`
	Buyers    int `json:"buyers"`
	Exercises int `json:"exercises"`
	// Volume is the collateral the options bought locked
	// (LogMintOption.totalAssetWithdrawn): calls' in the call asset,
	// puts' in the put asset.
	Volume StatsAmounts `json:"volume"`
	// Premiums and ProtocolFees: calls' in the call asset, puts' in the put asset.
	Premiums     StatsAmounts `json:"premiums"`
	ProtocolFees StatsAmounts `json:"protocolFees"`
	// Profit is LogExerciseOption.totalProfit: puts' in the call asset,
	// calls' in the put asset.
	Profit StatsAmounts `json:"profit"`
}

// StatsAmounts are raw amounts of the call and put asset (integer strings
// in base units) and, where the put asset is a USD stablecoin, their value
// in USD: the put-asset amount plus the call-asset amount valued in the
// put asset at the prime pool's price of each event (of now, for holdings),
// as an exact decimal. Absent otherwise: never guessed.
type StatsAmounts struct {
	CallAsset string  `json:"callAsset"`
	PutAsset  string  `json:"putAsset"`
	USD       *string `json:"usd,omitempty"`
	// call, put and usd are the figures as numbers (usd nil without a
	// usd figure), for sums over markets that never parse the text back.
	call, put *big.Int
	usd       *big.Rat
	// inPut is the put-asset amount plus the call-asset amount valued in
	// the put asset, whatever the put asset (the hosted API's unit).
	inPut *big.Int
}

// Block is the subgraph block the answer reflects.
func (m MarketStats) Block() uint64 { return m.block }

// MarketStats answers the statistics of one market over a window.
//
// Whole UTC days inside the window come from the subgraph's daily records
// (MarketDayData, MarketDayBuyer); the parts of the first and last day the
// window cuts through come from the purchases and exercises themselves
// (timestamp in the part), so every figure is exact to the second. Open
// interest and TVL are the state at the answer's block (stats_market_holdings.go).
func (s *Market) MarketStats(ctx context.Context, req StatsRequest) (MarketStats, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return MarketStats{}, err
	}
	view, err := marketView(ctx, up, req.Market)
	if err != nil {
		return MarketStats{}, err
	}
	r, err := readStats(ctx, up, view, req)
	if err != nil {
		return MarketStats{}, err
	}
	if err := r.completeRanges(ctx, up, view); err != nil {
		return MarketStats{}, err
	}
	info := view.Info
	v := newValuer(up, info)
	out := MarketStats{
		Market: info.Market.Hex(), CallAsset: vocab.TokenOf(info.CallAsset), PutAsset: vocab.TokenOf(info.PutAsset), USD: v.usd,
		From: strconv.FormatInt(req.From, 10), To: strconv.FormatInt(req.To, 10), block: r.meta.Block,
		callAsset: info.CallAsset.Address, putAsset: info.PutAsset.Address,
		v: v, price: view.Pools[info.Pool].SqrtPriceX96,
	}
	out.Days, out.Totals, out.buyers = r.series(req, v)
	out.held = holdings{ranges: map[string]rangeHeld{}, pools: map[common.Address]*[2]*big.Int{}}
	if out.TVL, err = tvl(view, r.ranges, v, out.held.ranges); err != nil {
		return MarketStats{}, err
	}
	if out.OpenInterest, out.ExpiredUnsettled, err = openInterest(view, r.open, r.meta.Timestamp, v, out.held.pools); err != nil {
		return MarketStats{}, err
	}
	return out, nil
}

// statsRead is what the subgraph holds for a window: the whole days'
// records and buyers, the partial days' events, the ranges of the pools
// the market may approve (asked) with the pools the subgraph has it
// approving (named), and its options that still hold collateral.
type statsRead struct {
	days         []subgraph.StatsDay
	buyers       []subgraph.StatsBuyer
	purchases    []subgraph.StatsPurchase
	exercises    []subgraph.StatsExercise
	ranges       []subgraph.StatsRange
	asked, named []common.Address
	open         []subgraph.OpenOption
	meta         subgraph.Meta
}

// statsSpans cuts [from, to) into the whole UTC days inside it, [dayFrom,
// dayTo) (empty when dayFrom >= dayTo), and the partial parts before and
// after them, each [a, b) and empty when a >= b.
func statsSpans(from, to int64) (dayFrom, dayTo int64, parts [2][2]int64) {
	dayFrom = (from + day - 1) / day * day
	dayTo = to / day * day
	if dayFrom >= dayTo { // no whole day: one partial span
		return dayFrom, dayFrom, [2][2]int64{{from, to}, {to, to}}
	}
	return dayFrom, dayTo, [2][2]int64{{from, dayFrom}, {dayTo, to}}
}

// readStats runs the window's subgraph reads at once.
func readStats(ctx context.Context, up *vocab.Upstreams, view *chain.StrikesView, req StatsRequest) (*statsRead, error) {
	sg := up.Subgraph
	r := &statsRead{}
	dayFrom, dayTo, parts := statsSpans(req.From, req.To)
	g, gctx := errgroup.WithContext(ctx)
	if dayFrom < dayTo {
		q := subgraph.StatsQuery{Market: req.Market, From: dayFrom, To: dayTo}
		g.Go(func() (err error) { r.days, r.meta, err = sg.StatsDays(gctx, q); return err })
		g.Go(func() (err error) { r.buyers, _, err = sg.StatsDayBuyers(gctx, q); return err })
	}
	var ps [2][]subgraph.StatsPurchase
	var xs [2][]subgraph.StatsExercise
	for i, p := range parts {
		if p[0] >= p[1] {
			continue
		}
		q := subgraph.StatsQuery{Market: req.Market, From: p[0], To: p[1]}
		g.Go(func() (err error) { ps[i], _, err = sg.StatsPurchases(gctx, q); return err })
		g.Go(func() (err error) { xs[i], _, err = sg.StatsExercises(gctx, q); return err })
	}
	var meta subgraph.Meta
	r.asked = view.PoolsToRead()
	g.Go(func() (err error) {
		r.ranges, r.named, meta, err = sg.StatsRanges(gctx, req.Market, r.asked)
		return err
	})
	g.Go(func() (err error) { r.open, _, err = sg.OpenOptions(gctx, req.Market); return err })
	if err := g.Wait(); err != nil {
		return nil, err
	}
	r.purchases, r.exercises = append(ps[0], ps[1]...), append(xs[0], xs[1]...)
	if r.meta.Block == 0 {
		r.meta = meta
	}
	return r, nil
}

// valuer turns sums into StatsAmounts: raw amounts, and USD where the put
// asset is a USD stablecoin.
type valuer struct {
	callIs0  bool // the call asset is the prime pool's token0
	usd      bool
	decimals int // the put asset's
}

func newValuer(up *vocab.Upstreams, info *chain.MarketInfo) valuer {
	return valuer{callIs0: info.Token0IsCall(), usd: up.Config.IsUSDStablecoin(info.PutAsset.Address), decimals: int(info.PutAsset.Decimals)}
}

// usdOf is a put-asset amount in USD (whole units, exact); nil where the
// put asset is not a USD stablecoin.
func (v valuer) usdOf(putAmount *big.Int) *big.Rat {
	if !v.usd {
		return nil
	}
	return new(big.Rat).SetFrac(putAmount, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.decimals)), nil))
}

// inPut values a call-asset amount in the put asset at sqrtP, floored once
// (0 at a zero price): the rule the subgraph's *InPut fields follow.
func (v valuer) inPut(amount, sqrtP *big.Int) *big.Int {
	if sqrtP.Sign() == 0 {
		return new(big.Int)
	}
	return clamm.SwapAtPrice(amount, sqrtP, v.callIs0)
}

// amounts are the JSON of a call-asset sum, a put-asset sum and the
// call-asset sum's value in the put asset.
func (v valuer) amounts(call, put, callInPut *big.Int) StatsAmounts {
	out := StatsAmounts{CallAsset: call.String(), PutAsset: put.String(), call: new(big.Int).Set(call), put: new(big.Int).Set(put), inPut: new(big.Int).Add(put, callInPut)}
	if v.usd {
		raw := new(big.Int).Add(put, callInPut)
		usd := clamm.FormatUnits(raw, v.decimals)
		out.USD = &usd
		out.usd = v.usdOf(raw)
	}
	return out
}

// completeRanges reads what the ranges' answer named that the view lacks
// (pools the subgraph has the market approving, approvals not read yet,
// handlers outside the registry: one round, as the strikes chain does, so
// whether the market can buy from them is known rather than assumed) and,
// for an approved pool named for the first time, its ranges (one more
// query).
func (r *statsRead) completeRanges(ctx context.Context, up *vocab.Upstreams, view *chain.StrikesView) error {
	fresh, err := completeView(ctx, up, view, r.asked, namedBy{r.named, statsHandlers(r.ranges)})
	if err != nil || len(fresh) == 0 {
		return err
	}
	more, _, _, err := up.Subgraph.StatsRanges(ctx, common.Address{}, fresh)
	if err != nil {
		return err
	}
	r.ranges = append(r.ranges, more...)
	_, err = completeView(ctx, up, view, nil, namedBy{handlers: statsHandlers(more)})
	return err
}

// statsHandlers are the handlers of ranges.
func statsHandlers(ranges []subgraph.StatsRange) []common.Address {
	out := make([]common.Address, len(ranges))
	for i, r := range ranges {
		out[i] = r.Handler.Addr()
	}
	return out
}
