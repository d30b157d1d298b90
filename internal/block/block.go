// Package block is the one home of "which block is this answer at".
// Every answer is read at one block. Each endpoint states how that block
// is chosen (a Strategy, in the gateway's endpoint table beside its TTL);
// the gateway runs each fill under one Pin (Pins.Run), at the block the
// client asked for or the one the strategy chooses. The pin travels in
// the context: the subgraph client and the chain reader read it, so every
// subgraph query of the answer asks `block: { number: N }` and every
// eth_call runs at N, and no use case or reader signature needs code of
// its own to take part. The first read that learns the block (the
// subgraph's `_meta` in the same document as its first page, or the
// chain's head header on routes without a subgraph) resolves the pin;
// reads that need N before it is known wait for it. Pins keep what the
// choice needs: each chain's subgraph head as last seen (Seen) with its
// stale bounds (HeadAges) and one shared refresh, and the headers of the
// blocks clients ask for; the composition root hands them each chain's
// subgraph and header reader.
package block

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Ref is the block an answer is true at.
type Ref struct {
	Number    uint64
	Hash      string // 0x-hex, lowercase; "" when no source gave it
	Timestamp int64  // unix seconds; 0 when no source gave it
}

// MaxTimestamp is the latest block time an upstream may report: the end
// of year 9999, the last second RFC 3339's four-digit years write (and far
// inside the integers JSON clients read exactly). It is a fixed bound, not
// one relative to this machine's clock: a test chain may run years ahead
// of it, and a node may not lie past it (a time of 2^64-1 was shown as -1).
const MaxTimestamp = 253402300799

// Check refuses a header an upstream reported for block want (0: its head)
// that cannot be that block: another number, a hash that is not 32 bytes
// of hex, a time before 1970 or past MaxTimestamp. Nothing an upstream says
// about the block an answer is true at is served or cached unchecked; the
// caller wraps the error in its upstream's code.
func (r Ref) Check(want uint64) error {
	switch {
	case want != 0 && r.Number != want:
		return fmt.Errorf("a header of block %d answered for block %d", r.Number, want)
	case !isHash(r.Hash):
		return fmt.Errorf("block %d: hash %.80q is not 0x and 64 hexadecimal digits", r.Number, r.Hash)
	case r.Timestamp < 0 || r.Timestamp > MaxTimestamp:
		return fmt.Errorf("block %d: time %d is outside 0 to %d (the end of year 9999)", r.Number, uint64(r.Timestamp), MaxTimestamp)
	}
	return nil
}

// isHash reports 0x and 64 hexadecimal digits.
func isHash(h string) bool {
	if len(h) != 66 || h[0] != '0' || (h[1] != 'x' && h[1] != 'X') {
		return false
	}
	for _, c := range h[2:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Who says which kind of read may resolve a pin asked at the head.
type Who int

const (
	// Anyone: the first read to claim it (ChainHead answers: the block
	// their simulation runs at).
	Anyone Who = iota
	// Subgraph: only the subgraph's answer; chain reads wait for it, so a
	// chain read racing the first subgraph page cannot pick a head the
	// subgraph has not indexed.
	Subgraph
)

// Pin is one answer's block: asked (Want, 0 for the subgraph's indexed
// head) and, once known, resolved.
type Pin struct {
	// Want is the block the client asked for (0: none).
	Want uint64

	mu      sync.Mutex
	who     Who
	claimed bool
	done    chan struct{}
	ref     Ref
	err     error
}

type pinKey struct{}

// With returns ctx carrying a new pin asking for want (0: the head).
func With(ctx context.Context, want uint64) (context.Context, *Pin) {
	p := &Pin{Want: want, done: make(chan struct{})}
	return context.WithValue(ctx, pinKey{}, p), p
}

// From returns ctx's pin, nil when the read is not part of a pinned answer
// (readiness probes, start checks): such reads go to the head as before.
func From(ctx context.Context) *Pin {
	p, _ := ctx.Value(pinKey{}).(*Pin)
	return p
}

// ResolvedBy says which kind of read may resolve the pin: Run says
// Subgraph for SubgraphFirst answers before their first read.
func (p *Pin) ResolvedBy(who Who) {
	p.mu.Lock()
	p.who = who
	p.mu.Unlock()
}

// Claim reports whether the caller, a read of kind who, is the one to
// resolve the pin: true once, to the first permitted claimant, while the
// pin is unresolved. A claimant must call Resolve or Fail.
func (p *Pin) Claim(who Who) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claimed || (p.who != Anyone && p.who != who) {
		return false
	}
	p.claimed = true
	return true
}

// Resolve sets the pin's block and releases the reads waiting for it. A
// second resolution keeps the first.
func (p *Pin) Resolve(r Ref) { p.settle(r, nil) }

// Fail releases the waiting reads with err (the claimant's read failed).
func (p *Pin) Fail(err error) { p.settle(Ref{}, err) }

// settle ends the pin once: its block or its claimant's error.
func (p *Pin) settle(r Ref, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
		return
	default:
	}
	p.claimed, p.ref, p.err = true, r, err
	close(p.done)
}

// Resolved returns the block when it is known.
func (p *Pin) Resolved() (Ref, bool) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.ref, p.err == nil
	default:
		return Ref{}, false
	}
}

// Wait returns the block once it is resolved, or the claimant's error, or
// ctx's when ctx ends first (a claimant that failed before it read, or a
// sibling read's failure cancelling the group). The claimant's reads have
// their own deadlines, shorter than a fill's, so when the claimant times
// out its error is the one the waiters report.
func (p *Pin) Wait(ctx context.Context) (Ref, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return Ref{}, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ref, p.err
}

// Tag is a JSON-RPC block parameter for n: hex quantity.
func Tag(n uint64) string { return hexutil.EncodeUint64(n) }

// Decimal is n in decimal, for headers and messages.
func Decimal(n uint64) string { return strconv.FormatUint(n, 10) }

// Known is the JSON-RPC block parameter of ctx's pin when its block is
// already known (asked, or resolved), else fallback: for readers that run
// after an answer's first read and do not resolve a pin themselves (swap
// quotes).
func Known(ctx context.Context, fallback string) string {
	p := From(ctx)
	if p == nil {
		return fallback
	}
	if p.Want != 0 {
		return Tag(p.Want)
	}
	if r, ok := p.Resolved(); ok {
		return Tag(r.Number)
	}
	return fallback
}

// Without returns ctx with no pin: for reads of facts that no block
// changes (a market's immutables), which then need not wait for the
// answer's block and run alongside its first subgraph page.
func Without(ctx context.Context) context.Context {
	return context.WithValue(ctx, pinKey{}, (*Pin)(nil))
}
