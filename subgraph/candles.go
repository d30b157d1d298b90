package subgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Candle is a pool's Candle record: one interval with swaps, its prices
// as sqrtPriceX96 (token1 per token0) after the interval's first, highest,
// lowest and last swap, and the swaps' volume in each token.
type Candle struct {
	ID        string `json:"id"`
	Start     int64  `json:"start"`
	Open      BigInt `json:"open"`
	High      BigInt `json:"high"`
	Low       BigInt `json:"low"`
	Close     BigInt `json:"close"`
	CloseTick int    `json:"closeTick"`
	Volume0   BigInt `json:"volume0"`
	Volume1   BigInt `json:"volume1"`
	Swaps     int    `json:"swaps"`
}

// CandleQuery names a pool, an interval length in seconds and the
// half-open range [From, To) of interval starts.
type CandleQuery struct {
	Pool     common.Address
	Interval int64
	From, To int64
}

// Candles returns the pool's records of q's interval starting in [From,
// To), oldest first, and the last record before From (nil when the pool
// had no swap before it): the price the window opens at.
func (c *Client) Candles(ctx context.Context, q CandleQuery) ([]Candle, *Candle, Meta, error) {
	var prev *Candle
	firstPage := func(page map[string]json.RawMessage) error {
		var list []Candle
		if err := json.Unmarshal(page["previous"], &list); err != nil {
			return fmt.Errorf("previous: %w", err)
		}
		if len(list) > 1 {
			return fmt.Errorf("previous: %d candles, one asked", len(list))
		}
		if len(list) == 1 {
			prev = &list[0]
			return q.check("previous candle", *prev, 0, q.From)
		}
		return nil
	}
	vars := map[string]any{"pool": LowerHex(q.Pool), "interval": q.Interval, "from": q.From, "to": q.To}
	list, meta, err := idPages(ctx, c, idQuery[Candle]{doc: queries.Candles, field: "candles", vars: vars, id: func(k Candle) string { return k.ID }, check: func(k Candle) error {
		if err := q.check("candle", k, q.From, q.To); err != nil {
			return err
		}
		return k.checkPrices()
	}, firstPage: firstPage})
	// The document asks for id order, which is time order, but an answer
	// in another order is still the same records: sorted here, so that no
	// caller walks them as a series in the subgraph's order (a swapped
	// first and last record once made every interval between them flat).
	// Starts are distinct: the id names the start and no id is listed twice.
	sort.SliceStable(list, func(i, j int) bool { return list[i].Start < list[j].Start })
	return list, prev, meta, err
}

// check holds a record to be q's pool's and interval's, starting in
// [from, to), with a close.
func (q CandleQuery) check(what string, k Candle, from, to int64) error {
	id := fmt.Sprintf("%s-%d-%010d", LowerHex(q.Pool), q.Interval, k.Start)
	if k.ID != id || k.Start%q.Interval != 0 || k.Start < from || k.Start >= to {
		return garbage(fmt.Errorf("%s %q (start %d) is not a %d s candle of pool %s starting in [%d, %d)", what, k.ID, k.Start, q.Interval, q.Pool.Hex(), from, to))
	}
	if k.Close.Int == nil || k.Close.Sign() <= 0 {
		return garbage(fmt.Errorf("%s %s lacks its close", what, k.ID))
	}
	return checkSqrtPrice(what+" "+k.ID, k.Close.Int)
}

// checkPrices holds a record's prices and volumes whole and consistent:
// open and close within [low, high], at least one swap.
func (k Candle) checkPrices() error {
	for _, b := range []BigInt{k.Open, k.High, k.Low, k.Volume0, k.Volume1} {
		if b.Int == nil || b.Sign() < 0 || b.BitLen() > 256 {
			return garbage(fmt.Errorf("candle %s lacks its prices or volumes", k.ID))
		}
	}
	hi, lo := k.High.Int, k.Low.Int
	if k.Swaps < 1 || hi.Cmp(lo) < 0 || k.Open.Cmp(hi) > 0 || k.Open.Cmp(lo) < 0 || k.Close.Cmp(hi) > 0 || k.Close.Cmp(lo) < 0 || lo.Sign() <= 0 {
		return garbage(fmt.Errorf("candle %s: open and close not within [low, high], or no swap", k.ID))
	}
	return checkSqrtPrice("candle "+k.ID, hi)
}
