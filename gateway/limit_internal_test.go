package gateway

import (
	"strconv"
	"testing"
	"time"
)

// Past maxBuckets clients, a new client does not sweep the whole table
// under the lock each time: at most one sweep per refill time, and the
// table stays bounded.
func TestRateLimiterTableFullSweepsOncePerRefill(t *testing.T) {
	t.Parallel()
	l := newRateLimiter(1, 10, false) // refills in 10 s
	now := time.Unix(1_700_000_000, 0)
	for i := range maxBuckets {
		l.allow("198.51."+strconv.Itoa(i), now)
	}
	for i := range 1000 {
		if ok, _ := l.allow("new-"+strconv.Itoa(i), now.Add(time.Duration(i)*time.Millisecond)); !ok {
			t.Fatalf("new client %d refused", i)
		}
	}
	if l.sweeps > 1 {
		t.Errorf("%d sweeps of a %d-entry table for 1000 new clients within one refill time", l.sweeps, maxBuckets)
	}
	if len(l.buckets) > maxBuckets {
		t.Errorf("table grew to %d", len(l.buckets))
	}
}
