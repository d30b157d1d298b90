package chain

import (
	"context"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// blockParam is the block parameter of every eth_call the reader makes:
// the answer's pinned block (package block), so the chain half of an
// answer is read at the same block as its subgraph half. Outside a pinned
// answer (readiness, start checks) it is "latest". A block the client
// asked for is known before anything is read; the head is learnt from the
// subgraph's first page (the read waits for it) or, on routes that read the
// chain only, from the head's header, read here once per answer (or with
// the answer's first read: aggregateFirst): the block a simulation runs at
// is the one the answer names.
func (r *Reader) blockParam(ctx context.Context) (string, error) {
	p := block.From(ctx)
	if p == nil {
		return "latest", nil
	}
	if p.Want != 0 {
		return block.Tag(p.Want), nil
	}
	if ref, ok := p.Resolved(); ok {
		return block.Tag(ref.Number), nil
	}
	if p.Claim(block.Anyone) {
		ref, err := r.Header(ctx, "latest")
		if err != nil {
			p.Fail(err)
			return "", err
		}
		p.Resolve(ref)
		return block.Tag(ref.Number), nil
	}
	ref, err := p.Wait(ctx)
	if err != nil {
		return "", err
	}
	return block.Tag(ref.Number), nil
}

// aggregateFirst is AggregateResults for a read that may be its answer's
// first (a prepared exercise's position): when it is the one to resolve
// the pin at the head, it sends the head's header and the calls at
// "latest" in one JSON-RPC batch, the calls with the block number they ran
// at (headNumberCalls), and pins the answer to the header's block when the
// two agree: no round trip for the header before the reads. When they do
// not (a block landed between the two, or a node load-balanced across
// heads), the pin still takes the header's block and the calls are read
// again there. Elsewhere it is AggregateResults at the answer's block.
func (r *Reader) aggregateFirst(ctx context.Context, calls []Call) ([]Result, error) {
	p, bc, ok := r.claimHead(ctx)
	if !ok {
		return r.AggregateResults(ctx, calls) // at the pin's block, once known
	}
	return r.headFirst(ctx, p, bc, calls)
}

// claimHead claims ctx's pin for a read that sends the head's header in
// its own batch: a pin asked at the head, not yet resolved or claimed,
// with a node that takes batches.
func (r *Reader) claimHead(ctx context.Context) (*block.Pin, batchCaller, bool) {
	p := block.From(ctx)
	bc, batch := r.rpc.(batchCaller)
	if p == nil || p.Want != 0 || !batch {
		return nil, nil, false
	}
	if _, ok := p.Resolved(); ok || !p.Claim(block.Anyone) {
		return nil, nil, false
	}
	return p, bc, true
}

// headFirst reads calls with the head's header for the pin p claimed
// (headAndAggregate) and resolves it.
func (r *Reader) headFirst(ctx context.Context, p *block.Pin, bc batchCaller, calls []Call) ([]Result, error) {
	ref, res, err := r.headAndAggregate(ctx, bc, calls)
	if err != nil {
		p.Fail(err)
		return nil, err
	}
	p.Resolve(ref)
	if res == nil {
		return r.AggregateResults(ctx, calls)
	}
	return res, nil
}

// headNumberCalls read the number of the block a call runs at: ArbSys's
// on Arbitrum, where block.number is not the chain's own; Multicall3's
// getBlockNumber elsewhere (ArbSys's address holds no code there).
func (r *Reader) headNumberCalls() []Call {
	return []Call{{contracts.ArbSysAddress, pack(contracts.ArbSys, "arbBlockNumber")}, {r.multicall, pack(contracts.Multicall3, "getBlockNumber")}}
}

// headAndAggregate sends the head's header and calls (with
// headNumberCalls) at "latest" in one batch. It returns the header and
// the calls' results when they ran at the header's block, the header and
// nil when they did not.
func (r *Reader) headAndAggregate(ctx context.Context, bc batchCaller, calls []Call) (block.Ref, []Result, error) {
	all := append(append(make([]Call, 0, len(calls)+2), calls...), r.headNumberCalls()...)
	data, err := packAggregate(all)
	if err != nil {
		return block.Ref{}, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var h *headerJSON
	var raw hexutil.Bytes
	elems := []rpc.BatchElem{
		{Method: "eth_getBlockByNumber", Args: []any{"latest", false}, Result: &h},
		{Method: "eth_call", Args: []any{map[string]any{"to": r.multicall, "data": hexutil.Bytes(data)}, "latest"}, Result: &raw},
	}
	if err := bc.BatchCallContext(ctx, elems); err != nil {
		return block.Ref{}, nil, classify(err)
	}
	for _, el := range elems {
		if el.Error != nil {
			return block.Ref{}, nil, classify(el.Error)
		}
	}
	if h == nil {
		return block.Ref{}, nil, problem.New(problem.RPCError, "the rpc node has no latest block")
	}
	ref, err := h.ref(0)
	if err != nil {
		return block.Ref{}, nil, err
	}
	res, err := unpackAggregate(raw, len(all))
	if err != nil {
		return block.Ref{}, nil, err
	}
	if n, ok := ranAt(res[len(calls):]); !ok || n != ref.Number {
		return ref, nil, nil
	}
	return ref, res[:len(calls)], nil
}

// ranAt is the block number headNumberCalls answered: ArbSys's when it
// answered a word, else Multicall3's.
func ranAt(res []Result) (uint64, bool) {
	for _, x := range res {
		if x.OK && len(x.Data) == 32 {
			n := new(big.Int).SetBytes(x.Data)
			return n.Uint64(), n.IsUint64()
		}
	}
	return 0, false
}

// headerJSON is the part of eth_getBlockByNumber's answer a pin needs.
type headerJSON struct {
	Number    hexutil.Uint64 `json:"number"`
	Hash      string         `json:"hash"`
	Timestamp hexutil.Uint64 `json:"timestamp"`
}

// ref is the header as a block.Ref, checked (block.Ref.Check) to be block
// want's (0: the head): another block's number, a hash that is not one, a
// time past any sane bound (2^64-1 was shown as -1) are the node's garbage,
// never an answer's block.
func (h *headerJSON) ref(want uint64) (block.Ref, error) {
	r := block.Ref{Number: uint64(h.Number), Hash: strings.ToLower(h.Hash), Timestamp: int64(h.Timestamp)}
	if h.Timestamp > block.MaxTimestamp {
		r.Timestamp = -1 // past int64 too: Check refuses it, naming the node's value
	}
	if err := r.Check(want); err != nil {
		return block.Ref{}, problem.Wrap(problem.RPCError, err, "the rpc node's header is not one of the block asked for: %v", err)
	}
	return r, nil
}

// Header reads a block's number, hash and time (eth_getBlockByNumber
// without transactions); tag is "latest" or a hex number. A block the node
// does not know is BLOCK_NOT_FOUND; a header that is not the block asked
// for (block.Ref.Check) is RPC_ERROR.
func (r *Reader) Header(ctx context.Context, tag string) (block.Ref, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var h *headerJSON
	if err := r.rpc.CallContext(ctx, &h, "eth_getBlockByNumber", tag, false); err != nil {
		return block.Ref{}, classify(err)
	}
	if h == nil {
		return block.Ref{}, problem.New(problem.BlockNotFound, "the rpc node has no block %s", tagText(tag))
	}
	want, _ := hexutil.DecodeUint64(tag) // 0 for "latest"
	return h.ref(want)
}

// HeaderAt is Header of block n.
func (r *Reader) HeaderAt(ctx context.Context, n uint64) (block.Ref, error) {
	return r.Header(ctx, block.Tag(n))
}

func tagText(tag string) string {
	if n, err := hexutil.DecodeUint64(tag); err == nil {
		return block.Decimal(n)
	}
	return tag
}

// blockError names a node's refusal to read state it has pruned (geth
// "missing trie node", "historical state ... not available", erigon/reth
// "pruned"): an answer pinned to an old block the node no longer holds.
// "header not found" is left a node failure (RPC_ERROR): at the head it is
// a node glitch, and a block the client asks for past the node's head is
// refused before any read (BlockAt: BLOCK_NOT_FOUND).
func blockError(re rpc.Error, cause *problem.Cause) *problem.Error {
	msg := strings.ToLower(re.Error())
	if strings.Contains(msg, "missing trie node") || strings.Contains(msg, "historical state") ||
		strings.Contains(msg, "pruned") || strings.Contains(msg, "state not available") || strings.Contains(msg, "state is not available") {
		return problem.Wrap(problem.BlockPruned, cause, "the rpc node no longer holds the state of the answer's block (JSON-RPC error %d)", re.ErrorCode())
	}
	return nil
}
