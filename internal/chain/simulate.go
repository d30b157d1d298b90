package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// batchCaller is the batching half of *rpc.Client; a Caller without it gets
// its batch as single calls.
type batchCaller interface {
	BatchCallContext(ctx context.Context, b []rpc.BatchElem) error
}

// NoProfit is the reason given for a leg whose swap, in sequence, delivers
// exactly what its liquidity providers are owed and nothing more.
const NoProfit = "its swap, after the earlier legs', delivers no more than its liquidity providers are owed"

// LegOutcome is one leg of a sequential exercise simulation.
type LegOutcome struct {
	// Exercised: the leg ran, after every earlier exercised leg, without
	// reverting. Delta is then the profit it adds (what its swap delivered
	// minus what its liquidity providers are owed), in the profit token.
	Exercised bool
	Delta     *big.Int
	// Reason is why a candidate leg was left out: the decoded revert of the
	// simulation that first included it (for example
	// DopexV2OptionMarket__NotEnoughAfterSwap, or the handler's refusal to
	// re-add liquidity inside the range the swap moved the pool into), or
	// NoProfit. Empty for legs not asked for.
	Reason string
}

// SimulateExercise runs exerciseOption calldata from `from` at the latest
// block and returns the market's totalProfit. A revert is a *RevertError
// with the reason decoded; a node failure is an upstream problem.
func (r *Reader) SimulateExercise(ctx context.Context, from, market common.Address, data []byte) (*big.Int, error) {
	res, err := r.callBatch(ctx, from, market, [][]byte{data})
	if err != nil {
		return nil, err
	}
	if res[0].err != nil {
		return nil, res[0].err
	}
	return res[0].profit, nil
}

// SimulateSequence finds what each leg of p pays when the exercise runs as
// the market runs it: legs in index order, each swapping through a pool the
// earlier legs already moved, each re-adding its liquidity at the price its
// own swap left. It simulates prefixes of the exercise from the owner: the
// k-th simulation exercises the legs accepted so far plus candidate k, so
// the difference of two consecutive totalProfits is exactly candidate k's
// contribution at the state its predecessors leave. A candidate whose
// prefix reverts is left out (with the reason) and the later candidates
// are simulated again without it. Candidates are the legs with a non-zero
// LiquidityToExercise; p.SwapData must be what each leg will send (a swap
// minimum that would bind must be left out of it by the caller).
//
// Round trips: one JSON-RPC batch of one eth_call per candidate, plus one
// more batch per left-out leg. No state override or special node support
// is needed: every call is the market's own exerciseOption.
func (r *Reader) SimulateSequence(ctx context.Context, owner, market common.Address, p clamm.ExerciseParams) ([]LegOutcome, error) {
	n := len(p.LiquidityToExercise)
	out := make([]LegOutcome, n)
	var pending []int
	for i, l := range p.LiquidityToExercise {
		if l.Sign() > 0 {
			pending = append(pending, i)
		}
	}
	accepted := map[int]bool{}
	prev := new(big.Int)
	for len(pending) > 0 {
		calls := make([][]byte, len(pending))
		for j := range pending {
			q := clamm.ExerciseParams{OptionID: p.OptionID, Swapper: p.Swapper, SwapData: p.SwapData, LiquidityToExercise: make([]*big.Int, n)}
			for i := range q.LiquidityToExercise {
				q.LiquidityToExercise[i] = new(big.Int)
				if accepted[i] || contains(pending[:j+1], i) {
					q.LiquidityToExercise[i] = p.LiquidityToExercise[i]
				}
			}
			data, err := clamm.ExerciseCalldata(q)
			if err != nil {
				return nil, err
			}
			calls[j] = data
		}
		res, err := r.callBatch(ctx, owner, market, calls)
		if err != nil {
			return nil, err
		}
		next := []int(nil)
		for j, leg := range pending {
			if rev, ok := res[j].err.(*RevertError); ok {
				if marketLevel(rev.Data) {
					return nil, rev
				}
				out[leg].Reason = rev.Reason
				next = pending[j+1:]
				break
			}
			if res[j].err != nil {
				return nil, res[j].err
			}
			if res[j].profit.Cmp(prev) < 0 {
				return nil, upstreamGarbage(fmt.Errorf("exercise simulation: totalProfit fell from %s to %s adding leg %d", prev, res[j].profit, leg))
			}
			if res[j].profit.Cmp(prev) == 0 {
				// A leg that adds nothing only adds a way to revert (its
				// swap must still cover its LPs): leave it out, and let the
				// later legs swap without it before them.
				out[leg].Reason = NoProfit
				next = pending[j+1:]
				break
			}
			out[leg] = LegOutcome{Exercised: true, Delta: new(big.Int).Sub(res[j].profit, prev)}
			accepted[leg] = true
			prev = res[j].profit
		}
		pending = next
	}
	return out, nil
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

type exerciseResult struct {
	profit *big.Int
	err    error // *RevertError, or an upstream problem
}

// callBatch sends one eth_call per data from `from` to market in one
// JSON-RPC batch (single calls when the Caller cannot batch) and decodes
// each answer as exerciseOption's return. The returned error is for the
// round trip as a whole; each result carries its own.
func (r *Reader) callBatch(ctx context.Context, from, market common.Address, calls [][]byte) ([]exerciseResult, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	at, err := r.blockParam(ctx)
	if err != nil {
		return nil, err
	}
	outs := make([]hexutil.Bytes, len(calls))
	batch := make([]rpc.BatchElem, len(calls))
	for i, data := range calls {
		batch[i] = rpc.BatchElem{Method: "eth_call", Result: &outs[i],
			Args: []any{map[string]any{"from": from, "to": market, "data": hexutil.Bytes(data)}, at}}
	}
	if err := r.sendBatch(ctx, batch); err != nil {
		return nil, err
	}
	res := make([]exerciseResult, len(calls))
	for i, el := range batch {
		if el.Error != nil {
			if rev, ok := asRevert(el.Error); ok {
				res[i].err = rev
			} else {
				res[i].err = classify(el.Error)
			}
			continue
		}
		vals, err := contracts.OptionMarketV2.Unpack("exerciseOption", outs[i])
		if err != nil || len(vals) != 4 {
			res[i].err = upstreamGarbage(fmt.Errorf("exerciseOption returned %d bytes that do not decode: %v", len(outs[i]), err))
			continue
		}
		res[i].profit = vals[2].(*big.Int)
	}
	return res, nil
}
