package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"sync/atomic"
	"time"
)

// Shared is an optional second tier behind the in-process one, shared by
// every replica of the gateway (internal/cache/redistier is the Redis
// implementation). The cache only touches it on a local miss or a stale
// local entry, never on a local hit.
//
// Values travel as records (see encodeRecord): the build time and the
// Codec's bytes, so a replica that adopts another's answer serves the same
// bytes and the same age.
//
// Every method may fail (Redis down, slow, full): the cache then carries on
// as if it had no second tier, filling from the upstreams itself.
type Shared interface {
	// Load returns the record stored under key; nil when there is none.
	Load(ctx context.Context, key string) ([]byte, error)
	// LoadOrLease returns the record stored under key; when there is none
	// it takes key's fill lease in the same step and returns it. Both nil:
	// another replica holds the lease and is filling.
	LoadOrLease(ctx context.Context, key string) ([]byte, Lease, error)
	// TryLease takes key's fill lease, or returns nil when another replica
	// holds it.
	TryLease(ctx context.Context, key string) (Lease, error)
	// Wait returns when a record for key may have been stored or its lease
	// released (a notice, or a poll interval passing), or with ctx's error.
	Wait(ctx context.Context, key string) error
}

// Lease is a replica's right to fill one key, held while it fills (the
// implementation renews it) and lost if the holder dies: it expires, and
// another replica takes over.
type Lease interface {
	// Store writes the record under the key for ttl, tells waiting
	// replicas, and gives the lease up.
	Store(ctx context.Context, record []byte, ttl time.Duration) error
	// Release gives the lease up without storing (a failed fill: errors
	// are never shared). Safe after Store and more than once.
	Release()
}

// Codec turns a cache's values into bytes for the Shared tier and back.
// Decode must reject anything it cannot fully trust: an undecodable record
// is a miss.
type Codec interface {
	Encode(v any) ([]byte, error)
	Decode(b []byte) (any, error)
}

// SharedStats counts what the Shared tier did for this cache.
type SharedStats struct {
	Hits        int64 // local misses answered fresh from the shared tier
	StaleHits   int64 // local misses answered stale from it (refresh started)
	Waits       int64 // times a fill waited for another replica's lease
	Leases      int64 // fills (and refreshes) done holding the fleet lease
	Undecodable int64 // records that did not decode: treated as misses
	Fallbacks   int64 // tier errors after which this replica went on alone
}

type sharedCounters struct {
	hits, staleHits, waits, leases, undecodable, fallbacks atomic.Int64
}

// SharedStats reports the shared tier's counters (zero without one).
func (c *Cache[V]) SharedStats() SharedStats {
	s := &c.shared
	return SharedStats{Hits: s.hits.Load(), StaleHits: s.staleHits.Load(), Waits: s.waits.Load(),
		Leases: s.leases.Load(), Undecodable: s.undecodable.Load(), Fallbacks: s.fallbacks.Load()}
}

// recordVersion leads every record; a record of another version (another
// release of the gateway sharing the Redis) is a miss, not a misreading.
const recordVersion = 2 // 2: answers carry their gzip bytes

// encodeRecord frames a value's bytes with the time it was built (Unix
// nanoseconds), from which every replica computes the same Age.
func encodeRecord(stored time.Time, payload []byte) []byte {
	b := make([]byte, 9, 9+len(payload))
	b[0] = recordVersion
	binary.BigEndian.PutUint64(b[1:], uint64(stored.UnixNano()))
	return append(b, payload...)
}

var errRecord = errors.New("cache: malformed shared record")

func decodeRecord(b []byte) (time.Time, []byte, error) {
	if len(b) < 9 || b[0] != recordVersion {
		return time.Time{}, nil, errRecord
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9]))), b[9:], nil
}

// adopt decodes a record from the shared tier and, if it is still within
// p's TTL and grace, stores it locally with its original build time and
// returns it as a Hit (fresh) or Stale.
func (c *Cache[V]) adopt(key string, p Policy, rec []byte) (result[V], bool) {
	stored, payload, err := decodeRecord(rec)
	var v any
	if err == nil {
		v, err = c.opts.Codec.Decode(payload)
	}
	val, ok := v.(V)
	if err != nil || !ok {
		c.shared.undecodable.Add(1)
		return result[V]{}, false
	}
	now := c.opts.Now()
	if stored.After(now) {
		stored = now // another replica's clock runs ahead: never a negative Age
	}
	age := now.Sub(stored)
	if age >= p.TTL+p.Grace {
		return result[V]{}, false // only a clock difference keeps such a record in Redis
	}
	c.setAt(key, val, p, stored)
	c.markRecord(key, stored, recordID(rec))
	if age < p.TTL {
		c.shared.hits.Add(1)
		return result[V]{v: val, stored: stored, status: Hit}, true
	}
	c.shared.staleHits.Add(1)
	return result[V]{v: val, stored: stored, status: Stale}, true
}

// viaShared is a fill (or, with refresh, a background refresh) when the
// cache has a Shared tier. It returns done=false when the tier failed and
// the caller should fill on its own.
//
// A miss: take the stored record if any; else take the lease and fill;
// else wait for the holder and look again (a holder that dies lets its
// lease expire, and the next look takes it).
//
// A refresh: adopt a fresher record another replica stored; else refresh
// only while holding the lease, so the fleet makes one refresh per key;
// when another replica holds it, keep serving the local stale entry.
func (c *Cache[V]) viaShared(ctx context.Context, key string, p Policy, fill func(context.Context) (V, error), refresh bool) (result[V], bool, error) {
	sh := c.opts.Shared
	if refresh {
		rec, err := sh.Load(ctx, key)
		if err != nil {
			c.shared.fallbacks.Add(1)
			return result[V]{}, false, nil
		}
		if e, ok := c.peekEntry(key); rec != nil && (!ok || e.rec != recordID(rec)) {
			// Another replica's newer answer. The record this entry came
			// from is not one: adopted again it would count as built now
			// (a record from a clock ahead is) and never age.
			if r, ok := c.adopt(key, p, rec); ok && r.status == Hit {
				return r, true, nil
			}
		}
		lease, err := sh.TryLease(ctx, key)
		if err != nil {
			c.shared.fallbacks.Add(1)
			return result[V]{}, false, nil
		}
		if lease != nil {
			r, err := c.fillLocal(ctx, fillJob[V]{key, p, fill, true}, lease)
			return r, true, err
		}
		if e, ok := c.peekEntry(key); ok && c.opts.Now().Sub(e.stored) < p.TTL+p.Grace {
			return result[V]{v: e.v, stored: e.stored, status: Stale}, true, nil
		}
		// The local entry is gone: wait like a miss.
	}
	for {
		rec, lease, err := sh.LoadOrLease(ctx, key)
		if err != nil {
			c.shared.fallbacks.Add(1)
			return result[V]{}, false, nil
		}
		if rec != nil {
			if r, ok := c.adopt(key, p, rec); ok {
				return r, true, nil
			}
			// Undecodable or expired by our clock: a miss; the lease
			// holder overwrites it.
			if lease, err = sh.TryLease(ctx, key); err != nil {
				c.shared.fallbacks.Add(1)
				return result[V]{}, false, nil
			}
		}
		if lease != nil {
			r, err := c.fillLocal(ctx, fillJob[V]{key, p, fill, refresh}, lease)
			return r, true, err
		}
		c.shared.waits.Add(1)
		if err := sh.Wait(ctx, key); err != nil {
			if ctx.Err() != nil {
				return result[V]{}, true, ctx.Err()
			}
			c.shared.fallbacks.Add(1)
			return result[V]{}, false, nil
		}
	}
}

// share writes a fill to the shared tier under the lease it was made
// with, then gives the lease up. A value that does not encode, or a tier
// that refuses the write, leaves Redis without it: the replica still
// serves its own fill.
func (c *Cache[V]) share(ctx context.Context, key string, lease Lease, r result[V], p Policy) {
	v, stored := r.v, r.stored
	defer lease.Release()
	payload, err := c.opts.Codec.Encode(v)
	if err != nil {
		return
	}
	rec := encodeRecord(stored, payload)
	if err := lease.Store(ctx, rec, p.TTL+p.Grace); err != nil {
		c.shared.fallbacks.Add(1)
		return
	}
	c.markRecord(key, stored, recordID(rec))
}

// recordID identifies a record's bytes (FNV-1a, 64 bits).
func recordID(rec []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(rec)
	return h.Sum64() | 1 // never 0, which means none
}

// markRecord notes on key's entry built at stored the record it is.
func (c *Cache[V]) markRecord(key string, stored time.Time, id uint64) {
	c.mu.Lock()
	if e := c.cur[key]; e != nil && e.stored.Equal(stored) {
		e.rec = id
	}
	c.mu.Unlock()
}
