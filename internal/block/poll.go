package block

import (
	"context"
	"time"
)

// Poller is the head feed of a chain served by a Graph Node: it asks the
// subgraph's `_meta` every Every, and publishes each new indexed head.
// Graph Node's `_meta` says nothing of reorgs, so the poller keeps the
// hashes of the heads it published (the last Keep) and, when the head
// `_meta` names is not above the last one, or the node no longer has the
// last one, asks the node's headers where the chains part: the newest
// block it published that the node still has is the fork.
type Poller struct {
	Indexed Indexer
	Headers HeaderReader
	// Every is the poll period (0: DefaultPoll).
	Every time.Duration
	// Timeout bounds each round of reads (0: Every).
	Timeout time.Duration
	// Keep is how many published heads are remembered for finding a fork
	// (0: 64); a reorg deeper than that forks at the oldest remembered.
	Keep int
	// Wake, if set, asks for a round now: the node's newHeads over a
	// WebSocket RPC URL (chain.NewHeads), so a head reaches the feed as
	// soon as the subgraph has it rather than at the next tick. The
	// ticker stays, for a socket that drops and for a subgraph that
	// indexes the block after the node announced it.
	Wake <-chan struct{}

	seen []Ref // published heads, oldest first
}

// DefaultPoll is the poll period of a Poller that states none: a block on
// the fastest chains served.
const DefaultPoll = time.Second

// Run polls until ctx ends; a failed round is skipped (the next one asks
// again), so it returns only ctx's error.
func (p *Poller) Run(ctx context.Context, h *Heads) error {
	every := p.Every
	if every <= 0 {
		every = DefaultPoll
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		p.round(ctx, h, every)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-p.Wake: // nil without a WebSocket: never
		}
	}
}

// round is one poll: read `_meta`, then publish what it means.
func (p *Poller) round(ctx context.Context, h *Heads, every time.Duration) {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = every
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := p.Indexed.IndexedHead(ctx)
	if err != nil || r.Check(0) != nil {
		return
	}
	if ev, ok := p.judge(ctx, r); ok {
		h.Publish(ev)
	}
}

// judge turns a head read from `_meta` into the event to publish: a new
// head on top of the last, a reorg when the last is no longer the node's,
// or nothing (the head is the last one, or a read failed).
func (p *Poller) judge(ctx context.Context, r Ref) (Event, bool) {
	if len(p.seen) == 0 {
		p.remember(r)
		return Event{Kind: NewHead, Head: r}, true
	}
	last := p.seen[len(p.seen)-1]
	if r == last {
		return Event{Kind: NewHead, Head: r}, true // confirms it
	}
	still, err := p.onChain(ctx, last)
	if err != nil {
		return Event{}, false
	}
	if still {
		if r.Number <= last.Number {
			// `_meta` behind the head it named before (a load balancer
			// between two nodes): a late view, not a reorg.
			return Event{}, false
		}
		p.remember(r)
		return Event{Kind: NewHead, Head: r}, true
	}
	fork, err := p.fork(ctx)
	if err != nil {
		return Event{}, false
	}
	p.forget(fork.Number)
	p.remember(r)
	return Event{Kind: Reorg, Head: r, Fork: fork}, true
}

// onChain reports whether the node still has r as block r.Number.
func (p *Poller) onChain(ctx context.Context, r Ref) (bool, error) {
	now, err := p.Headers.HeaderAt(ctx, r.Number)
	if err != nil {
		return false, err
	}
	return now.Hash == r.Hash, nil
}

// fork is the newest published head the node still has, else the oldest
// remembered (a reorg deeper than Keep).
func (p *Poller) fork(ctx context.Context) (Ref, error) {
	for i := len(p.seen) - 1; i >= 0; i-- {
		ok, err := p.onChain(ctx, p.seen[i])
		if err != nil {
			return Ref{}, err
		}
		if ok {
			return p.seen[i], nil
		}
	}
	return Ref{Number: p.seen[0].Number - min(p.seen[0].Number, 1)}, nil
}

// remember appends r to the published heads, keeping the last Keep.
func (p *Poller) remember(r Ref) {
	keep := p.Keep
	if keep <= 0 {
		keep = 64
	}
	p.seen = append(p.seen, r)
	if len(p.seen) > keep {
		p.seen = append(p.seen[:0], p.seen[len(p.seen)-keep:]...)
	}
}

// forget drops the published heads above n (replaced by a reorg).
func (p *Poller) forget(n uint64) {
	for len(p.seen) > 0 && p.seen[len(p.seen)-1].Number > n {
		p.seen = p.seen[:len(p.seen)-1]
	}
}
