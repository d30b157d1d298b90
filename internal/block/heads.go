package block

import (
	"context"
	"sync"
	"time"
)

// EventKind is what happened to a chain's head.
type EventKind uint8

const (
	// NewHead: the chain grew; Head is its newest block.
	NewHead EventKind = iota + 1
	// Reorg: blocks above Fork were replaced (or dropped); answers read
	// above it are void. Head is the newest block as the source now has
	// it (Fork itself when the source has only reverted).
	Reorg
)

// String names the kind as streams write it.
func (k EventKind) String() string {
	if k == Reorg {
		return "reorg"
	}
	return "head"
}

// Event is one change of a chain's head, as a feed reports it.
type Event struct {
	Kind EventKind
	Head Ref
	// Fork is, for a Reorg, the newest block still on the chain.
	Fork Ref
	// Relayed is an event another replica's feed found, applied here
	// from the shared tier: it is not sent back to the others (each
	// replica relays only what its own feed found, so an event crosses
	// the fleet once instead of bouncing between replicas for ever).
	Relayed bool
}

// merge folds a later event into one a subscriber has not taken yet: the
// newest head wins, and a reorg is never lost (its fork is the lowest of
// the two), so a slow subscriber skips blocks but never misses that
// answers it holds are void.
func merge(old, ev Event) Event {
	if old.Kind != Reorg {
		return ev
	}
	out := Event{Kind: Reorg, Head: ev.Head, Fork: old.Fork, Relayed: old.Relayed && ev.Relayed}
	if ev.Kind == Reorg && ev.Fork.Number < old.Fork.Number {
		out.Fork = ev.Fork
	}
	return out
}

// Heads is one chain's head as its feed last reported it, and the
// subscribers that follow it. A feed publishes; pins, the response cache
// and streams read or subscribe. A slow subscriber skips to the newest
// event (merge); it never holds the feed back. The zero value is ready.
type Heads struct {
	mu   sync.Mutex
	last Ref
	at   time.Time
	subs map[chan Event]struct{}
}

// Latest is the newest head published, and when a feed last confirmed it
// (published it, or published it again unchanged); ok is false before
// any.
func (h *Heads) Latest() (r Ref, at time.Time, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last, h.at, h.last.Number != 0
}

// Publish records ev and hands it to every subscriber. It reports whether
// subscribers were told: a NewHead naming the head already held only
// confirms it (Latest's time moves), and one below it, or at its number
// with another hash, is ignored (an older read answering late; replacing
// a block is a Reorg's to say). A head without a hash is no head.
func (h *Heads) Publish(ev Event) bool {
	if ev.Head.Hash == "" || (ev.Kind != NewHead && ev.Kind != Reorg) {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Kind == NewHead && h.last.Number != 0 && ev.Head.Number <= h.last.Number {
		if ev.Head.Hash == h.last.Hash {
			h.at = time.Now()
		}
		return false
	}
	if ev.Kind == Reorg && h.last.Number != 0 && ev.Head == h.last {
		return false // already on that branch: nothing here is void
	}
	h.last, h.at = ev.Head, time.Now()
	for ch := range h.subs {
		send(ch, ev)
	}
	return true
}

// send puts ev in ch (capacity 1) without blocking: an event the
// subscriber has not taken is merged with ev. Only Publish sends, under
// the lock, so after a failed send the channel holds one event or none.
func send(ch chan Event, ev Event) {
	select {
	case ch <- ev:
		return
	default:
	}
	select {
	case old := <-ch:
		ev = merge(old, ev)
	default:
	}
	ch <- ev
}

// Subscribe returns a channel of the events published from now until ctx
// ends (then it is closed). It holds at most one event: a subscriber
// that falls behind gets the newest head, with any reorg it missed
// folded in.
func (h *Heads) Subscribe(ctx context.Context) <-chan Event {
	ch := make(chan Event, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan Event]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		close(ch)
		h.mu.Unlock()
	})
	return ch
}

// Subscribers counts the channels following the head now.
func (h *Heads) Subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Feed writes one chain's events into its Heads until ctx ends.
type Feed interface {
	Run(ctx context.Context, h *Heads) error
}
