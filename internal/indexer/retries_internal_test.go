package indexer

import (
	"errors"
	"testing"
	"time"
)

// A failure after the index moved on waits the least pause again, not
// the grown one of the failures before it.
func TestRetriesStartAgainAfterProgress(t *testing.T) {
	var r retries
	boom := errors.New("boom")
	r.progressed(100)
	for _, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		r.progressed(100) // no progress: the pause grows
		if got, _ := r.next(boom, time.Millisecond); got != want {
			t.Fatalf("pause %v, want %v", got, want)
		}
	}
	r.progressed(5000)
	if got, _ := r.next(boom, time.Millisecond); got != time.Second {
		t.Errorf("after progress: pause %v, want 1s", got)
	}
}
