package upstream

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// MaxBackoff bounds how long an upstream's Retry-After keeps the gateway
// away: a broken or hostile upstream saying "a year" must not wedge a chain.
const MaxBackoff = 5 * time.Minute

// BackoffTransport honours an upstream's refusal: a 429 or 503 answer with
// a Retry-After becomes a *problem.BackoffError carrying the wait (so the
// client gets the upstream's Retry-After, not the gateway's default), and
// until the wait has run out every request to that upstream fails the same
// way at once, without being sent: the refusing upstream is not hit by every
// request again. One transport per upstream; a refusal without Retry-After
// passes through unchanged.
type BackoffTransport struct {
	RT  http.RoundTripper // nil: http.DefaultTransport
	Now func() time.Time  // nil: time.Now

	mu     sync.Mutex
	until  time.Time
	status int
}

// CloseIdleConnections closes the idle connections of the transport it
// wraps (see limitTransport's).
func (b *BackoffTransport) CloseIdleConnections() { closeIdle(b.RT) }

// RoundTrip implements http.RoundTripper.
func (b *BackoffTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	now := b.now()
	b.mu.Lock()
	until, status := b.until, b.status
	b.mu.Unlock()
	if now.Before(until) {
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, &problem.BackoffError{Status: status, Wait: until.Sub(now)}
	}
	rt := b.RT
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(r)
	if err != nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return resp, err
	}
	// The wait counts from the answer's receipt (RFC 9110 10.2.3), not
	// from the request's sending: a refusal slow to arrive keeps the
	// upstream away for the whole of it.
	now = b.now()
	wait, ok := retryAfter(resp.Header.Get("Retry-After"), now)
	if !ok {
		return resp, nil
	}
	// The gate closes before the body is drained: a request started
	// meanwhile is held back too.
	b.mu.Lock()
	if u := now.Add(wait); u.After(b.until) {
		b.until, b.status = u, resp.StatusCode
	}
	b.mu.Unlock()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // keep the connection reusable
	resp.Body.Close()
	return nil, &problem.BackoffError{Status: resp.StatusCode, Wait: wait}
}

func (b *BackoffTransport) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// retryAfter reads a Retry-After value (delay seconds or an HTTP date),
// at least a second and at most MaxBackoff.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	} else {
		return 0, false
	}
	return min(max(d, time.Second), MaxBackoff), true
}
