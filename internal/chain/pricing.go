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

// ReadPricing asks the market what it would charge for each ask, at one
// block, in one round trip: contracts.PricingRead's creation code sent as
// an eth_call without `to`, from user when not zero (a pricing contract may
// read tx.origin, as OptionPricingLinearV2_1 reads its xSYK balance, so a
// quote is the user's own). More asks than one read can return (24 KiB,
// EIP-170) go as several eth_calls in one JSON-RPC batch; should a block
// arrive between them, the batch is asked again at the first one's block.
// A market that does not answer primePool(), getCurrentPricePerCallAsset,
// putAssetDecimals() or its assets makes the read revert: a *RevertError.
func (r *Reader) ReadPricing(ctx context.Context, market, user common.Address, asks []contracts.PricingAsk) (contracts.PricingHead, []contracts.PricingAnswer, error) {
	var chunks [][]byte
	for i := 0; i == 0 || i < len(asks); i += contracts.PricingReadMaxAsks {
		data, err := contracts.PricingReadCode(market, user, asks[i:min(i+contracts.PricingReadMaxAsks, len(asks))])
		if err != nil {
			return contracts.PricingHead{}, nil, err
		}
		chunks = append(chunks, data)
	}
	at, err := r.blockParam(ctx)
	if err != nil {
		return contracts.PricingHead{}, nil, err
	}
	head, answers, err := r.pricingBatch(ctx, user, chunks, at)
	var moved *blockMoved
	if errors.As(err, &moved) {
		// the chunks saw different blocks: again, at the first one's
		head, answers, err = r.pricingBatch(ctx, user, chunks, hexutil.EncodeBig(moved.first))
	}
	if err != nil {
		return contracts.PricingHead{}, nil, err
	}
	if err := ranAtBlock(head, at); err != nil {
		return contracts.PricingHead{}, nil, err
	}
	if len(answers) != len(asks) {
		return head, nil, upstreamGarbage(fmt.Errorf("PricingRead returned %d answers for %d asks", len(answers), len(asks)))
	}
	return head, answers, nil
}

// ranAtBlock refuses a pricing read that says it ran at another block
// than the one it was asked at (tag, a hex number: the answer's pinned
// block; "latest" outside a pinned answer checks nothing): a node that
// answers from another block than asked (a load balancer behind one URL,
// a node that ignores the parameter) must not have its prices served
// beside the answer's block.
func ranAtBlock(head contracts.PricingHead, tag string) error {
	want, err := hexutil.DecodeUint64(tag)
	if err != nil {
		return nil
	}
	if head.BlockNumber == nil || !head.BlockNumber.IsUint64() || head.BlockNumber.Uint64() != want {
		return problem.New(problem.RPCError, "the rpc node ran the pricing read at block %v, not at block %d as asked", head.BlockNumber, want)
	}
	return nil
}

// blockMoved says the chunks of one read saw different blocks, and the
// first one's.
type blockMoved struct{ first *big.Int }

func (e *blockMoved) Error() string { return "a block arrived between the reads of one batch" }

// pricingBatch runs the chunks at block and joins their answers; a
// *blockMoved when they report different blocks.
func (r *Reader) pricingBatch(ctx context.Context, user common.Address, chunks [][]byte, block string) (contracts.PricingHead, []contracts.PricingAnswer, error) {
	outs, err := r.callsAt(ctx, user, chunks, block)
	if err != nil {
		return contracts.PricingHead{}, nil, err
	}
	var head contracts.PricingHead
	var answers []contracts.PricingAnswer
	for i, out := range outs {
		h, a, err := contracts.UnpackPricingRead(out)
		if err != nil {
			return h, nil, upstreamGarbage(fmt.Errorf("unpack PricingRead: %w", err))
		}
		if i == 0 {
			head = h
		} else if h.BlockNumber.Cmp(head.BlockNumber) != 0 {
			return contracts.PricingHead{}, nil, &blockMoved{first: head.BlockNumber}
		}
		answers = append(answers, a...)
	}
	return head, answers, nil
}

// callsAt sends one creation-code eth_call per data, from `from` (zero:
// none), at block, in one JSON-RPC batch (single calls when the Caller
// cannot batch). The first revert is a *RevertError.
func (r *Reader) callsAt(ctx context.Context, from common.Address, calls [][]byte, block string) ([]hexutil.Bytes, error) {
	if len(calls) == 1 {
		out, err := r.ethCallRaw(ctx, callArg(from, nil, calls[0])) // no "to": the node runs the code
		return []hexutil.Bytes{out}, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	outs := make([]hexutil.Bytes, len(calls))
	batch := make([]rpc.BatchElem, len(calls))
	for i, data := range calls {
		batch[i] = rpc.BatchElem{Method: "eth_call", Result: &outs[i], Args: []any{callArg(from, nil, data), block}}
	}
	if err := r.sendBatch(ctx, batch); err != nil {
		return nil, err
	}
	for _, el := range batch {
		if el.Error != nil {
			if rev, ok := asRevert(el.Error); ok {
				return nil, rev
			}
			return nil, classify(el.Error)
		}
	}
	return outs, nil
}

// SimulateAtHead runs data from `from` to `to` at the chain's head, not
// at the answer's block (a prepared transaction is sent against the head:
// a range used up, a balance spent or an allowance changed since the
// answer's block must show), and returns the block it ran at. One JSON-RPC
// batch asks the head's header, the call at "latest" and the block number
// the chain's own code sees at "latest" (headNumberCalls); when that is
// the header's block the call ran there. When a block landed in between,
// the call is asked again at the header's block: one more round trip. A
// node that cannot batch is asked the header first. A revert is a
// *RevertError with its reason decoded (and the block it reverted at); a
// node failure is an upstream problem.
func (r *Reader) SimulateAtHead(ctx context.Context, from, to common.Address, data []byte) (block.Ref, error) {
	arg := callArg(from, &to, data)
	bc, ok := r.rpc.(batchCaller)
	if !ok {
		ref, err := r.Header(ctx, "latest")
		if err != nil {
			return block.Ref{}, err
		}
		return ref, r.simulateAt(ctx, arg, block.Tag(ref.Number))
	}
	check, err := packAggregate(r.headNumberCalls())
	if err != nil {
		return block.Ref{}, err
	}
	cctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var h *headerJSON
	var out, ran hexutil.Bytes
	elems := []rpc.BatchElem{
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &h},
		{Method: "eth_call", Args: []any{arg, "latest"}, Result: &out},
		{Method: "eth_call", Args: []any{map[string]any{"to": r.multicall, "data": hexutil.Bytes(check)}, "latest"}, Result: &ran},
	}
	if err := bc.BatchCallContext(cctx, elems); err != nil {
		return block.Ref{}, classify(err)
	}
	if elems[0].Error != nil {
		return block.Ref{}, classify(elems[0].Error)
	}
	if h == nil {
		return block.Ref{}, problem.New(problem.RPCError, "the rpc node has no latest block")
	}
	ref, err := h.ref(0)
	if err != nil {
		return block.Ref{}, err
	}
	if res, err := unpackAggregate(ran, 2); elems[2].Error != nil || err != nil || !ranAtIs(res, ref.Number) {
		return ref, r.simulateAt(ctx, arg, block.Tag(ref.Number))
	}
	return ref, callOutcome(elems[1].Error)
}

// SimulateCall runs data from `from` to `to` at the answer's block
// (package block), not at the head as SimulateAtHead does: for answers
// whose block is itself the chain's head (a ChainHead route), or the block
// the client asked for. A revert is a *RevertError with its reason
// decoded; a node failure is an upstream problem.
func (r *Reader) SimulateCall(ctx context.Context, from, to common.Address, data []byte) ([]byte, error) {
	return r.ethCallRaw(ctx, callArg(from, &to, data))
}

// ranAtIs says whether headNumberCalls' answers name block n.
func ranAtIs(res []Result, n uint64) bool {
	got, ok := ranAt(res)
	return ok && got == n
}

// simulateAt runs arg at block tag: nil, or the revert or failure.
func (r *Reader) simulateAt(ctx context.Context, arg map[string]any, tag string) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var out hexutil.Bytes
	return callOutcome(r.rpc.CallContext(ctx, &out, "eth_call", arg, tag))
}

// callOutcome is an eth_call's error in the problem vocabulary: a revert
// as a *RevertError, any other failure classified.
func callOutcome(err error) error {
	if err == nil {
		return nil
	}
	if rev, ok := asRevert(err); ok {
		return rev
	}
	return classify(err)
}

// ethCallRaw is one eth_call within the call deadline: a revert comes back
// as a *RevertError, any other failure classified into the problem
// vocabulary.
func (r *Reader) ethCallRaw(ctx context.Context, arg map[string]any) ([]byte, error) {
	out, err := r.rawEthCall(ctx, arg)
	if err != nil {
		if rev, ok := asRevert(err); ok {
			return nil, rev
		}
		return nil, classify(err)
	}
	return out, nil
}
