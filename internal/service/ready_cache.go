package service

import (
	"context"
	"sync"
	"time"
)

// ReadinessCache shares readiness probes between /readyz requests: while a
// probe runs, other requests wait for it instead of starting their own,
// and its result answers for TTL. 400 concurrent probes put 800 requests
// on the upstreams before; now they cost one probe. The probe runs under
// its own deadline, detached from the request that started it, so a prober
// that hangs up does not fail the others.
type ReadinessCache struct {
	svc     *Service
	ttl     time.Duration
	timeout time.Duration

	mu      sync.Mutex
	at      time.Time
	ready   bool
	chains  []ChainReadiness
	running chan struct{} // closed when the probe in flight is done; nil when none
}

// NewReadinessCache returns a cache of svc's readiness; a result serves
// for ttl, and a probe is cut at timeout.
func NewReadinessCache(svc *Service, ttl, timeout time.Duration) *ReadinessCache {
	return &ReadinessCache{svc: svc, ttl: ttl, timeout: timeout}
}

// Readiness is Service.Readiness, shared and cached. A caller whose ctx
// ends first gets not ready.
func (c *ReadinessCache) Readiness(ctx context.Context, maxLag uint64) (bool, []ChainReadiness) {
	c.mu.Lock()
	if c.chains != nil && time.Since(c.at) < c.ttl {
		ready, chains := c.ready, c.chains
		c.mu.Unlock()
		return ready, chains
	}
	done := c.running
	if done == nil {
		done = make(chan struct{})
		c.running = done
		go c.probe(context.WithoutCancel(ctx), maxLag, done)
	}
	c.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ready, c.chains
}

func (c *ReadinessCache) probe(ctx context.Context, maxLag uint64, done chan struct{}) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	ready, chains := c.svc.Readiness(ctx, maxLag)
	c.mu.Lock()
	c.ready, c.chains, c.at, c.running = ready, chains, time.Now(), nil
	c.mu.Unlock()
	close(done)
}
