package subgraph

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Settlement is one LogSettleOption with what its receipt shows it moved
// (schema.graphql Settlement) and the option and legs it settled.
type Settlement struct {
	ID                string          `json:"id"`
	Market            Address         `json:"market"`
	User              Address         `json:"user"`
	Settler           Address         `json:"settler"`
	Sender            Address         `json:"sender"`
	SettlerProfit     BigInt          `json:"settlerProfit"`
	SettlerCollateral BigInt          `json:"settlerCollateral"`
	SettlerPaid       BigInt          `json:"settlerPaid"`
	SqrtPriceX96      BigInt          `json:"sqrtPriceX96"`
	BlockNumber       BigInt          `json:"blockNumber"`
	Timestamp         BigInt          `json:"timestamp"`
	TxHash            string          `json:"txHash"`
	Option            ExercisedOption `json:"option"`
	Legs              []SettledLeg    `json:"legs"`
}

// SettledLeg is the liquidity a settlement took off one leg, with the
// leg's range.
type SettledLeg struct {
	Index     int       `json:"index"`
	Liquidity BigInt    `json:"liquidity"`
	Leg       *LegRange `json:"leg"`
}

// LegRange is an option leg's handler range.
type LegRange struct {
	Handler   Address `json:"handler"`
	Pool      Address `json:"pool"`
	Hook      Address `json:"hook"`
	TickLower int     `json:"tickLower"`
	TickUpper int     `json:"tickUpper"`
}

func (s Settlement) entityID() string { return s.ID }

// SettlementQuery selects one page of the settlements of options User
// owned when they were settled: on Market when it is not nil.
type SettlementQuery struct {
	User        common.Address
	Market      *common.Address
	First, Skip int
}

// SettlementHistory runs one page of a user's settlements, newest first.
func (c *Client) SettlementHistory(ctx context.Context, q SettlementQuery) ([]Settlement, Meta, error) {
	if q.First < 1 || q.First > MaxFirst || q.Skip < 0 || q.Skip > MaxSkip {
		return nil, Meta{}, fmt.Errorf("%s: first %d / skip %d outside Graph Node's limits", queries.SettlementHistory, q.First, q.Skip)
	}
	where := map[string]any{"user": LowerHex(q.User)}
	if q.Market != nil {
		where["market"] = LowerHex(*q.Market)
	}
	vars := map[string]any{"where": where, "first": q.First, "skip": q.Skip}
	return runPage(ctx, c, list{queries.SettlementHistory, "settlements"}, vars, func(s Settlement) error {
		if s.SettlerProfit.Int == nil || s.SettlerCollateral.Int == nil || s.SettlerPaid.Int == nil || s.SqrtPriceX96.Int == nil ||
			s.BlockNumber.Int == nil || s.Timestamp.Int == nil || s.Option.TokenID.Int == nil || s.Option.Expiry.Int == nil ||
			s.Option.Premium.Int == nil || s.Option.MintTimestamp.Int == nil {
			return fmt.Errorf("settlement %s lacks fields", s.ID)
		}
		for i, l := range s.Legs {
			if l.Liquidity.Int == nil || l.Leg == nil || l.Index < 0 || (i > 0 && l.Index <= s.Legs[i-1].Index) {
				return fmt.Errorf("settlement %s: leg %d of index %d", s.ID, i, l.Index)
			}
		}
		return checkSqrtPrice("settlement "+s.ID, s.SqrtPriceX96.Int)
	})
}

// ExpiringOption is an option of ExpiringOptions: HeldOption's fields and
// its owner as the subgraph last saw it.
type ExpiringOption struct {
	HeldOption
	Owner Address `json:"owner"`
}

// ExpiringQuery selects Market's options that are not settled and expire
// in [After, Until] (unix seconds), soonest first, at most First of them.
type ExpiringQuery struct {
	Market       common.Address
	After, Until int64
	First        int
}

// ExpiringOptions runs one read of the options expiring in a window.
func (c *Client) ExpiringOptions(ctx context.Context, q ExpiringQuery) ([]ExpiringOption, Meta, error) {
	if q.First < 1 || q.First > MaxFirst || q.After < 0 || q.Until < q.After {
		return nil, Meta{}, fmt.Errorf("%s: first %d / window [%d, %d] outside Graph Node's limits", queries.ExpiringOptions, q.First, q.After, q.Until)
	}
	vars := map[string]any{"market": LowerHex(q.Market), "after": fmt.Sprint(q.After), "until": fmt.Sprint(q.Until), "first": q.First}
	return runPage(ctx, c, list{queries.ExpiringOptions, "options"}, vars, func(o ExpiringOption) error {
		if err := o.HeldOption.complete(); err != nil {
			return err
		}
		if o.Expiry.Cmp(bigOf(q.After)) < 0 || o.Expiry.Cmp(bigOf(q.Until)) > 0 {
			return fmt.Errorf("option %s expires at %s, outside [%d, %d]", o.ID, o.Expiry, q.After, q.Until)
		}
		return nil
	})
}

// ExerciseDelegate is an enabled exercise delegate of an owner on a market.
type ExerciseDelegate struct {
	ID        string  `json:"id"`
	Owner     Address `json:"owner"`
	Delegate  Address `json:"delegate"`
	UpdatedAt BigInt  `json:"updatedAt"`
}

func (d ExerciseDelegate) entityID() string { return d.ID }

// DelegatesQuery selects the delegates Owners enabled on Market, at most
// First of them.
type DelegatesQuery struct {
	Market common.Address
	Owners []common.Address
	First  int
}

// ExerciseDelegates runs one read of the owners' enabled delegates.
func (c *Client) ExerciseDelegates(ctx context.Context, q DelegatesQuery) ([]ExerciseDelegate, Meta, error) {
	if q.First < 1 || q.First > MaxFirst {
		return nil, Meta{}, fmt.Errorf("%s: first %d outside Graph Node's limits", queries.ExerciseDelegates, q.First)
	}
	owners := make([]string, len(q.Owners))
	for i, o := range q.Owners {
		owners[i] = LowerHex(o)
	}
	vars := map[string]any{"market": LowerHex(q.Market), "owners": owners, "first": q.First}
	return runPage(ctx, c, list{queries.ExerciseDelegates, "exerciseDelegates"}, vars, ExerciseDelegate.complete)
}

func (d ExerciseDelegate) complete() error {
	if d.UpdatedAt.Int == nil {
		return fmt.Errorf("exercise delegate %s lacks fields", d.ID)
	}
	return nil
}

func bigOf(v int64) *big.Int { return big.NewInt(v) }
