// Package eventually waits in a test for something another goroutine or
// process brings about (a background refresh, a lease taken over, a Redis
// node promoted), polling with a deadline. The deadline guards against a
// hang and bounds nothing under test: a broken test fails naming what it
// waited for instead of stalling until go test's timeout, and a loaded
// machine only makes the wait longer.
package eventually

import (
	"testing"
	"time"
)

// Deadline is how long True waits before it fails the test.
const Deadline = 30 * time.Second

// maxInterval caps the wait between two polls: a cheap condition is seen
// within a millisecond at first, an expensive one (a redis-cli call) is not
// run in a busy loop.
const maxInterval = 50 * time.Millisecond

// True polls cond until it holds, failing t with what it waited for when
// it has not after Deadline. cond runs on the test's goroutine, so it may
// call t.Fatal itself.
func True(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Deadline, what, cond)
}

// Within is True with a deadline of its own, for what a loaded machine
// may keep from happening for longer than Deadline by the nature of the
// thing awaited (a Redis Sentinel's failover: an attempt that times out
// is tried again only after twice its failover timeout, and a sentinel
// whose timer ran late pauses 30 s in TILT mode).
func Within(t testing.TB, deadline time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for wait := time.Millisecond; !cond(); wait = min(2*wait, maxInterval) {
		if time.Now().After(end) {
			t.Fatalf("waited %s for: %s", deadline, what)
		}
		time.Sleep(wait)
	}
}
