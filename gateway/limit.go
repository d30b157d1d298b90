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
// burst. The table holds at most maxBuckets clients: when it is full,
// buckets idle long enough to be full again are swept, at most once per
// refill time (a sweep walks the whole table under the lock, so a flood of
// new addresses must not pay one per request), and while it stays full a
// new client takes the place of an arbitrary one (whose next request starts
// a full bucket: a flood of addresses gets around a per-address limit
// anyway; what matters is that memory and CPU stay bounded).
type rateLimiter struct {
	rate, burst float64
	trustXFF    bool

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
	sweeps    int // for tests
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

// client names the requester: the peer's IP, or with trustXFF the last
// X-Forwarded-For entry, the one the trusted proxy in front appended (only
// behind a proxy that appends it). Entries before it are whatever the
// client sent: keying on them let a client pick its own name.
func (l *rateLimiter) client(r *http.Request) string {
	if l.trustXFF {
		if vals := r.Header.Values("X-Forwarded-For"); len(vals) > 0 {
			last := vals[len(vals)-1]
			if i := strings.LastIndexByte(last, ','); i >= 0 {
				last = last[i+1:]
			}
			if ip := strings.TrimSpace(last); ip != "" {
				return ip
			}
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
		if len(l.buckets) >= maxBuckets && now.Sub(l.lastSweep) >= l.refill() {
			l.sweep(now)
		}
		if len(l.buckets) >= maxBuckets {
			for k := range l.buckets { // an arbitrary one: map order is random
				delete(l.buckets, k)
				break
			}
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

// refill is how long an empty bucket takes to be full.
func (l *rateLimiter) refill() time.Duration {
	return time.Duration(l.burst / l.rate * float64(time.Second))
}

// sweep forgets buckets that have refilled; l.mu is held.
func (l *rateLimiter) sweep(now time.Time) {
	l.sweeps++
	l.lastSweep = now
	full := l.refill()
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
}
