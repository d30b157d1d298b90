package eventually_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

// True returns once the condition holds, having polled until then.
func TestTrueWaitsForTheCondition(t *testing.T) {
	var polls atomic.Int32
	eventually.True(t, "the third poll", func() bool { return polls.Add(1) == 3 })
	if n := polls.Load(); n != 3 {
		t.Fatalf("%d polls", n)
	}
}

// A condition that never holds fails the test after the deadline, naming
// what was awaited (in a bubble: the deadline passes on the fake clock).
func TestTrueFailsAfterTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{TB: t}
		start := time.Now()
		done := make(chan struct{})
		go func() {
			defer close(done)
			eventually.True(rec, "what never comes", func() bool { return false })
		}()
		<-done
		if rec.failed != "waited 30s for: what never comes" || time.Since(start) < eventually.Deadline {
			t.Fatalf("failed %q after %s", rec.failed, time.Since(start))
		}
	})
}

// recorder records Fatalf instead of failing, and ends the goroutine as
// Fatalf does.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
