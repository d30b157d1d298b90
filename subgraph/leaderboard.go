package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// BoardPurchase is a Purchase as the traders' leaderboard reads it.
type BoardPurchase struct {
	ID                  string  `json:"id"`
	Market              Address `json:"market"`
	Buyer               Address `json:"buyer"`
	IsCall              bool    `json:"isCall"`
	Premium             BigInt  `json:"premium"`
	ProtocolFees        BigInt  `json:"protocolFees"`
	TotalAssetWithdrawn BigInt  `json:"totalAssetWithdrawn"`
	SqrtPriceX96        BigInt  `json:"sqrtPriceX96"`
	Timestamp           BigInt  `json:"timestamp"`
}

func (p BoardPurchase) entityID() string { return p.ID }

// BoardExercise is an Exercise as the traders' leaderboard reads it.
// ProfitToOwner is nil where the subgraph found no payment to the owner
// of a delegated exercise.
type BoardExercise struct {
	ID            string  `json:"id"`
	Market        Address `json:"market"`
	User          Address `json:"user"`
	TotalProfit   BigInt  `json:"totalProfit"`
	ProfitToOwner *BigInt `json:"profitToOwner"`
	SqrtPriceX96  BigInt  `json:"sqrtPriceX96"`
	Timestamp     BigInt  `json:"timestamp"`
	Option        struct {
		IsCall bool `json:"isCall"`
	} `json:"option"`
}

func (x BoardExercise) entityID() string { return x.ID }

// BoardQuery selects the events of Markets with a block time in
// [From, To), at most First of them (one page).
type BoardQuery struct {
	Markets  []common.Address
	From, To int64
	First    int
}

func (q BoardQuery) vars() (map[string]any, error) {
	if q.First < 1 || q.First > MaxFirst || len(q.Markets) == 0 || q.From < 0 || q.To <= q.From {
		return nil, fmt.Errorf("leaderboard: first %d / %d markets / window [%d, %d) outside Graph Node's limits", q.First, len(q.Markets), q.From, q.To)
	}
	ms := make([]string, len(q.Markets))
	for i, m := range q.Markets {
		ms[i] = LowerHex(m)
	}
	return map[string]any{"markets": ms, "from": fmt.Sprint(q.From), "to": fmt.Sprint(q.To), "first": q.First}, nil
}

// inWindow refuses an event outside the window or of a market not asked.
func (q BoardQuery) inWindow(what, id string, market Address, ts BigInt) error {
	if ts.Int == nil || !ts.IsInt64() || ts.Int64() < q.From || ts.Int64() >= q.To {
		return fmt.Errorf("%s %s at %v, outside [%d, %d)", what, id, ts, q.From, q.To)
	}
	for _, m := range q.Markets {
		if m == market.Addr() {
			return nil
		}
	}
	return fmt.Errorf("%s %s of market %s, not asked", what, id, market.Addr().Hex())
}

// BoardPurchases runs one page of the markets' purchases in the window.
func (c *Client) BoardPurchases(ctx context.Context, q BoardQuery) ([]BoardPurchase, Meta, error) {
	vars, err := q.vars()
	if err != nil {
		return nil, Meta{}, err
	}
	return runPage(ctx, c, list{queries.BoardPurchases, "purchases"}, vars, func(p BoardPurchase) error {
		for _, b := range []BigInt{p.Premium, p.ProtocolFees, p.TotalAssetWithdrawn, p.SqrtPriceX96} {
			if b.Int == nil {
				return fmt.Errorf("purchase %s lacks its amounts", p.ID)
			}
		}
		if err := q.inWindow("purchase", p.ID, p.Market, p.Timestamp); err != nil {
			return err
		}
		return checkSqrtPrice("purchase "+p.ID, p.SqrtPriceX96.Int)
	})
}

// BoardExercises runs one page of the markets' exercises in the window.
func (c *Client) BoardExercises(ctx context.Context, q BoardQuery) ([]BoardExercise, Meta, error) {
	vars, err := q.vars()
	if err != nil {
		return nil, Meta{}, err
	}
	return runPage(ctx, c, list{queries.BoardExercises, "exercises"}, vars, func(x BoardExercise) error {
		if x.TotalProfit.Int == nil || x.SqrtPriceX96.Int == nil || (x.ProfitToOwner != nil && x.ProfitToOwner.Int == nil) {
			return fmt.Errorf("exercise %s lacks its amounts", x.ID)
		}
		if err := q.inWindow("exercise", x.ID, x.Market, x.Timestamp); err != nil {
			return err
		}
		return checkSqrtPrice("exercise "+x.ID, x.SqrtPriceX96.Int)
	})
}
