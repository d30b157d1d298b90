package trade

import (
	"math/big"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// What became of an option (Outcome.Status), at the answer's block.
const (
	// OutcomeOpen: not exercised, not settled, not expired.
	OutcomeOpen = "open"
	// OutcomeExercised: exercised at least once (in whole or in part); a
	// part left when it expired may have been settled since, for nothing
	// to the settler.
	OutcomeExercised = "exercised"
	// OutcomeExpired: expired unexercised and not settled yet; it can no
	// longer be exercised.
	OutcomeExpired = "expired"
	// OutcomeSettled: settled after expiry with value to the settler: the
	// settler kept what the owner did not exercise.
	OutcomeSettled = "settled"
	// OutcomeExpiredWorthless: expired unexercised and settled for
	// nothing to the settler (out of the money at settlement).
	OutcomeExpiredWorthless = "expiredWorthless"
)

// Outcome is what became of an option: one status, who exercised it last
// and who settled it, and the event that decided it.
type Outcome struct {
	Status string `json:"status"`
	// Exercises counts the option's exercises (LogExerciseOption).
	Exercises int `json:"exercises"`
	// ExercisedBy is the account the market paid in the latest exercise:
	// the owner, or a delegate or auto-exerciser (ExerciseDelegated).
	ExercisedBy       *string `json:"exercisedBy"`
	ExerciseDelegated bool    `json:"exerciseDelegated"`
	// SettledBy is the settler of the latest settlement, SettlerProfit and
	// SettlerCollateral what it kept (profit token and collateral).
	SettledBy         *string `json:"settledBy"`
	SettlerProfit     *string `json:"settlerProfit"`
	SettlerCollateral *string `json:"settlerCollateral"`
	// Timestamp and TxHash are the latest settlement's, else the latest
	// exercise's; null for an option neither exercised nor settled.
	Timestamp *string `json:"timestamp"`
	TxHash    *string `json:"txHash"`
}

// outcomeOf is an option's outcome at block time now from its fate, its
// latest settlement (nil: none) and its expiry.
func outcomeOf(f subgraph.Fate, s *subgraph.LastSettlement, expiry *big.Int, now int64) Outcome {
	o := Outcome{Exercises: f.ExerciseCount, Status: OutcomeOpen}
	if x := f.LastExercise; x != nil {
		o.ExercisedBy, o.ExerciseDelegated = strPtr(x.Exerciser.Addr().Hex()), x.Delegated
		o.Timestamp, o.TxHash = strPtr(x.Timestamp.String()), strPtr(x.TxHash)
		o.Status = OutcomeExercised
	}
	switch {
	case s != nil:
		o.SettledBy = strPtr(s.Settler.Addr().Hex())
		o.SettlerProfit, o.SettlerCollateral = strPtr(s.SettlerProfit.String()), strPtr(s.SettlerCollateral.String())
		o.Timestamp, o.TxHash = strPtr(s.Timestamp.String()), strPtr(s.TxHash)
		switch {
		case s.SettlerProfit.Sign() > 0 || s.SettlerCollateral.Sign() > 0:
			o.Status = OutcomeSettled
		case f.ExerciseCount == 0:
			o.Status = OutcomeExpiredWorthless
		}
	case f.ExerciseCount == 0 && expiry.Cmp(big.NewInt(now)) < 0:
		o.Status = OutcomeExpired
	}
	return o
}

func strPtr(s string) *string { return &s }
