package chain

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Head is the chain's head block as a prepared transaction is simulated
// at it: its header (the chain's own number: ArbSys's on Arbitrum) and
// EVMNumber, the block.number the chain's code sees there, which a
// handler's donation lock counts in (on Arbitrum an estimate of Ethereum's
// block number).
type Head struct {
	block.Ref
	EVMNumber uint64
}

// ReadHead reads the chain's head, not the answer's block: a prepared
// transaction is sent against the head, so a range used up, a balance
// spent or an allowance changed since the answer's block must show in its
// simulation. One JSON-RPC batch asks the head's header and, at "latest",
// the block.number the chain's code sees, as the pin's first read does
// (headAndAggregate); when that did not run at the header's block (a
// block landed in between) it is asked again there. A node that cannot
// batch is asked the header first.
func (r *Reader) ReadHead(ctx context.Context) (Head, error) {
	evm := []Call{{r.multicall, pack(contracts.Multicall3, "getBlockNumber")}}
	var ref block.Ref
	var res []Result
	var err error
	if bc, ok := r.rpc.(batchCaller); ok {
		ref, res, err = r.headAndAggregate(ctx, bc, evm)
	} else {
		ref, err = r.Header(ctx, "latest")
	}
	if err != nil {
		return Head{}, err
	}
	if res == nil {
		if res, err = r.aggregateAt(ctx, evm, block.Tag(ref.Number)); err != nil {
			return Head{}, err
		}
	}
	n := word(res[0])
	if !res[0].OK || !n.IsUint64() {
		return Head{}, upstreamGarbage(fmt.Errorf("getBlockNumber at block %d answered %x", ref.Number, res[0].Data))
	}
	return Head{Ref: ref, EVMNumber: n.Uint64()}, nil
}

// aggregateAt is AggregateResults at block tag, not the answer's.
func (r *Reader) aggregateAt(ctx context.Context, calls []Call, tag string) ([]Result, error) {
	data, err := packAggregate(calls)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var raw hexutil.Bytes
	if err := r.rpc.CallContext(ctx, &raw, "eth_call", map[string]any{"to": r.multicall, "data": hexutil.Bytes(data)}, tag); err != nil {
		return nil, classify(err)
	}
	return unpackAggregate(raw, len(calls))
}

// TokensToPull asks handler's tokensToPullForMint of each payload at the
// answer's block, in one aggregate3: the amounts of the pool's token0 and
// token1 a mintPosition of it pulls. A payload the handler does not answer
// is RPC_ERROR naming it.
func (r *Reader) TokensToPull(ctx context.Context, handler common.Address, payloads [][]byte) ([][2]*big.Int, error) {
	calls := make([]Call, len(payloads))
	for i, p := range payloads {
		data, err := contracts.TokensToPullCall(p)
		if err != nil {
			return nil, err
		}
		calls[i] = Call{Target: handler, Data: data}
	}
	res, err := r.AggregateResults(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([][2]*big.Int, len(res))
	for i, x := range res {
		if !x.OK {
			return nil, problem.Wrap(problem.RPCError, &RevertError{Data: x.Data, Reason: RevertReason(x.Data)}, "handler %s's tokensToPullForMint for range %d reverts", handler.Hex(), i)
		}
		if out[i], err = contracts.UnpackTokensToPull(x.Data); err != nil {
			return nil, problem.Wrap(problem.RPCError, err, "handler %s's tokensToPullForMint for range %d does not decode", handler.Hex(), i)
		}
	}
	return out, nil
}

// LPStep is one transaction of a liquidity provider's sequence: its call
// and, when AssetsOf is set, the handler's convertToAssets of those shares
// asked just before it (what a burn or reservation of them takes then).
type LPStep struct {
	To       common.Address
	Data     []byte
	AssetsOf *big.Int
}

// LPSimulation is what SimulateLP runs: Steps from Signer in order,
// measuring Signer's balances of Tokens and of the Handler's share
// TokenID around each; with Alone, each step also on its own.
type LPSimulation struct {
	Signer  common.Address
	Handler common.Address // the share token (zero: none), asked convertToAssets
	TokenID *big.Int
	Tokens  []common.Address
	Steps   []LPStep
	Alone   bool
}

// StepOutcome is what a step did from its signer: Revert when it reverted,
// else its return data and the signer's balance changes (tokens in the
// order asked, then the share); Assets is the convertToAssets asked before
// it (nil when not asked).
type StepOutcome struct {
	Revert      *RevertError
	Return      []byte
	TokenDeltas []*big.Int
	ShareDelta  *big.Int
	Assets      *big.Int
}

// LPSimulated is a simulation's outcome: each step after the ones before
// it (Sequence), each on its own (Alone, when asked), at the block At.
type LPSimulated struct {
	At       block.Ref
	Sequence []StepOutcome
	Alone    []StepOutcome
}

// SimulateLP runs sim's steps from its signer through contracts.ActionProbe
// placed at the signer's address by an eth_call state override (so each
// step's msg.sender is the signer, as when it is sent), on head's state as
// the next block (a block override of the number: a handler's donation
// lock decays block by block, so a share is worth there what it is worth
// when the transaction is mined then). The steps run one after another in
// one eth_call, each on the state the ones before left; with sim.Alone
// each also runs on its own, in the same JSON-RPC batch: one round trip.
func (r *Reader) SimulateLP(ctx context.Context, head Head, sim LPSimulation) (*LPSimulated, error) {
	steps := make([]contracts.ProbeStep, len(sim.Steps))
	for i, s := range sim.Steps {
		steps[i] = contracts.ProbeStep{Target: s.To, Data: s.Data}
		if s.AssetsOf != nil {
			q, err := contracts.ConvertToAssetsCall(s.AssetsOf, sim.TokenID)
			if err != nil {
				return nil, err
			}
			steps[i].Quote = q
		}
	}
	runs := [][]contracts.ProbeStep{steps}
	if sim.Alone && len(steps) > 1 {
		for _, s := range steps {
			runs = append(runs, []contracts.ProbeStep{s})
		}
	}
	outs, err := r.probeRuns(ctx, head, sim, runs)
	if err != nil {
		return nil, err
	}
	res := &LPSimulated{At: head.Ref}
	for i, out := range outs {
		o, err := stepOutcomes(out, runs[i], len(sim.Tokens))
		if err != nil {
			return nil, err
		}
		if i == 0 {
			res.Sequence = o
		} else {
			res.Alone = append(res.Alone, o[0])
		}
	}
	if sim.Alone && len(steps) <= 1 {
		res.Alone = res.Sequence
	}
	return res, nil
}

// probeRuns sends each run of steps as one probed eth_call at head, as
// head's next block, in one JSON-RPC batch, and returns their answers.
func (r *Reader) probeRuns(ctx context.Context, head Head, sim LPSimulation, runs [][]contracts.ProbeStep) ([]hexutil.Bytes, error) {
	at := block.Tag(head.Number)
	next := map[string]any{"number": hexutil.EncodeUint64(head.EVMNumber + 1)}
	outs := make([]hexutil.Bytes, len(runs))
	batch := make([]rpc.BatchElem, len(runs))
	for i, run := range runs {
		code, err := contracts.ProbeCode(run, sim.Tokens, sim.Handler, sim.TokenID)
		if err != nil {
			return nil, err
		}
		override := map[common.Address]map[string]any{sim.Signer: {"code": hexutil.Bytes(code)}}
		batch[i] = rpc.BatchElem{Method: "eth_call", Result: &outs[i],
			Args: []any{callArg(sim.Signer, &sim.Signer, nil), at, override, next}}
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	if err := r.sendBatch(ctx, batch); err != nil {
		return nil, err
	}
	for _, el := range batch {
		var re rpc.Error
		if errors.As(el.Error, &re) && re.ErrorCode() == -32602 {
			// Invalid params: a node without eth_call's state or block
			// overrides; say so, the operator can act on it.
			return nil, problem.Wrap(problem.RPCError, el.Error, "the rpc node refused eth_call with a state and a block override (JSON-RPC error -32602), which simulating a liquidity provider's transaction needs")
		}
		if el.Error != nil {
			return nil, classify(el.Error)
		}
	}
	return outs, nil
}

// stepOutcomes decodes one probed run of steps measuring tokens tokens.
func stepOutcomes(out []byte, steps []contracts.ProbeStep, tokens int) ([]StepOutcome, error) {
	os, err := contracts.UnpackProbe(out)
	if err != nil || len(os) != len(steps) {
		return nil, upstreamGarbage(fmt.Errorf("ActionProbe returned %d bytes that do not decode as %d steps: %v", len(out), len(steps), err))
	}
	res := make([]StepOutcome, len(os))
	for i, o := range os {
		if len(o.TokenDeltas) != tokens {
			return nil, upstreamGarbage(fmt.Errorf("ActionProbe measured %d tokens of %d", len(o.TokenDeltas), tokens))
		}
		if !o.OK {
			res[i] = StepOutcome{Revert: &RevertError{Data: o.Return, Reason: RevertReason(o.Return)}}
		} else {
			res[i] = StepOutcome{Return: o.Return, TokenDeltas: o.TokenDeltas, ShareDelta: o.ShareDelta}
		}
		if len(steps[i].Quote) > 0 {
			res[i].Assets = o.Quoted
		}
	}
	return res, nil
}
