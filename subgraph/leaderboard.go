package subgraph

import (
	"context"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// BoardPurchase is a Purchase as the traders' leaderboard reads it: as
// the statistics read it, with its market.
type BoardPurchase struct {
	StatsPurchase
	Market Address `json:"market"`
}

func (p BoardPurchase) entityID() string { return p.ID }

// BoardExercise is an Exercise as the traders' leaderboard reads it: as
// the statistics read it, with its market, the option's owner and what
// reached the owner. ProfitToOwner is nil where the subgraph found no
// payment to the owner of a delegated exercise.
type BoardExercise struct {
	StatsExercise
	Market        Address `json:"market"`
	User          Address `json:"user"`
	ProfitToOwner *BigInt `json:"profitToOwner"`
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

// asked refuses an event of a market not asked.
func (q BoardQuery) asked(what, id string, market Address) error {
	if !slices.Contains(q.Markets, market.Addr()) {
		return fmt.Errorf("%s %s of market %s, not asked", what, id, market.Addr().Hex())
	}
	return nil
}

// BoardPurchases runs one page of the markets' purchases in the window.
func (c *Client) BoardPurchases(ctx context.Context, q BoardQuery) ([]BoardPurchase, Meta, error) {
	vars, err := q.vars()
	if err != nil {
		return nil, Meta{}, err
	}
	return runPage(ctx, c, list{queries.BoardPurchases, "purchases"}, vars, func(p BoardPurchase) error {
		if err := p.check(q.From, q.To); err != nil {
			return err
		}
		return q.asked("purchase", p.ID, p.Market)
	})
}

// BoardExercises runs one page of the markets' exercises in the window.
func (c *Client) BoardExercises(ctx context.Context, q BoardQuery) ([]BoardExercise, Meta, error) {
	vars, err := q.vars()
	if err != nil {
		return nil, Meta{}, err
	}
	return runPage(ctx, c, list{queries.BoardExercises, "exercises"}, vars, func(x BoardExercise) error {
		if x.ProfitToOwner != nil && x.ProfitToOwner.Int == nil {
			return fmt.Errorf("exercise %s lacks its amounts", x.ID)
		}
		if err := x.check(q.From, q.To); err != nil {
			return err
		}
		return q.asked("exercise", x.ID, x.Market)
	})
}
