// Package cache is the gateway's in-memory TTL cache: go-cache for storage,
// singleflight so one fill per key serves every waiter, and a bound on the
// number of entries (go-cache has none).
//
// Fills run on a context detached from the caller that started them, with
// their own deadline: a client that disconnects must not fail the fill for
// the others waiting on the same key. Errors are returned, never stored.
package cache

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	gocache "github.com/patrickmn/go-cache"
	"golang.org/x/sync/singleflight"
)

// Status says how a value was obtained, for the X-Cache header and logs.
type Status string

const (
	Hit  Status = "HIT"  // served from the store
	Miss Status = "MISS" // filled by this call or a shared in-flight fill
)

// Options configure a Cache.
type Options struct {
	// MaxEntries bounds the store. When a Set would exceed it, expired
	// entries are purged first; if still full, entries are evicted in
	// Go's map iteration order (effectively random) down to 90% of the bound.
	MaxEntries int
	// FillTimeout is the deadline of one fill, independent of any caller.
	FillTimeout time.Duration
}

// Cache maps string keys to values of type V.
type Cache[V any] struct {
	store *gocache.Cache
	group singleflight.Group
	opts  Options
	fills atomic.Int64
}

// New returns an empty cache. go-cache's janitor runs once a minute to drop
// expired entries.
func New[V any](opts Options) *Cache[V] {
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = 10000
	}
	if opts.FillTimeout <= 0 {
		opts.FillTimeout = 30 * time.Second
	}
	return &Cache[V]{store: gocache.New(gocache.NoExpiration, time.Minute), opts: opts}
}

// Fills counts fills started since creation: what tests use to prove coalescing.
func (c *Cache[V]) Fills() int64 { return c.fills.Load() }

// Len is the number of stored entries, expired ones included until purged.
func (c *Cache[V]) Len() int { return c.store.ItemCount() }

// Peek returns a stored, unexpired value without filling.
func (c *Cache[V]) Peek(key string) (V, bool) {
	if v, ok := c.store.Get(key); ok {
		return v.(V), true
	}
	var zero V
	return zero, false
}

// Get returns the value under key, filling it on a miss. Concurrent misses
// for one key share a single fill. A successful fill is stored for ttl; a
// failed one is not stored. If ctx ends first, Get returns ctx's error and
// the fill goes on for the other waiters.
func (c *Cache[V]) Get(ctx context.Context, key string, ttl time.Duration, fill func(context.Context) (V, error)) (V, Status, error) {
	if v, ok := c.Peek(key); ok {
		return v, Hit, nil
	}
	ch := c.group.DoChan(key, func() (any, error) {
		// A fill that started just after another stored the key finds it here.
		if v, ok := c.Peek(key); ok {
			return v, nil
		}
		c.fills.Add(1)
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.FillTimeout)
		defer cancel()
		v, err := safeFill(fctx, fill)
		if err != nil {
			return nil, err
		}
		c.set(key, v, ttl)
		return v, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			var zero V
			return zero, Miss, r.Err
		}
		return r.Val.(V), Miss, nil
	case <-ctx.Done():
		var zero V
		return zero, Miss, ctx.Err()
	}
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

// Set stores v under key for ttl, outside any fill.
func (c *Cache[V]) Set(key string, v V, ttl time.Duration) { c.set(key, v, ttl) }

func (c *Cache[V]) set(key string, v V, ttl time.Duration) {
	if c.store.ItemCount() >= c.opts.MaxEntries {
		c.store.DeleteExpired()
		if n := c.store.ItemCount(); n >= c.opts.MaxEntries {
			excess := n - c.opts.MaxEntries*9/10
			for k := range c.store.Items() {
				if excess <= 0 {
					break
				}
				c.store.Delete(k)
				excess--
			}
		}
	}
	c.store.Set(key, v, ttl)
}
