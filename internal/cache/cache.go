// Package cache is the gateway's in-memory cache: go-cache for storage with
// expiry, singleflight so one fill per key serves every waiter, and what
// go-cache lacks: a bound on entries and bytes, and stale serving.
//
// Reads go to the cache's own index of current entries (kept for the
// bounds) rather than through go-cache's Get, which reads the clock on
// every call: a hit already knows the time, and an entry go-cache has not
// yet expired is judged by its age anyway. go-cache's janitor still drops
// expired entries, and its eviction callback keeps the index in step.
//
// Per entry, a Policy gives a fresh TTL and a Grace after it:
//
//   - fresh (age < TTL): served as a HIT;
//   - stale (TTL <= age < TTL+Grace): served at once as STALE while one
//     background refresh per key runs (stale-while-revalidate); if the
//     refresh fails the stale value keeps being served until the grace ends
//     (stale-if-error);
//   - beyond TTL+Grace, or absent: a MISS, filled while the caller waits.
//
// Fills run on a context detached from the caller that started them, with
// their own deadline: a client that disconnects must not fail the fill for
// the others waiting on the same key. Errors are returned, never stored.
//
// With a Shared tier (Options.Shared, see shared.go), several replicas
// share one store: a local miss reads it before any upstream, a fill
// writes to it, and a fleet-wide lease makes one fill (and one background
// refresh) per key across all replicas. Local hits never touch it.
//
// Eviction: when a write would exceed MaxEntries or MaxBytes, the entries
// written longest ago are dropped first (FIFO by last write; reads do not
// reorder, so a hit takes no write lock).
package cache

import (
	"container/list"
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	gocache "github.com/patrickmn/go-cache"
	"golang.org/x/sync/singleflight"
)

// Status says how a value was obtained, for the X-Cache header and logs.
type Status string

const (
	Hit   Status = "HIT"   // fresh, from the store
	Stale Status = "STALE" // past its TTL, within grace; a refresh is under way
	Miss  Status = "MISS"  // filled by this call or a shared in-flight fill
)

// Policy is how long an entry is fresh, and how long after that it may
// still be served while being refreshed or while refreshes fail.
type Policy struct {
	TTL   time.Duration
	Grace time.Duration
}

// Options configure a Cache.
type Options struct {
	// MaxEntries bounds the entries (oldest write evicted first); required.
	MaxEntries int
	// MaxBytes bounds the sum of Size over entries; 0 means no byte bound.
	MaxBytes int64
	// Size measures an entry; nil counts every entry as 0 bytes.
	Size func(any) int64
	// FillTimeout is the deadline of one fill, independent of any caller;
	// required.
	FillTimeout time.Duration
	// OnRefreshError, if set, hears about failed background refreshes.
	OnRefreshError func(key string, err error)
	// Brief, if set, says of a value just filled whether it may be kept
	// only briefly, and for how long: a degraded answer (one that left
	// add-ons unknown because their reads failed) is served to the fill's
	// waiters, kept locally for that long at most (never past its own
	// policy, never served stale) and not written to the shared tier.
	Brief func(any) (time.Duration, bool)
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time
	// Shared, if set, is the second tier replicas share; Codec (required
	// with it) turns values into its bytes and back.
	Shared Shared
	Codec  Codec
}

// entry is what go-cache stores; pointer identity tells a current entry
// from one already replaced when go-cache reports an eviction.
type entry[V any] struct {
	v      V
	stored time.Time
	size   int64
	elem   *list.Element
	// until, when set, is when a brief entry (Options.Brief) stops being
	// served, whatever the caller's policy.
	until time.Time
	// rec identifies the shared-tier record this entry came from or was
	// written as (recordID; 0: none), so a refresh does not take the
	// record it already holds for a fresh one.
	rec uint64
}

// Cache maps string keys to values of type V.
type Cache[V any] struct {
	store *gocache.Cache
	group singleflight.Group
	opts  Options
	fills atomic.Int64
	// running counts fills and background refreshes under way, so Drain
	// can wait for them at shutdown.
	running sync.WaitGroup
	// shared counts what the Shared tier did.
	shared sharedCounters

	mu    sync.RWMutex
	order *list.List // of keys, oldest write first
	cur   map[string]*entry[V]
	bytes int64
}

// New returns an empty cache. go-cache's janitor drops expired entries once
// a minute; their bytes count against MaxBytes until then.
//
// MaxEntries and FillTimeout are required: every caller states its bound
// (a constant of its package, or validated configuration), so a zero is a
// wiring mistake and New panics naming the field rather than picking a
// bound of its own. So does Shared without a Codec.
func New[V any](opts Options) *Cache[V] {
	if opts.Shared != nil && opts.Codec == nil {
		panic("cache: Options.Shared without a Codec")
	}
	if opts.MaxEntries <= 0 {
		panic("cache: Options.MaxEntries must be positive")
	}
	if opts.FillTimeout <= 0 {
		panic("cache: Options.FillTimeout must be positive")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Cache[V]{store: gocache.New(gocache.NoExpiration, time.Minute), opts: opts, order: list.New(), cur: map[string]*entry[V]{}}
	c.store.OnEvicted(func(key string, v any) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if e, ok := v.(*entry[V]); ok && c.cur[key] == e {
			c.forget(key, e)
		}
	})
	return c
}

// forget drops key from the accounting; c.mu is held.
func (c *Cache[V]) forget(key string, e *entry[V]) {
	delete(c.cur, key)
	c.order.Remove(e.elem)
	c.bytes -= e.size
}

// Drain waits until the fills and background refreshes under way have
// ended (their answers stored, their shared-tier leases given up), or ctx
// ends. Call it at shutdown once no request can start another, before
// closing the shared tier: a refresh cut off holds its fleet lease until
// it expires.
func (c *Cache[V]) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { c.running.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fills counts fills started since creation (background refreshes included).
func (c *Cache[V]) Fills() int64 { return c.fills.Load() }

// Len is the number of stored entries.
func (c *Cache[V]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.cur)
}

// Bytes is the sum of the stored entries' sizes.
func (c *Cache[V]) Bytes() int64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bytes
}

// Peek returns a stored value and its age now, without filling. The age
// may be past any policy's TTL and grace (until the janitor drops the
// entry): callers judge it.
func (c *Cache[V]) Peek(key string) (V, time.Duration, bool) {
	return c.PeekAt(key, c.opts.Now())
}

// PeekAt is Peek with the time given, for a caller that has just read the
// clock.
func (c *Cache[V]) PeekAt(key string, now time.Time) (V, time.Duration, bool) {
	c.mu.RLock()
	e := c.cur[key]
	c.mu.RUnlock()
	if e == nil || e.over(now) {
		var zero V
		return zero, 0, false
	}
	return e.v, now.Sub(e.stored), true
}

// over: a brief entry past its time.
func (e *entry[V]) over(now time.Time) bool { return !e.until.IsZero() && !now.Before(e.until) }

// peekEntry returns key's current entry.
func (c *Cache[V]) peekEntry(key string) (*entry[V], bool) {
	c.mu.RLock()
	e := c.cur[key]
	c.mu.RUnlock()
	if e != nil && e.over(c.opts.Now()) {
		return nil, false
	}
	return e, e != nil
}

// result is what one fill hands every caller waiting on it: the value, when
// it was built (by this replica or, through the shared tier, another), and
// how it was obtained.
type result[V any] struct {
	v      V
	stored time.Time
	status Status
}

// Get returns the value under key and its age, filling it on a miss and
// refreshing it in the background when stale. If ctx ends before a miss is
// filled, Get returns ctx's error and the fill goes on for other waiters.
//
// A miss filled here (or by a fill this call joined) is reported as Miss
// with age 0; one answered from the shared tier as Hit or Stale with the
// age of the other replica's fill.
func (c *Cache[V]) Get(ctx context.Context, key string, p Policy, fill func(context.Context) (V, error)) (V, Status, time.Duration, error) {
	if v, age, ok := c.Peek(key); ok && age < p.TTL+p.Grace {
		if age < p.TTL {
			return v, Hit, age, nil
		}
		c.group.DoChan(key, c.filler(ctx, key, p, fill, true)) // one refresh per key; nobody waits
		return v, Stale, age, nil
	}
	ch := c.group.DoChan(key, c.filler(ctx, key, p, fill, false))
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero V
			return zero, Miss, 0, r.Err
		}
		res := r.Val.(result[V])
		switch res.status {
		case Hit:
			return res.v, Hit, max(0, c.opts.Now().Sub(res.stored)), nil
		case Stale:
			// Adopted stale from the shared tier: refresh it, as a local
			// stale entry would be (the fill above has left the group).
			c.group.DoChan(key, c.filler(ctx, key, p, fill, true))
			return res.v, Stale, max(0, c.opts.Now().Sub(res.stored)), nil
		}
		return res.v, Miss, 0, nil
	case <-ctx.Done():
		var zero V
		return zero, Miss, 0, ctx.Err()
	}
}

func (c *Cache[V]) filler(ctx context.Context, key string, p Policy, fill func(context.Context) (V, error), refresh bool) func() (any, error) {
	return func() (any, error) {
		c.running.Add(1)
		defer c.running.Done()
		// A miss that queued behind a fill that just stored the key finds it here.
		if e, ok := c.peekEntry(key); ok && c.opts.Now().Sub(e.stored) < p.TTL {
			return result[V]{v: e.v, stored: e.stored, status: Miss}, nil
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.FillTimeout)
		defer cancel()
		if c.opts.Shared != nil {
			if r, done, err := c.viaShared(fctx, key, p, fill, refresh); done {
				if err != nil {
					return nil, err
				}
				return r, nil
			}
		}
		r, err := c.fillLocal(fctx, fillJob[V]{key, p, fill, refresh}, nil)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// fillJob is one fill to run: the key and policy it stores under, the fill,
// and whether it refreshes a stale entry (its failure is then reported).
type fillJob[V any] struct {
	key     string
	p       Policy
	fill    func(context.Context) (V, error)
	refresh bool
}

// fillLocal runs fill, stores a success locally and, holding lease, in the
// shared tier. Errors are returned, never stored anywhere.
func (c *Cache[V]) fillLocal(ctx context.Context, j fillJob[V], lease Lease) (result[V], error) {
	key, p, fill, refresh := j.key, j.p, j.fill, j.refresh
	c.fills.Add(1)
	if lease != nil {
		c.shared.leases.Add(1)
	}
	v, err := safeFill(ctx, fill)
	if err != nil {
		if lease != nil {
			lease.Release()
		}
		if refresh && c.opts.OnRefreshError != nil {
			c.opts.OnRefreshError(key, err)
		}
		return result[V]{}, err
	}
	stored := c.opts.Now()
	if d, brief := c.brief(v, p); brief {
		c.setBrief(key, v, Policy{TTL: d}, stored)
		if lease != nil {
			lease.Release() // not the shared tier's to keep
		}
		return result[V]{v: v, stored: stored, status: Miss}, nil
	}
	c.setAt(key, v, p, stored)
	if lease != nil {
		c.share(ctx, key, lease, result[V]{v: v, stored: stored}, p)
	}
	return result[V]{v: v, stored: stored, status: Miss}, nil
}

// safeFill turns a panic in fill into an error: singleflight.DoChan re-raises
// panics on a fresh goroutine, which would kill the process.
func safeFill[V any](ctx context.Context, fill func(context.Context) (V, error)) (v V, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cache fill panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return fill(ctx)
}

// brief is Options.Brief's answer for v, bounded by p.TTL.
func (c *Cache[V]) brief(v V, p Policy) (time.Duration, bool) {
	if c.opts.Brief == nil {
		return 0, false
	}
	d, ok := c.opts.Brief(v)
	return min(d, p.TTL), ok
}

// setBrief stores a brief value: served for p.TTL at most, then gone
// (a d of 0 keeps it not at all).
func (c *Cache[V]) setBrief(key string, v V, p Policy, stored time.Time) {
	c.setAt(key, v, p, stored)
	c.mu.Lock()
	if e := c.cur[key]; e != nil && e.stored.Equal(stored) {
		e.until = stored.Add(p.TTL)
	}
	c.mu.Unlock()
}

// Set stores v under key, evicting the oldest writes first when a bound
// would be exceeded. A value larger than MaxBytes on its own is not stored.
func (c *Cache[V]) Set(key string, v V, p Policy) { c.setAt(key, v, p, c.opts.Now()) }

// setAt is Set for a value built at stored (now, or another replica's
// build time): it expires TTL+Grace after stored.
func (c *Cache[V]) setAt(key string, v V, p Policy, stored time.Time) {
	keep := p.TTL + p.Grace - c.opts.Now().Sub(stored)
	var size int64
	if c.opts.Size != nil {
		size = c.opts.Size(v)
	}
	if (c.opts.MaxBytes > 0 && size > c.opts.MaxBytes) || keep <= 0 {
		return // too large to keep, or not meant to be kept (0 would mean "never expire" to go-cache)
	}
	e := &entry[V]{v: v, stored: stored, size: size}
	var evict []string
	c.mu.Lock()
	if old, ok := c.cur[key]; ok {
		c.forget(key, old)
	}
	for c.order.Len() > 0 && (len(c.cur) >= c.opts.MaxEntries || (c.opts.MaxBytes > 0 && c.bytes+size > c.opts.MaxBytes)) {
		k := c.order.Front().Value.(string)
		c.forget(k, c.cur[k])
		evict = append(evict, k)
	}
	e.elem = c.order.PushBack(key)
	c.cur[key] = e
	c.bytes += size
	c.store.Set(key, e, keep)
	c.mu.Unlock()
	// Outside c.mu: go-cache calls OnEvicted, which takes it; the entries
	// are already forgotten, so the callback finds nothing to do.
	for _, k := range evict {
		c.store.Delete(k)
	}
}

// EvictIf drops, from this replica's store, every entry drop names (the
// shared tier keeps its records, which readers judge themselves), and
// reports how many. It scans every entry: for rare events (a chain's
// reorg voids the answers read above its fork), not for a hit's path.
func (c *Cache[V]) EvictIf(drop func(key string, v V) bool) int {
	var gone []string
	c.mu.Lock()
	for k, e := range c.cur {
		if drop(k, e.v) {
			c.forget(k, e)
			gone = append(gone, k)
		}
	}
	c.mu.Unlock()
	// Outside c.mu, as in setAt: go-cache's callback takes it.
	for _, k := range gone {
		c.store.Delete(k)
	}
	return len(gone)
}
