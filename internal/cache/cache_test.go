package cache

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

var minute = Policy{TTL: time.Minute}

func TestConcurrentMissesFillOnce(t *testing.T) {
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute})
	release := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]int, 100)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v, _, _, err := c.Get(context.Background(), "k", minute, func(context.Context) (int, error) {
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
		_, _, _, err := c.Get(ctx1, "k", minute, fill)
		first <- err
	}()
	<-started
	second := make(chan string, 1)
	go func() {
		v, _, _, err := c.Get(context.Background(), "k", minute, fill)
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
	if v, _, ok := c.Peek("k"); !ok || v != "ok" {
		t.Fatal("value not stored")
	}
}

func TestErrorsAreNotStored(t *testing.T) {
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute})
	boom := errors.New("boom")
	if _, _, _, err := c.Get(context.Background(), "k", minute, func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if _, _, ok := c.Peek("k"); ok {
		t.Fatal("error result stored")
	}
	v, st, _, err := c.Get(context.Background(), "k", minute, func(context.Context) (int, error) { return 7, nil })
	if err != nil || v != 7 || st != Miss {
		t.Fatalf("%v %v %v", v, st, err)
	}
	if _, st, _, _ := c.Get(context.Background(), "k", minute, nil); st != Hit {
		t.Fatalf("status %v", st)
	}
}

func TestPanickingFillBecomesError(t *testing.T) {
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute})
	_, _, _, err := c.Get(context.Background(), "k", minute, func(context.Context) (int, error) { panic("bad") })
	if err == nil {
		t.Fatal("no error")
	}
}

// Past its TTL a value is served at once as STALE while exactly one
// background refresh runs; when the refresh fails the stale value is served
// until the grace ends, then the error reaches the caller.
func TestStaleWhileRevalidateAndStaleIfError(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute, Now: clock})
	p := Policy{TTL: time.Minute, Grace: time.Hour}
	c.Set("k", 1, p)
	if _, st, _, _ := c.Get(context.Background(), "k", p, nil); st != Hit {
		t.Fatalf("fresh read: %v", st)
	}
	advance(2 * time.Minute)

	release := make(chan struct{})
	refreshed := make(chan struct{})
	fill := func(context.Context) (int, error) {
		<-release
		defer close(refreshed)
		return 2, nil
	}
	for i := 0; i < 20; i++ {
		v, st, _, err := c.Get(context.Background(), "k", p, fill)
		if err != nil || v != 1 || st != Stale {
			t.Fatalf("read %d: %v %v %v", i, v, st, err)
		}
	}
	close(release)
	<-refreshed
	eventually.True(t, "the refreshed value stored", func() bool { v, _, _ := c.Peek("k"); return v == 2 })
	if c.Fills() != 1 {
		t.Fatalf("%d refreshes for 20 stale reads, want 1", c.Fills())
	}
	advance(2 * time.Minute) // the refreshed value is stale in turn

	// Refreshes fail: stale keeps being served within grace. A read may
	// join the refresh a previous one started (one per key at a time), so
	// the reads are not each waited on; the refreshes must have failed.
	var failed atomic.Int32
	failing := func(context.Context) (int, error) { failed.Add(1); return 0, errors.New("upstream down") }
	for i := 0; i < 3; i++ {
		v, st, _, err := c.Get(context.Background(), "k", p, failing)
		if err != nil || v != 2 || st != Stale {
			t.Fatalf("stale-if-error read %d: %v %v %v", i, v, st, err)
		}
	}
	eventually.True(t, "a failed refresh", func() bool { return failed.Load() > 0 })
	if v, _, _ := c.Peek("k"); v != 2 {
		t.Fatalf("a failed refresh replaced the value: %v", v)
	}
	// Grace over: the stale value is no longer served; the error is.
	advance(2 * time.Hour)
	if _, st, _, err := c.Get(context.Background(), "k", p, failing); err == nil {
		t.Fatalf("served %v past the grace instead of the error", st)
	}
}

func TestEntryAndByteBounds(t *testing.T) {
	c := New[[]byte](Options{MaxEntries: 100, FillTimeout: time.Minute, MaxBytes: 10_000, Size: func(v any) int64 { return int64(len(v.([]byte))) }})
	for i := 0; i < 1000; i++ {
		c.Set(fmt.Sprint(i), make([]byte, 50), minute)
	}
	if n := c.Len(); n > 100 {
		t.Fatalf("%d entries, bound 100", n)
	}
	for i := 0; i < 1000; i++ {
		c.Set(fmt.Sprint("big", i), make([]byte, 900), minute)
	}
	if b := c.Bytes(); b > 10_000 {
		t.Fatalf("%d bytes, bound 10000", b)
	}
	// The newest writes survive, the oldest went first.
	if _, _, ok := c.Peek("big999"); !ok {
		t.Fatal("newest entry evicted")
	}
	if _, _, ok := c.Peek("big0"); ok {
		t.Fatal("oldest entry kept")
	}
	// Too large for the bound on its own: not stored, nothing evicted for it.
	c.Set("huge", make([]byte, 20_000), minute)
	if _, _, ok := c.Peek("huge"); ok {
		t.Fatal("entry above MaxBytes stored")
	}
}

// A million distinct keys through a cache bounded at 8 MiB: its accounting
// never exceeds the bound and the heap after GC stays within it plus the
// cache's fixed structures, not growing with the keys requested.
func TestMillionKeysStayWithinBound(t *testing.T) {
	if testing.Short() {
		t.Skip("a million inserts")
	}
	const bound = 8 << 20
	c := New[[]byte](Options{MaxEntries: 1 << 30, FillTimeout: time.Minute, MaxBytes: bound, Size: func(v any) int64 { return int64(len(v.([]byte))) + 256 }})
	var base runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	body := make([]byte, 200)
	for i := 0; i < 1_000_000; i++ {
		v := append([]byte(nil), body...)
		c.Set(fmt.Sprintf("strikes|42161|0x%040x|%d|%d", i, i%1000, i%7), v, minute)
		if i%100_000 == 0 && c.Bytes() > bound {
			t.Fatalf("after %d keys: %d bytes > %d", i, c.Bytes(), bound)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(base.HeapAlloc)
	t.Logf("entries %d, accounted %d bytes, heap grew %d bytes", c.Len(), c.Bytes(), grown)
	if c.Bytes() > bound || grown > 2*bound {
		t.Fatalf("accounted %d, heap grew %d; bound %d", c.Bytes(), grown, bound)
	}
}

// Drain waits for a background refresh under way: at shutdown it finishes
// (its answer stored) before the process goes on to close the shared tier.
func TestDrainWaitsForBackgroundRefresh(t *testing.T) {
	now := time.Unix(1000, 0)
	c := New[string](Options{MaxEntries: 10, FillTimeout: time.Minute, Now: func() time.Time { return now }})
	p := Policy{TTL: time.Second, Grace: time.Minute}
	if _, _, _, err := c.Get(context.Background(), "k", p, func(context.Context) (string, error) { return "v1", nil }); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Second)
	release, started := make(chan struct{}), make(chan struct{})
	if _, st, _, _ := c.Get(context.Background(), "k", p, func(context.Context) (string, error) {
		close(started)
		<-release
		return "v2", nil
	}); st != Stale {
		t.Fatalf("%s", st)
	}
	<-started
	drained := make(chan error, 1)
	go func() { drained <- c.Drain(context.Background()) }()
	select {
	case <-drained:
		t.Fatal("Drain returned while the refresh ran")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	if v, _, ok := c.Peek("k"); !ok || v != "v2" {
		t.Fatalf("after Drain: %q %v", v, ok)
	}
	if err := c.Drain(context.Background()); err != nil {
		t.Fatalf("nothing running: %v", err)
	}
}

// New refuses a missing bound, naming it, instead of choosing one.
func TestNewRefusesZeroBounds(t *testing.T) {
	for name, opts := range map[string]Options{
		"MaxEntries":  {FillTimeout: time.Minute},
		"FillTimeout": {MaxEntries: 10},
	} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, name) {
					t.Errorf("zero %s: panic %q", name, r)
				}
			}()
			New[int](opts)
		}()
	}
}

// EvictIf drops the entries named and only those; a later Get fills them
// again.
func TestEvictIfDropsWhatItNames(t *testing.T) {
	c := New[int](Options{MaxEntries: 10, FillTimeout: time.Minute})
	p := Policy{TTL: time.Hour}
	for i := range 5 {
		c.Set(fmt.Sprint(i), i, p)
	}
	if n := c.EvictIf(func(_ string, v int) bool { return v >= 3 }); n != 2 {
		t.Fatalf("evicted %d, want 2", n)
	}
	if c.Len() != 3 {
		t.Fatalf("%d entries left, want 3", c.Len())
	}
	if _, _, ok := c.Peek("4"); ok {
		t.Fatal("entry 4 is still served")
	}
	if _, _, ok := c.Peek("2"); !ok {
		t.Fatal("entry 2 was dropped")
	}
}

// A value Options.Brief names is kept only for its brief time, never
// served stale, and a value it does not name keeps the caller's policy.
func TestBriefValuesAreKeptBriefly(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	clock := func() time.Time { return now }
	brief := func(v any) (time.Duration, bool) { return time.Second, v.(string) == "degraded" }
	c := New[string](Options{MaxEntries: 10, FillTimeout: time.Minute, Now: clock, Brief: brief})
	p := Policy{TTL: time.Minute, Grace: time.Hour}
	fills := 0
	get := func(key, v string) (string, Status) {
		t.Helper()
		got, st, _, err := c.Get(context.Background(), key, p, func(context.Context) (string, error) { fills++; return v, nil })
		if err != nil {
			t.Fatal(err)
		}
		return got, st
	}
	get("a", "degraded")
	get("b", "whole")
	if _, st := get("a", "degraded"); st != Hit || fills != 2 {
		t.Fatalf("within its brief time: %s after %d fills", st, fills)
	}
	now = now.Add(time.Second)
	if v, st := get("a", "whole"); st != Miss || v != "whole" || fills != 3 {
		t.Errorf("past its brief time: %q %s after %d fills, want a new fill", v, st, fills)
	}
	now = now.Add(30 * time.Second)
	if _, st := get("b", "whole"); st != Hit || fills != 3 {
		t.Errorf("a whole value within its TTL: %s after %d fills", st, fills)
	}
}
