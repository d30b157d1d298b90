package cache

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func TestConcurrentMissesFillOnce(t *testing.T) {
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute})
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]int, 100)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, _, err := c.Get(context.Background(), "k", time.Minute, func(context.Context) (int, error) {
				<-release
				return 42, nil
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}(i)
	}
	close(release)
	wg.Wait()
	if c.Fills() != 1 {
		t.Fatalf("fills %d, want 1", c.Fills())
	}
	for _, v := range results {
		if v != 42 {
			t.Fatalf("got %d", v)
		}
	}
}

// The first caller's context ends mid-fill: it gets its own error, the fill
// goes on with its detached context, and the other waiter gets the value.
func TestCancelledFirstWaiterDoesNotFailOthers(t *testing.T) {
	c := New[string](Options{MaxEntries: 10, FillTimeout: time.Minute})
	started := make(chan struct{})
	release := make(chan struct{})
	fill := func(ctx context.Context) (string, error) {
		close(started)
		<-release
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "ok", nil
	}
	ctx1, cancel1 := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx1, "k", time.Minute, fill)
		first <- err
	}()
	<-started
	second := make(chan string, 1)
	go func() {
		v, _, err := c.Get(context.Background(), "k", time.Minute, fill)
		if err != nil {
			t.Error(err)
		}
		second <- v
	}()
	cancel1()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first waiter: %v", err)
	}
	close(release)
	if v := <-second; v != "ok" {
		t.Fatalf("second waiter got %q", v)
	}
	if v, ok := c.Peek("k"); !ok || v != "ok" {
		t.Fatal("value not stored")
	}
}

func TestErrorsAreNotStored(t *testing.T) {
	c := New[int](Options{MaxEntries: 10})
	boom := errors.New("boom")
	if _, _, err := c.Get(context.Background(), "k", time.Minute, func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, ok := c.Peek("k"); ok {
		t.Fatal("error result stored")
	}
	v, st, err := c.Get(context.Background(), "k", time.Minute, func(context.Context) (int, error) { return 7, nil })
	if err != nil || v != 7 || st != Miss {
		t.Fatalf("%v %v %v", v, st, err)
	}
	if _, st, _ := c.Get(context.Background(), "k", time.Minute, nil); st != Hit {
		t.Fatalf("status %v", st)
	}
}

func TestPanickingFillBecomesError(t *testing.T) {
	c := New[int](Options{MaxEntries: 10})
	_, _, err := c.Get(context.Background(), "k", time.Minute, func(context.Context) (int, error) { panic("bad") })
	if err == nil {
		t.Fatal("no error")
	}
}

func TestEntryBound(t *testing.T) {
	c := New[int](Options{MaxEntries: 100})
	for i := 0; i < 1000; i++ {
		c.Set(string(rune('a'+i%26))+string(rune(i)), i, time.Minute)
	}
	if n := c.Len(); n > 100 {
		t.Fatalf("%d entries, bound 100", n)
	}
}
