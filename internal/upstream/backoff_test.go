package upstream

import (
	"net/http"
	"testing"
	"time"
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
