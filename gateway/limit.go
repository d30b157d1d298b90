package gateway

import (
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// rateLimiter is a token bucket per client: rate tokens a second, up to
// burst. Buckets idle long enough to be full again are forgotten when the
// table grows, so a flood of addresses cannot grow it without bound.
type rateLimiter struct {
	rate, burst float64
	trustXFF    bool

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

const maxBuckets = 100_000

func newRateLimiter(perSecond float64, burst int, trustXFF bool) *rateLimiter {
	if burst < 1 {
		burst = 1
	}
	return &rateLimiter{rate: perSecond, burst: float64(burst), trustXFF: trustXFF, buckets: map[string]*bucket{}}
}

// client names the requester: the peer's IP, or with trustXFF the first
// X-Forwarded-For entry (only behind a proxy that sets it).
func (l *rateLimiter) client(r *http.Request) string {
	if l.trustXFF {
		if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
			first, _, _ := strings.Cut(xff, ",")
			return strings.TrimSpace(first)
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// allow takes a token for the client, or says how long until one is there.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxBuckets {
			l.sweep(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// sweep forgets buckets that have refilled; l.mu is held.
func (l *rateLimiter) sweep(now time.Time) {
	full := time.Duration(l.burst / l.rate * float64(time.Second))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
}
