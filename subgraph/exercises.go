package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Exercise is one exercise with the option fields a history record needs.
type Exercise struct {
	ID                 string          `json:"id"`
	TxHash             string          `json:"txHash"`
	Timestamp          BigInt          `json:"timestamp"`
	BlockNumber        BigInt          `json:"blockNumber"`
	TotalProfit        BigInt          `json:"totalProfit"`
	TotalAssetRelocked BigInt          `json:"totalAssetRelocked"`
	SqrtPriceX96       BigInt          `json:"sqrtPriceX96"`
	Option             ExercisedOption `json:"option"`
}

// ExercisedOption is the option an exercise belongs to.
type ExercisedOption struct {
	TokenID       BigInt `json:"tokenId"`
	IsCall        bool   `json:"isCall"`
	TickLower     int    `json:"tickLower"`
	TickUpper     int    `json:"tickUpper"`
	Expiry        BigInt `json:"expiry"`
	Premium       BigInt `json:"premium"`
	MintTimestamp BigInt `json:"mintTimestamp"`
}

// HistoryQuery selects one page of a user's exercises on a market.
type HistoryQuery struct {
	User   common.Address
	Market common.Address
	First  int
	Skip   int
}

// ExerciseHistory runs one query with first and skip passed through.
func (c *Client) ExerciseHistory(ctx context.Context, q HistoryQuery) ([]Exercise, Meta, error) {
	if q.First < 1 || q.First > MaxFirst || q.Skip < 0 || q.Skip > MaxSkip {
		return nil, Meta{}, fmt.Errorf("exercise history: first %d / skip %d outside Graph Node's limits", q.First, q.Skip)
	}
	var out struct {
		Meta      metaJSON   `json:"_meta"`
		Exercises []Exercise `json:"exercises"`
	}
	vars := map[string]any{"user": LowerHex(q.User), "market": LowerHex(q.Market), "first": q.First, "skip": q.Skip}
	if err := c.exec(ctx, queries.ExerciseHistory, vars, &out); err != nil {
		return nil, Meta{}, err
	}
	for _, e := range out.Exercises {
		if e.Timestamp.Int == nil || e.TotalProfit.Int == nil || e.TotalAssetRelocked.Int == nil || e.SqrtPriceX96.Int == nil ||
			e.Option.Expiry.Int == nil || e.Option.Premium.Int == nil || e.Option.MintTimestamp.Int == nil || e.Option.TokenID.Int == nil {
			return nil, Meta{}, garbage(fmt.Errorf("exercise %s lacks fields", e.ID))
		}
		if err := checkSqrtPrice("exercise "+e.ID, e.SqrtPriceX96.Int); err != nil {
			return nil, Meta{}, err
		}
	}
	return out.Exercises, out.Meta.meta(), nil
}
