package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// blockAt reads the block a request asks for from the node (remembered
// for a while by the pins): a block past the node's head is refused
// before any other read. The read runs before the cache lookup (the key
// holds the block's hash), so it is held to what a fill is held to: one
// read per block shared by the requests asking for it, admitted through
// the fill bound (past it 503 OVERLOADED), its header checked
// (block.Pins.BlockAt).
func (s *Server) blockAt(r *http.Request, at block.Ask) (block.Ref, error) {
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	ref, err := s.opts.Pins.BlockAt(ctx, at.Chain, at.Want, s.admitRead)
	if pe := (*problem.Error)(nil); errors.Is(err, context.DeadlineExceeded) && !errors.As(err, &pe) {
		// The request's deadline ended its wait for the shared read.
		err = problem.New(problem.Timeout, "the request did not complete within the gateway's deadline")
	}
	return ref, err
}

// admitRead admits one upstream read that is not a fill (the header of a
// block asked for) through the fill bound: it holds a slot, and what its
// answer charges to the memory budget, until released.
func (s *Server) admitRead(ctx context.Context) (context.Context, func(), error) {
	ctx, lease, err := s.fills.Admit(ctx)
	if err != nil {
		return ctx, nil, err
	}
	return ctx, lease.Release, nil
}

// fillPinned runs one answer's reads under one pin (block.Pins.Run): at
// the block asked for, else at the block the route's strategy chooses. The
// answer carries that block.
func (s *Server) fillPinned(ctx context.Context, at block.Ask, pin block.Strategy, call func(context.Context) (any, uint64, error)) (entry, error) {
	var (
		body          any
		subgraphBlock uint64
	)
	ref, err := s.opts.Pins.Run(ctx, at, pin, func(ctx context.Context) (err error) {
		body, subgraphBlock, err = call(ctx)
		return err
	})
	if err != nil {
		return entry{}, err
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
	if d, ok := v.(degraded); ok && d.Degraded() {
		e.brief = true
	}
	return e, nil
}

// degraded is an answer that can tell it left add-ons unknown because
// their reads failed (positions, the expiring list): cached only briefly
// (Options.PrepareTTL, never stale, never shared), so it heals once the
// upstream answers again rather than after the route's whole TTL.
type degraded interface{ Degraded() bool }

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
