package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// StatsDay is a MarketDayData as the statistics read it: the day's sums
// (MarketSums), its exercise profits, its distinct buyers, and its call
// figures valued in the put asset at each event's price.
type StatsDay struct {
	ID    string `json:"id"`
	Start int64  `json:"start"`
	MarketSums
	Buyers int `json:"buyers"`
	// CallProfit is in the put asset (a call's profit token), PutProfit in
	// the call asset.
	CallProfit BigInt `json:"callProfit"`
	PutProfit  BigInt `json:"putProfit"`
	// The call-asset figures, each event valued in the put asset at the
	// prime pool's price as of its log.
	CallVolumeInPut       BigInt `json:"callVolumeInPut"`
	CallPremiumInPut      BigInt `json:"callPremiumInPut"`
	CallProtocolFeesInPut BigInt `json:"callProtocolFeesInPut"`
	PutProfitInPut        BigInt `json:"putProfitInPut"`
}

// StatsBuyer is a MarketDayBuyer: one buyer of one UTC day.
type StatsBuyer struct {
	ID    string  `json:"id"`
	Start int64   `json:"start"`
	Buyer Address `json:"buyer"`
}

// StatsPurchase is a Purchase as the statistics of a partial day read it.
type StatsPurchase struct {
	ID                  string  `json:"id"`
	Buyer               Address `json:"buyer"`
	IsCall              bool    `json:"isCall"`
	Premium             BigInt  `json:"premium"`
	ProtocolFees        BigInt  `json:"protocolFees"`
	TotalAssetWithdrawn BigInt  `json:"totalAssetWithdrawn"`
	SqrtPriceX96        BigInt  `json:"sqrtPriceX96"`
	Timestamp           BigInt  `json:"timestamp"`
}

// StatsExercise is an Exercise as the statistics of a partial day read it.
type StatsExercise struct {
	ID           string `json:"id"`
	TotalProfit  BigInt `json:"totalProfit"`
	SqrtPriceX96 BigInt `json:"sqrtPriceX96"`
	Timestamp    BigInt `json:"timestamp"`
	Option       struct {
		IsCall bool `json:"isCall"`
	} `json:"option"`
}

// StatsQuery names a market and a half-open time range [From, To) in unix
// seconds: day starts for StatsDays and StatsDayBuyers, block times for
// StatsPurchases and StatsExercises.
type StatsQuery struct {
	Market   common.Address
	From, To int64
}

func (q StatsQuery) vars(intBounds bool) map[string]any {
	if intBounds {
		return map[string]any{"market": LowerHex(q.Market), "from": q.From, "to": q.To}
	}
	// BigInt variables travel as strings, as Graph Node expects them.
	return map[string]any{"market": LowerHex(q.Market), "from": fmt.Sprint(q.From), "to": fmt.Sprint(q.To)}
}

// StatsDays returns the market's daily records starting in [From, To).
func (c *Client) StatsDays(ctx context.Context, q StatsQuery) ([]StatsDay, Meta, error) {
	return idPages(ctx, c, idQuery[StatsDay]{doc: queries.StatsDays, field: "marketDayDatas", vars: q.vars(true), id: func(d StatsDay) string { return d.ID }, check: func(d StatsDay) error {
		if !d.complete() || d.Buyers < 0 {
			return fmt.Errorf("day %s lacks its sums", d.ID)
		}
		if d.Start%86400 != 0 || d.Start < q.From || d.Start >= q.To {
			return fmt.Errorf("day %s starts at %d, not a UTC midnight in [%d, %d)", d.ID, d.Start, q.From, q.To)
		}
		for _, b := range []BigInt{d.CallProfit, d.PutProfit, d.CallVolumeInPut, d.CallPremiumInPut, d.CallProtocolFeesInPut, d.PutProfitInPut} {
			if b.Int == nil {
				return fmt.Errorf("day %s lacks its statistics", d.ID)
			}
		}
		return nil
	}})
}

// StatsDayBuyers returns the market's buyers of each day starting in [From, To).
func (c *Client) StatsDayBuyers(ctx context.Context, q StatsQuery) ([]StatsBuyer, Meta, error) {
	return idPages(ctx, c, idQuery[StatsBuyer]{doc: queries.StatsDayBuyers, field: "marketDayBuyers", vars: q.vars(true), id: func(b StatsBuyer) string { return b.ID }, check: func(b StatsBuyer) error {
		if b.Start%86400 != 0 || b.Start < q.From || b.Start >= q.To || b.Buyer == (Address{}) {
			return fmt.Errorf("day buyer %s (day %d, buyer %s) is not of a day in [%d, %d)", b.ID, b.Start, b.Buyer.Addr().Hex(), q.From, q.To)
		}
		return nil
	}})
}

// StatsPurchases returns the market's purchases with a block time in [From, To).
func (c *Client) StatsPurchases(ctx context.Context, q StatsQuery) ([]StatsPurchase, Meta, error) {
	return idPages(ctx, c, idQuery[StatsPurchase]{doc: queries.StatsPurchases, field: "purchases", vars: q.vars(false), id: func(p StatsPurchase) string { return p.ID }, check: func(p StatsPurchase) error {
		return p.check(q.From, q.To)
	}})
}

// check refuses a purchase without its amounts, at a time outside [from,
// to) or at no price.
func (p StatsPurchase) check(from, to int64) error {
	for _, b := range []BigInt{p.Premium, p.ProtocolFees, p.TotalAssetWithdrawn, p.SqrtPriceX96, p.Timestamp} {
		if b.Int == nil {
			return fmt.Errorf("purchase %s lacks its amounts", p.ID)
		}
	}
	if t := p.Timestamp.Int64(); !p.Timestamp.IsInt64() || t < from || t >= to {
		return fmt.Errorf("purchase %s at %s, outside [%d, %d)", p.ID, p.Timestamp, from, to)
	}
	return checkSqrtPrice("purchase "+p.ID, p.SqrtPriceX96.Int)
}

// StatsExercises returns the market's exercises with a block time in [From, To).
func (c *Client) StatsExercises(ctx context.Context, q StatsQuery) ([]StatsExercise, Meta, error) {
	return idPages(ctx, c, idQuery[StatsExercise]{doc: queries.StatsExercises, field: "exercises", vars: q.vars(false), id: func(x StatsExercise) string { return x.ID }, check: func(x StatsExercise) error {
		return x.check(q.From, q.To)
	}})
}

// check refuses an exercise without its amounts, at a time outside [from,
// to) or at no price.
func (x StatsExercise) check(from, to int64) error {
	if x.TotalProfit.Int == nil || x.SqrtPriceX96.Int == nil || x.Timestamp.Int == nil {
		return fmt.Errorf("exercise %s lacks its amounts", x.ID)
	}
	if t := x.Timestamp.Int64(); !x.Timestamp.IsInt64() || t < from || t >= to {
		return fmt.Errorf("exercise %s at %s, outside [%d, %d)", x.ID, x.Timestamp, from, to)
	}
	return checkSqrtPrice("exercise "+x.ID, x.SqrtPriceX96.Int)
}
