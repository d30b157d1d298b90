package replay

import (
	"context"
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
// the upstreams sharing it. Each byte read through a LimitTransport with a
// Budget is charged Amplification bytes; the charge is held until the fill
// that read it ends (its Lease is released), or, outside any fill, until the
// body is closed. When the budget is spent the read fails at once with
// problem.ErrOverloaded (503 OVERLOADED): waiting could deadlock fills that
// each hold part of it.
type Budget struct {
	mu   sync.Mutex
	left int64
	max  int64
}

// NewBudget returns a budget of max bytes.
func NewBudget(max int64) *Budget { return &Budget{left: max, max: max} }

func (b *Budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

func (b *Budget) give(n int64) {
	b.mu.Lock()
	b.left = min(b.left+n, b.max)
	b.mu.Unlock()
}

// InUse is how much of the budget is charged now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.max - b.left
}

// Lease holds what one fill's upstream answers charged to budgets: their
// bytes, and what was decoded from them, live until the fill ends.
type Lease struct {
	mu   sync.Mutex
	held map[*Budget]int64
	done bool
}

type leaseKey struct{}

// WithLease returns ctx carrying a new lease; release it when the work
// done under ctx has finished with its upstream answers.
func WithLease(ctx context.Context) (context.Context, *Lease) {
	l := &Lease{}
	return context.WithValue(ctx, leaseKey{}, l), l
}

func leaseFrom(ctx context.Context) *Lease {
	l, _ := ctx.Value(leaseKey{}).(*Lease)
	return l
}

// charge takes n from b on the lease's account.
func (l *Lease) charge(b *Budget, n int64) error {
	if !b.take(n) {
		return problem.ErrOverloaded
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done { // released already (a body read after its fill ended)
		b.give(n)
		return nil
	}
	if l.held == nil {
		l.held = map[*Budget]int64{}
	}
	l.held[b] += n
	return nil
}

// Release gives back everything the lease holds.
func (l *Lease) Release() {
	l.mu.Lock()
	held := l.held
	l.held, l.done = nil, true
	l.mu.Unlock()
	for b, n := range held {
		b.give(n)
	}
}
