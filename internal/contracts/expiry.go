package contracts

import "github.com/ethereum/go-ethereum/common"

// OptionMarketDelegates is what an option market (V1 and V2 alike) holds
// about who may exercise and settle: exerciseDelegator(owner, delegate),
// set by the owner with updateExerciseDelegate(delegate, status), and the
// settlers its owner approved (stryke-xyz/clamm DopexV2OptionMarketV2).
var OptionMarketDelegates = mustABI(`[
 {"type":"function","name":"exerciseDelegator","stateMutability":"view","inputs":[{"name":"","type":"address"},{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"updateExerciseDelegate","stateMutability":"nonpayable","inputs":[{"name":"_delegateTo","type":"address"},{"name":"_status","type":"bool"}],"outputs":[]},
 {"type":"function","name":"settlers","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// AutoExerciseTimeBased is the protocol's keeper contract
// (src/periphery/AutoExerciseTimeBased.sol): its executors exercise an
// option for an owner who made it an exercise delegate, once no more than
// timeToSettle is left before expiry, and keep executorFee /
// EXECUTOR_FEE_PRECISION of the profit (executorFee at most
// MAX_EXECUTOR_FEE) for feeTo, none while feeTo is zero.
var AutoExerciseTimeBased = mustABI(`[
 {"type":"function","name":"feeTo","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"timeToSettle","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"MAX_EXECUTOR_FEE","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"EXECUTOR_FEE_PRECISION","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]}
]`)

// UpdateExerciseDelegateCalldata is updateExerciseDelegate(delegate, status).
func UpdateExerciseDelegateCalldata(delegate common.Address, status bool) []byte {
	data, err := OptionMarketDelegates.Pack("updateExerciseDelegate", delegate, status)
	if err != nil {
		panic("contracts: pack updateExerciseDelegate: " + err.Error()) // static types: a bug, not input
	}
	return data
}
