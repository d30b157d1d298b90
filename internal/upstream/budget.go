package upstream

import (
	"context"
	"fmt"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Amplification is what an upstream answer costs in memory per byte read:
// the read buffer (which io.ReadAll grows by doubling) plus what is decoded
// from it (a subgraph record of ~70 bytes becomes ~120 bytes of structs and
// big.Ints). A Budget is charged this much per byte.
const Amplification = 4

// DefaultBudget is the memory, in bytes, that upstream answers may hold at
// once when nothing else is configured: within the 256 MiB the soft memory
// limit keeps beside the response cache (cmd/clamm-gateway tuneGC).
const DefaultBudget = 192 << 20

// Budget bounds the memory that upstream answers hold at once, across all
// the upstreams sharing it. Each byte of an upstream answer read (by the
// limit transport, limit.go) is charged
// Amplification bytes; the charge is held until the fill that read it ends
// (its Lease is released), or, outside any fill, until the body is closed.
//
// When the budget is spent, the oldest fill holding part of it waits for
// more and every other read fails at once with problem.ErrOverloaded (503
// OVERLOADED): had all of them waited, fills each holding a part could
// wait on each other for ever; had all of them failed, 64 fills reading
// together could all fail and none be served. Only one waits, the others
// give their part back, so the oldest always completes.
type Budget struct {
	mu      sync.Mutex
	freed   *sync.Cond
	left    int64
	max     int64
	seq     uint64
	holders map[*Lease]*holding
}

type holding struct {
	seq  uint64 // order of the lease's first charge: lower is older
	held int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget {
	b := &Budget{left: max, max: max, holders: map[*Lease]*holding{}}
	b.freed = sync.NewCond(&b.mu)
	return b
}

// take charges n to l, waiting only when l is the oldest holder and the
// rest of the budget could ever cover n.
func (b *Budget) take(l *Lease, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n > b.left {
		h := b.holders[l]
		if h == nil || n > b.max-h.held || !b.oldest(h) {
			return false
		}
		b.freed.Wait()
	}
	b.left -= n
	h := b.holders[l]
	if h == nil {
		b.seq++
		h = &holding{seq: b.seq}
		b.holders[l] = h
	}
	h.held += n
	return true
}

// oldest reports whether h is the earliest holding; b.mu is held.
func (b *Budget) oldest(h *holding) bool {
	for _, o := range b.holders {
		if o.seq < h.seq {
			return false
		}
	}
	return true
}

func (b *Budget) give(l *Lease, n int64) {
	b.mu.Lock()
	b.left = min(b.left+n, b.max)
	if h := b.holders[l]; h != nil {
		if h.held -= n; h.held <= 0 {
			delete(b.holders, l)
		}
	}
	b.mu.Unlock()
	b.freed.Broadcast()
}

// InUse is how much of the budget is charged now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.left
}

// Lease is one fill's account: what its upstream answers charged to
// budgets (their bytes, and what was decoded from them, live until the fill
// ends), and the fill's admission slot, if Admission.Admit gave it.
type Lease struct {
	mu   sync.Mutex
	held map[*Budget]int64
	// pending is what charges under way have claimed of the lease's own
	// bound before their budget answered (ChargeWithin).
	pending map[*Budget]int64
	done    bool
	slot    chan struct{} // nil: not admitted (a body's own lease, a test's)
}

type leaseKey struct{}

// NewLease returns a lease of its own, not carried by a context and holding
// no admission slot (an answer read outside any fill holds its charge until
// its body is closed).
func NewLease() *Lease { return &Lease{} }

// leaseFrom returns the lease ctx carries, or nil.
func leaseFrom(ctx context.Context) *Lease {
	l, _ := ctx.Value(leaseKey{}).(*Lease)
	return l
}

// Charge takes n from b on the lease's account, or fails with
// problem.ErrOverloaded when b has less than n left.
func (l *Lease) Charge(b *Budget, n int64) error { return l.ChargeWithin(b, n, 0) }

// ChargeWithin is Charge for a lease that may hold at most limit of b
// (0: no limit of its own): past it, it fails with problem.ErrTooLarge
// (502: the upstreams answered one fill more than it may read) before
// anything is taken from b, so one fill's answers can never spend the
// budget shared by all (which answered 503 OVERLOADED, as if the gateway
// were busy, to a hostile subgraph paging a statistics fill).
//
// The lease's own bound is claimed (pending) before b is asked, under the
// lease's lock: two reads of one fill charging at once cannot both pass
// it on what the lease held before either.
func (l *Lease) ChargeWithin(b *Budget, n, limit int64) error {
	l.mu.Lock()
	if limit > 0 && l.held[b]+l.pending[b]+n > limit {
		l.mu.Unlock()
		return fmt.Errorf("%w: one answer's upstream reads past %d bytes in all", problem.ErrTooLarge, limit/Amplification)
	}
	if l.pending == nil {
		l.pending = map[*Budget]int64{}
	}
	l.pending[b] += n
	l.mu.Unlock()
	taken := b.take(l, n)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[b] -= n
	if !taken {
		return problem.ErrOverloaded
	}
	if l.done { // released already (a body read after its fill ended)
		b.give(l, n)
		return nil
	}
	if l.held == nil {
		l.held = map[*Budget]int64{}
	}
	l.held[b] += n
	return nil
}

// Release gives back everything the lease holds and its admission slot.
// Releasing twice is harmless.
func (l *Lease) Release() {
	l.mu.Lock()
	held, slot, done := l.held, l.slot, l.done
	l.held, l.slot, l.done = nil, nil, true
	l.mu.Unlock()
	for b, n := range held {
		b.give(l, n)
	}
	if slot != nil && !done {
		<-slot
	}
}
