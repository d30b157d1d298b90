package service

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// gatedMeta is a `_meta` reader whose answers wait for release; it keeps
// each call's context.
type gatedMeta struct {
	mu      sync.Mutex
	calls   []context.Context
	release chan struct{}
	answer  subgraph.Meta
	err     error
}

func (g *gatedMeta) Meta(ctx context.Context) (subgraph.Meta, error) {
	g.mu.Lock()
	g.calls = append(g.calls, ctx)
	rel := g.release
	g.mu.Unlock()
	select {
	case <-rel:
	case <-ctx.Done():
		return subgraph.Meta{}, ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.answer, g.err
}

func (g *gatedMeta) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// pinOnce resolves a new pin the way a strikes-chain miss does.
func pinOnce(t *testing.T, s *Service, up *Upstreams, cancelAfter bool) block.Ref {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ctx, p := block.With(ctx, 0)
	if err := s.pinIndexed(ctx, 1, up, staleStrikes); err != nil {
		t.Fatal(err)
	}
	if cancelAfter {
		cancel() // the request is over; its refresh is not
	} else {
		defer cancel()
	}
	r, ok := p.Resolved()
	if !ok {
		t.Fatal("pin not resolved")
	}
	return r
}

// A head past the fresh age but within the stale bound pins at once and
// starts one refresh, detached from the request (cancelled here as soon
// as the pin is resolved) and under the refresh deadline; a second miss
// while it runs starts none; its result is the next misses' head. A
// failed refresh leaves the head as it was and lets the next miss try
// again. Ages are set, not waited for.
func TestStaleHeadIsRefreshedInTheBackground(t *testing.T) {
	seen := block.Ref{Number: 5, Hash: "0x05", Timestamp: 50}
	m := &gatedMeta{release: make(chan struct{}), answer: subgraph.Meta{Block: 9, Hash: "0x09", Timestamp: 90}}
	up := &Upstreams{Meta: m}
	s := New(map[uint64]*Upstreams{1: up})
	s.SetHeadAges(HeadAges{Strikes: time.Hour, RefreshTimeout: time.Hour})
	s.heads.saw(1, seen, time.Now())

	if r := pinOnce(t, s, up, true); r != seen {
		t.Fatalf("pinned to %+v, want the head seen %+v", r, seen)
	}
	eventually.True(t, "the refresh to ask", func() bool { return m.count() == 1 })
	if r := pinOnce(t, s, up, false); r != seen || m.count() != 1 {
		t.Fatalf("second miss: %+v with %d refreshes, want %+v and one", r, m.count(), seen)
	}
	m.mu.Lock()
	ctx := m.calls[0]
	m.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil || block.From(ctx) != nil {
		t.Fatalf("the refresh's context: deadline set %v, err %v, pinned %v", ok, ctx.Err(), block.From(ctx) != nil)
	}
	close(m.release)
	eventually.True(t, "the refreshed head", func() bool { return pinOnce(t, s, up, false).Number == 9 })

	// A failed refresh: the head stays, no error reaches a miss, and the
	// next miss starts another.
	m.mu.Lock()
	m.err, m.answer = errors.New("subgraph down"), subgraph.Meta{}
	m.mu.Unlock()
	before := m.count()
	eventually.True(t, "two refreshes after the failure", func() bool {
		if r := pinOnce(t, s, up, false); r.Number != 9 {
			t.Fatalf("pinned to %+v after a failed refresh, want block 9", r)
		}
		return m.count() >= before+2
	})

	// Past the stale bound the miss asks itself, and fails with the
	// subgraph's error.
	s.SetHeadAges(HeadAges{})
	ctx2, p := block.With(context.Background(), 0)
	if err := s.pinIndexed(ctx2, 1, up, staleStrikes); err == nil {
		t.Fatal("a miss past the stale bound did not ask `_meta`")
	}
	if _, err := p.Wait(context.Background()); err == nil {
		t.Fatal("the pin was not failed")
	}
}

// Quotes have their own bound: a head within the strikes chain's but past
// the quotes' is asked again.
func TestQuotesUseTheirOwnStaleBound(t *testing.T) {
	s := New(nil)
	s.SetHeadAges(HeadAges{Strikes: time.Hour, Quotes: time.Nanosecond})
	s.heads.saw(1, block.Ref{Number: 5, Hash: "0x05"}, time.Now().Add(-time.Second))
	if _, ok, _ := s.heads.recent(1, staleStrikes, time.Now()); !ok {
		t.Error("a strikes chain did not take a head within its bound")
	}
	if _, ok, _ := s.heads.recent(1, staleQuotes, time.Now()); ok {
		t.Error("a quote took a head past its bound")
	}
}

// A stale bound shorter than the fresh age wins: a head older than the
// bound is never used, however fresh the fresh age would call it.
func TestStaleBoundCapsTheFreshAge(t *testing.T) {
	var h heads
	h.ages = HeadAges{Fresh: time.Second, Strikes: 500 * time.Millisecond}
	t0 := time.Unix(1_700_000_000, 0)
	h.saw(42161, block.Ref{Number: 7, Hash: "0x07"}, t0)
	if _, ok, _ := h.recent(42161, staleStrikes, t0.Add(400*time.Millisecond)); !ok {
		t.Fatal("a head inside both bounds was not used")
	}
	if _, ok, _ := h.recent(42161, staleStrikes, t0.Add(600*time.Millisecond)); ok {
		t.Fatal("a head past the stale bound was used because the fresh age is longer")
	}
}

// A head read by a seed is stamped when it was asked, not when a slow
// answer arrived: it ages from the question.
func TestSeededHeadAgesFromTheQuestion(t *testing.T) {
	// In a bubble the clock moves only when every goroutine waits: the
	// seed asks at asked, and its answer comes a minute later.
	synctest.Test(t, func(t *testing.T) {
		g := &gatedMeta{release: make(chan struct{}), answer: subgraph.Meta{Block: 9, Hash: "0x09", Timestamp: 1}}
		s := &Service{chains: map[uint64]*Upstreams{42161: {Meta: g}}}
		asked := time.Now()
		done := make(chan struct{})
		go func() { s.SeedHeads(context.Background()); close(done) }()
		synctest.Wait()
		if g.count() != 1 {
			t.Fatalf("the seed asked `_meta` %d times, want once", g.count())
		}
		time.Sleep(time.Minute)
		close(g.release)
		<-done
		seen := s.heads.seen[42161]
		if seen.ref.Number != 9 || !seen.at.Equal(asked) {
			t.Fatalf("head %+v stamped at %v; asked at %v, answered a minute later", seen.ref, seen.at, asked)
		}
	})
}
