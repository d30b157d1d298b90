package chaintest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// AutoExerciser is an AutoExerciseTimeBased's state: the fee recipient and
// the window before expiry its executors act in. Its fee constants are the
// contract's (MAX_EXECUTOR_FEE 1e5, EXECUTOR_FEE_PRECISION 1e6).
type AutoExerciser struct {
	FeeTo        common.Address
	TimeToSettle uint64
}

// The real contract's constants.
var (
	maxExecutorFee       = big.NewInt(100_000)
	executorFeePrecision = big.NewInt(1_000_000)
)

func autoExerciserCall(a *AutoExerciser, data []byte) ([]byte, bool) {
	return dispatch(contracts.AutoExerciseTimeBased, data, func(name string, _ []any) ([]any, bool) {
		switch name {
		case "feeTo":
			return []any{a.FeeTo}, true
		case "timeToSettle":
			return []any{new(big.Int).SetUint64(a.TimeToSettle)}, true
		case "MAX_EXECUTOR_FEE":
			return []any{maxExecutorFee}, true
		case "EXECUTOR_FEE_PRECISION":
			return []any{executorFeePrecision}, true
		}
		return nil, false
	})
}

// Delegate records exerciseDelegator[owner][delegate] = status on the
// market, as updateExerciseDelegate leaves it.
func (m *Market) Delegate(owner, delegate common.Address, status bool) {
	if m.Delegates == nil {
		m.Delegates = map[common.Address]map[common.Address]bool{}
	}
	if m.Delegates[owner] == nil {
		m.Delegates[owner] = map[common.Address]bool{}
	}
	m.Delegates[owner][delegate] = status
}

// delegateCall answers exerciseDelegator(owner, delegate), settlers(a) and
// updateExerciseDelegate (a state change the fake does not keep: eth_call
// runs it and forgets it; DelegateRevert, when set, is its revert data);
// answered false for any other call.
func delegateCall(m *Market, data []byte) ([]byte, bool, bool) {
	a := contracts.OptionMarketDelegates
	method, err := a.MethodById(data[:4])
	if err != nil {
		return nil, false, false
	}
	if method.Name == "updateExerciseDelegate" && m.DelegateRevert != nil {
		return m.DelegateRevert, false, true
	}
	ret, ok := dispatch(a, data, func(name string, args []any) ([]any, bool) {
		switch name {
		case "exerciseDelegator":
			return []any{m.Delegates[args[0].(common.Address)][args[1].(common.Address)]}, true
		case "settlers":
			return []any{m.Settlers[args[0].(common.Address)]}, true
		case "updateExerciseDelegate":
			return []any{}, true
		}
		return nil, false
	})
	return ret, ok, true
}
