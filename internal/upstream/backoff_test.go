package upstream

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Retry-After in seconds or as an HTTP date, at least 1 s, at most
// MaxBackoff; anything else is no back-off at all.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"30", 30 * time.Second, true},
		{"0", time.Second, true},
		{"31536000", MaxBackoff, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), time.Second, true},
		{"", 0, false}, {"-5", 0, false}, {"soon", 0, false}, {"1e9", 0, false},
	} {
		if got, ok := retryAfter(c.v, now); got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

// rtFunc is an http.RoundTripper of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A Retry-After counts from the refusal's receipt, not from the
// request's sending (RFC 9110 10.2.3): a 429 "Retry-After: 3" that took
// 2 s to arrive keeps every request from the upstream for 3 s after it
// arrived, each refused at once without being sent; then they go again.
func TestBackoffCountsFromTheRefusalsReceipt(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	clock := t0
	sent := 0
	b := &BackoffTransport{Now: func() time.Time { return clock }, RT: rtFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		if sent > 1 {
			return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
		}
		clock = clock.Add(2 * time.Second) // the refusal arrives late
		return &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"3"}}, Body: http.NoBody, Request: r}, nil
	})}
	ask := func(at time.Duration) (*http.Response, error) {
		clock = t0.Add(at)
		req, _ := http.NewRequest(http.MethodPost, "http://node.invalid/", http.NoBody)
		return b.RoundTrip(req)
	}
	var be *problem.BackoffError
	if _, err := ask(0); !errors.As(err, &be) || be.Wait != 3*time.Second {
		t.Fatalf("the refusal: %v, want a back-off of 3s", err)
	}
	for _, at := range []time.Duration{2 * time.Second, 4 * time.Second, 4999 * time.Millisecond} {
		if _, err := ask(at); !errors.As(err, &be) || be.Wait != 5*time.Second-at {
			t.Errorf("a request at %v: %v, want refused for %v", at, err, 5*time.Second-at)
		}
	}
	if sent != 1 {
		t.Fatalf("%d requests reached the upstream during the back-off, want the refused one alone", sent)
	}
	if resp, err := ask(5 * time.Second); err != nil || resp.StatusCode != http.StatusOK || sent != 2 {
		t.Fatalf("after the back-off: %v %v (%d sent)", resp, err, sent)
	}
}
