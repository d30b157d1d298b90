package chain

import (
	"context"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// blockParam is the block parameter of every eth_call the reader makes:
// the answer's pinned block (package block), so the chain half of an
// answer is read at the same block as its subgraph half. Outside a pinned
// answer (readiness, start checks) it is "latest". A block the client
// asked for is known before anything is read; the head is learnt from the
// subgraph's first page (the read waits for it) or, on routes that read the
// chain only, from the head's header, read here once per answer: the block
// a simulation runs at is the one the answer names.
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
	ref, err := p.Wait()
	if err != nil {
		return "", err
	}
	return block.Tag(ref.Number), nil
}

// Header reads a block's number, hash and time (eth_getBlockByNumber
// without transactions); tag is "latest" or a hex number. A block the node
// does not know is BLOCK_NOT_FOUND.
func (r *Reader) Header(ctx context.Context, tag string) (block.Ref, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var h *struct {
		Number    hexutil.Uint64 `json:"number"`
		Hash      string         `json:"hash"`
		Timestamp hexutil.Uint64 `json:"timestamp"`
	}
	if err := r.rpc.CallContext(ctx, &h, "eth_getBlockByNumber", tag, false); err != nil {
		return block.Ref{}, classify(err)
	}
	if h == nil {
		return block.Ref{}, problem.New(problem.BlockNotFound, "the rpc node has no block %s", tagText(tag))
	}
	return block.Ref{Number: uint64(h.Number), Hash: strings.ToLower(h.Hash), Timestamp: int64(h.Timestamp)}, nil
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
