package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// AutoExerciser is an AutoExerciseTimeBased's parameters at the answer's
// block: its executors may exercise a delegating owner's option once no
// more than TimeToSettle seconds are left before expiry, and keep at most
// MaxExecutorFee / FeePrecision of the profit for FeeTo (nothing while
// FeeTo is zero).
type AutoExerciser struct {
	Address        common.Address
	FeeTo          common.Address
	TimeToSettle   *big.Int
	MaxExecutorFee *big.Int
	FeePrecision   *big.Int
}

// Delegation asks whether Delegate may exercise Owner's options on a market.
type Delegation struct{ Owner, Delegate common.Address }

// DelegateView reads, in one aggregate3 at the answer's block, the
// auto-exerciser's parameters (none asked when autoExerciser is zero) and
// the market's exerciseDelegator(owner, delegate) of each question. An
// auto-exerciser that does not answer its four getters is not an
// AutoExerciseTimeBased: the registry that names it is wrong, an upstream
// error rather than a guess (the expiry reads then leave its fields
// unknown; a prepared delegation fails).
func (r *Reader) DelegateView(ctx context.Context, market, autoExerciser common.Address, qs []Delegation) (*AutoExerciser, []bool, error) {
	a := contracts.AutoExerciseTimeBased
	var calls []Call
	if autoExerciser != (common.Address{}) {
		for _, m := range []string{"feeTo", "timeToSettle", "MAX_EXECUTOR_FEE", "EXECUTOR_FEE_PRECISION"} {
			calls = append(calls, Call{autoExerciser, pack(a, m)})
		}
	}
	at := len(calls)
	for _, q := range qs {
		calls = append(calls, Call{market, pack(contracts.OptionMarketDelegates, "exerciseDelegator", q.Owner, q.Delegate)})
	}
	if len(calls) == 0 {
		return nil, nil, nil
	}
	// A prepared delegation's first read: with the head's header in its
	// batch, not after it (aggregateFirst).
	res, err := r.aggregateFirst(ctx, calls)
	if err != nil {
		return nil, nil, err
	}
	var ae *AutoExerciser
	if at > 0 {
		if ae, err = decodeAutoExerciser(autoExerciser, res[:at]); err != nil {
			return nil, nil, err
		}
	}
	out := make([]bool, len(qs))
	for i, c := range res[at:] {
		v, err := unpackOne[bool](contracts.OptionMarketDelegates, "exerciseDelegator", c.Data)
		if !c.OK || err != nil {
			return nil, nil, notAMarket(market, fmt.Errorf("exerciseDelegator: %v", err))
		}
		out[i] = v
	}
	return ae, out, nil
}

func decodeAutoExerciser(addr common.Address, res []Result) (*AutoExerciser, error) {
	a := contracts.AutoExerciseTimeBased
	bad := func(err error) error {
		return problem.Wrap(problem.RPCError, err, "the chain's auto-exerciser %s does not answer as AutoExerciseTimeBased (feeTo, timeToSettle, MAX_EXECUTOR_FEE, EXECUTOR_FEE_PRECISION): the deployments registry names another contract", addr.Hex())
	}
	for i, c := range res {
		if !c.OK {
			return nil, bad(fmt.Errorf("call %d reverted", i))
		}
	}
	out := &AutoExerciser{Address: addr}
	var err error
	if out.FeeTo, err = unpackAddress(a, "feeTo", res[0].Data); err != nil {
		return nil, bad(err)
	}
	if out.TimeToSettle, err = unpackOne[*big.Int](a, "timeToSettle", res[1].Data); err != nil {
		return nil, bad(err)
	}
	if out.MaxExecutorFee, err = unpackOne[*big.Int](a, "MAX_EXECUTOR_FEE", res[2].Data); err != nil {
		return nil, bad(err)
	}
	if out.FeePrecision, err = unpackOne[*big.Int](a, "EXECUTOR_FEE_PRECISION", res[3].Data); err != nil {
		return nil, bad(err)
	}
	if out.FeePrecision.Sign() == 0 || out.MaxExecutorFee.Cmp(out.FeePrecision) > 0 || !out.TimeToSettle.IsInt64() {
		return nil, bad(fmt.Errorf("fee %s / %s, window %s", out.MaxExecutorFee, out.FeePrecision, out.TimeToSettle))
	}
	return out, nil
}

// SimulateDelegate runs updateExerciseDelegate(delegate, status) from user
// on market at the answer's block (SimulateCall: the route's answer is the
// chain's head, or the block asked for), and returns the calldata it ran.
// A revert is a *RevertError with its reason; a node failure an upstream
// problem.
func (r *Reader) SimulateDelegate(ctx context.Context, user, market, delegate common.Address, status bool) ([]byte, error) {
	data := contracts.UpdateExerciseDelegateCalldata(delegate, status)
	if _, err := r.SimulateCall(ctx, user, market, data); err != nil {
		return nil, err
	}
	return data, nil
}

// BlockTime is the answer's block's time (Multicall3's
// getCurrentBlockTimestamp at that block): what opens a window of expiries
// before the subgraph is asked, and what tells an expired option from an
// open one when the subgraph's page, asked by number, names no time.
func (r *Reader) BlockTime(ctx context.Context) (int64, error) {
	raw, err := r.EthCall(ctx, r.multicall, pack(contracts.Multicall3, "getCurrentBlockTimestamp"))
	if err != nil {
		return 0, err
	}
	t, err := unpackOne[*big.Int](contracts.Multicall3, "getCurrentBlockTimestamp", raw)
	if err != nil || !t.IsInt64() {
		return 0, upstreamGarbage(fmt.Errorf("getCurrentBlockTimestamp: %v", err))
	}
	return t.Int64(), nil
}
