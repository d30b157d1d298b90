package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// pinAsk is what a request says about its answer's block: its chain, the
// block asked for (0: none, the subgraph's indexed block) and, once read
// from the node, that block's hash and time.
type pinAsk struct {
	chain uint64
	want  uint64
	ref   block.Ref
}

// blockAt reads the block a request asks for from the node (remembered by
// the service for a second): a block past the node's head is refused
// before any other read.
func (s *Server) blockAt(r *http.Request, at pinAsk) (block.Ref, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	return s.opts.Service.BlockAt(ctx, at.chain, at.want)
}

// fillPinned runs one answer's reads under one pin (package block): at the
// block asked for, resolved already, or at the block the answer's first
// read resolves. The answer carries that block.
func (s *Server) fillPinned(ctx context.Context, at pinAsk, call func(context.Context) (any, uint64, error)) (entry, error) {
	ctx, pin := block.With(ctx, at.want)
	if at.want != 0 {
		pin.Resolve(at.ref)
	}
	body, subgraphBlock, err := call(ctx)
	if err != nil {
		return entry{}, err
	}
	ref, ok := pin.Resolved()
	if !ok {
		// Nothing the answer read needed the chain or the subgraph
		// (every fact was cached): it is true at the head.
		if ref, err = s.opts.Service.Head(ctx, at.chain); err != nil {
			return entry{}, err
		}
	}
	if subgraphBlock != 0 && subgraphBlock != ref.Number {
		// A replacement query document without $block reads the head:
		// its half of the answer is not at the answer's block.
		return entry{}, problem.New(problem.SubgraphError, "the subgraph answered at block %d, not at the answer's block %d (does every query document declare $block?)", subgraphBlock, ref.Number)
	}
	return encodeAt(body, subgraphBlock, ref)
}

// asOf is the envelope field an object answer carries: the block it is
// true at. Array answers carry it in headers only.
type asOf struct {
	Number    uint64 `json:"number"`
	Hash      string `json:"hash"`
	Timestamp int64  `json:"timestamp"`
}

// encodeAt marshals v once with its block: an object gets an "asOf"
// member first; every answer gets the X-Block-* headers.
func encodeAt(v any, subgraphBlock uint64, ref block.Ref) (entry, error) {
	body, err := marshal(v)
	if err != nil {
		return entry{}, fmt.Errorf("encode response: %w", err)
	}
	if len(body) > 1 && body[0] == '{' {
		env, err := marshal(asOf{ref.Number, ref.Hash, ref.Timestamp})
		if err != nil {
			return entry{}, err
		}
		sep := ","
		if body[1] == '}' {
			sep = ""
		}
		body = append(append(append([]byte(`{"asOf":`), env...), sep...), body[1:]...)
	}
	e := newEntry(body, subgraphBlock, etagOf(body), gzipBody(body))
	e.setBlock(ref)
	return e, nil
}

// setBlock lays out the X-Block-* header values once, at fill time.
func (e *entry) setBlock(ref block.Ref) {
	if ref.Number == 0 {
		return
	}
	e.ref = ref
	e.blockNumber = []string{strconv.FormatUint(ref.Number, 10)}
	if ref.Hash != "" {
		e.blockHash = []string{ref.Hash}
	}
	if ref.Timestamp != 0 {
		e.blockTime = []string{strconv.FormatInt(ref.Timestamp, 10)}
	}
}
