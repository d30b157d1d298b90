package block

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

// gatedIndexer is a subgraph whose `_meta` answers wait for release; it
// keeps each call's context.
type gatedIndexer struct {
	mu      sync.Mutex
	calls   []context.Context
	release chan struct{}
	answer  Ref
	err     error
	seen    Seen
}

func (g *gatedIndexer) IndexedHead(ctx context.Context) (Ref, error) {
	g.mu.Lock()
	g.calls = append(g.calls, ctx)
	rel := g.release
	g.mu.Unlock()
	select {
	case <-rel:
	case <-ctx.Done():
		return Ref{}, ctx.Err()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.answer, g.err
}

func (g *gatedIndexer) Seen() *Seen { return &g.seen }

func (g *gatedIndexer) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// headers is a node whose head is head; it counts the headers read. When
// gate is set each HeaderAt waits for it; answer, when set, rewrites what
// HeaderAt answers (a lying node).
type headers struct {
	mu       sync.Mutex
	head     Ref
	reads    int
	inFlight int
	maxIn    int
	perBlock map[uint64]int
	gate     chan struct{}
	answer   func(Ref) Ref
}

func (h *headers) Header(context.Context, string) (Ref, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reads++
	return h.head, nil
}

func (h *headers) HeaderAt(_ context.Context, n uint64) (Ref, error) {
	h.mu.Lock()
	h.reads++
	h.inFlight++
	h.maxIn = max(h.maxIn, h.inFlight)
	if h.perBlock == nil {
		h.perBlock = map[uint64]int{}
	}
	h.perBlock[n]++
	gate, answer := h.gate, h.answer
	h.mu.Unlock()
	if gate != nil {
		<-gate
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inFlight--
	if n > h.head.Number {
		return Ref{}, problem.New(problem.BlockNotFound, "no block %d", n)
	}
	r := Ref{Number: n, Hash: hashOf(n), Timestamp: 1_700_000_000 + int64(n)}
	if answer != nil {
		r = answer(r)
	}
	return r, nil
}

// hashOf is the fake node's hash of block n: 0x and 64 hex digits.
func hashOf(n uint64) string { return fmt.Sprintf("0x%064x", 0xb<<60|n) }

func (h *headers) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reads
}

func newPins(t *testing.T, g *gatedIndexer, h *headers, ages HeadAges) *Pins {
	t.Helper()
	p, err := New(map[uint64]Sources{1: {Indexed: g, Headers: h}}, ages)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// pinOnce runs an answer that reads nothing the way a strikes-chain miss
// is run, and returns its block; cancelAfter ends the request as soon as
// its read starts.
func pinOnce(t *testing.T, p *Pins, cancelAfter bool) Ref {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pinned Ref
	r, err := p.Run(ctx, Ask{Chain: 1}, IndexedHead(StaleStrikes), func(ctx context.Context) error {
		var ok bool
		if pinned, ok = From(ctx).Resolved(); !ok {
			t.Fatal("the pin is not resolved before the answer's first read")
		}
		if cancelAfter {
			cancel() // the request is over; its refresh is not
		}
		return nil
	})
	if err != nil || r != pinned {
		t.Fatalf("Run: %+v %v; the read saw %+v", r, err, pinned)
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
	seen := Ref{Number: 5, Hash: "0x05", Timestamp: 50}
	g := &gatedIndexer{release: make(chan struct{}), answer: Ref{Number: 9, Hash: "0x09", Timestamp: 90}}
	p := newPins(t, g, &headers{}, HeadAges{Strikes: time.Hour, RefreshTimeout: time.Hour})
	g.seen.Saw(seen, time.Now())

	if r := pinOnce(t, p, true); r != seen {
		t.Fatalf("pinned to %+v, want the head seen %+v", r, seen)
	}
	eventually.True(t, "the refresh to ask", func() bool { return g.count() == 1 })
	if r := pinOnce(t, p, false); r != seen || g.count() != 1 {
		t.Fatalf("second miss: %+v with %d refreshes, want %+v and one", r, g.count(), seen)
	}
	g.mu.Lock()
	ctx := g.calls[0]
	g.mu.Unlock()
	if _, ok := ctx.Deadline(); !ok || ctx.Err() != nil || From(ctx) != nil {
		t.Fatalf("the refresh's context: deadline set %v, err %v, pinned %v", ok, ctx.Err(), From(ctx) != nil)
	}
	close(g.release)
	eventually.True(t, "the refreshed head", func() bool { return pinOnce(t, p, false).Number == 9 })

	// A failed refresh: the head stays, no error reaches a miss, and the
	// next miss starts another.
	g.mu.Lock()
	g.err, g.answer = errors.New("subgraph down"), Ref{}
	g.mu.Unlock()
	before := g.count()
	eventually.True(t, "two refreshes after the failure", func() bool {
		if r := pinOnce(t, p, false); r.Number != 9 {
			t.Fatalf("pinned to %+v after a failed refresh, want block 9", r)
		}
		return g.count() >= before+2
	})

	// Past the stale bound the miss asks itself, and fails with the
	// subgraph's error before its read.
	p.SetHeadAges(HeadAges{})
	read := false
	if _, err := p.Run(context.Background(), Ask{Chain: 1}, IndexedHead(StaleStrikes), func(context.Context) error { read = true; return nil }); err == nil || read {
		t.Fatalf("a miss past the stale bound: %v, read %v; want the `_meta` error and no read", err, read)
	}
}

// Each answer is under its own stale bound, and a stale bound shorter
// than the fresh age wins: a head older than the bound is never used,
// however fresh the fresh age would call it.
func TestHeadUsableUnderItsOwnBound(t *testing.T) {
	for _, c := range []struct {
		name         string
		ages         HeadAges
		age          time.Duration
		stale        Stale
		use, refresh bool
	}{
		{"fresh", HeadAges{Fresh: time.Second, Strikes: time.Hour}, 0, StaleStrikes, true, false},
		{"past fresh, within the bound", HeadAges{Fresh: time.Second, Strikes: time.Hour}, time.Minute, StaleStrikes, true, true},
		{"a quote past its own bound", HeadAges{Strikes: time.Hour, Quotes: time.Nanosecond}, time.Second, StaleQuotes, false, false},
		{"a strikes chain within its bound", HeadAges{Strikes: time.Hour, Quotes: time.Nanosecond}, time.Second, StaleStrikes, true, true},
		{"inside both", HeadAges{Fresh: time.Second, Strikes: 500 * time.Millisecond}, 400 * time.Millisecond, StaleStrikes, true, false},
		{"past the bound, fresh by the fresh age", HeadAges{Fresh: time.Second, Strikes: 500 * time.Millisecond}, 600 * time.Millisecond, StaleStrikes, false, false},
		{"the zero ages", HeadAges{}, 0, StaleStrikes, false, false},
	} {
		if use, refresh := c.ages.usable(c.age, c.stale); use != c.use || refresh != c.refresh {
			t.Errorf("%s: use %v refresh %v, want %v %v", c.name, use, refresh, c.use, c.refresh)
		}
	}
}

// A head read by a seed is stamped when it was asked, not when a slow
// answer arrived: it ages from the question.
func TestSeededHeadAgesFromTheQuestion(t *testing.T) {
	// In a bubble the clock moves only when every goroutine waits: the
	// seed asks at asked, and its answer comes a minute later.
	synctest.Test(t, func(t *testing.T) {
		g := &gatedIndexer{release: make(chan struct{}), answer: Ref{Number: 9, Hash: "0x09", Timestamp: 1}}
		p := newPins(t, g, &headers{}, HeadAges{})
		asked := time.Now()
		done := make(chan struct{})
		go func() { p.SeedHeads(context.Background()); close(done) }()
		synctest.Wait()
		if g.count() != 1 {
			t.Fatalf("the seed asked `_meta` %d times, want once", g.count())
		}
		time.Sleep(time.Minute)
		close(g.release)
		<-done
		r, at, ok := g.seen.Last()
		if !ok || r.Number != 9 || !at.Equal(asked) {
			t.Fatalf("head %+v stamped at %v; asked at %v, answered a minute later", r, at, asked)
		}
	})
}

// A block the client asks for is the answer's block whatever the route's
// strategy: resolved before the first read, with no `_meta` or header of
// its own. Without one, each strategy decides who resolves the pin, and
// an answer that read nothing is at the chain's head.
func TestRunAppliesTheStrategy(t *testing.T) {
	g := &gatedIndexer{release: make(chan struct{}), answer: Ref{Number: 9, Hash: "0x09"}}
	close(g.release)
	h := &headers{head: Ref{Number: 12, Hash: "0x0c"}}
	p := newPins(t, g, h, HeadAges{})
	asked := Ref{Number: 7, Hash: "0x07", Timestamp: 70}
	for _, s := range []Strategy{SubgraphFirst, IndexedHead(StaleStrikes), IndexedHead(StaleQuotes), ChainHead} {
		r, err := p.Run(context.Background(), Ask{Chain: 1, Want: 7, At: asked}, s, func(ctx context.Context) error {
			if Known(ctx, "latest") != "0x7" {
				t.Errorf("%+v: the read does not know the block asked", s)
			}
			return nil
		})
		if err != nil || r != asked {
			t.Errorf("%+v asked at 7: %+v %v", s, r, err)
		}
	}
	if g.count() != 0 || h.count() != 0 {
		t.Errorf("a block asked for read `_meta` %d times and %d headers", g.count(), h.count())
	}

	claims := map[Strategy][2]bool{ // who may claim: a chain read, the subgraph
		SubgraphFirst: {false, true},
		ChainHead:     {true, true},
	}
	for s, want := range claims {
		r, err := p.Run(context.Background(), Ask{Chain: 1}, s, func(ctx context.Context) error {
			pin := From(ctx)
			if got := [2]bool{pin.Claim(Anyone), pin.Claim(Subgraph)}; got[0] != want[0] || (!got[0] && got[1] != want[1]) {
				t.Errorf("%+v: claims (chain, subgraph) %v, want %v", s, got, want)
			}
			return nil // and resolves nothing: everything was cached
		})
		if err != nil || r != h.head {
			t.Errorf("%+v, an answer that read nothing: %+v %v, want the head", s, r, err)
		}
	}
	if r, err := p.Run(context.Background(), Ask{Chain: 1}, IndexedHead(StaleStrikes), func(context.Context) error { return nil }); err != nil || r.Number != 9 {
		t.Errorf("IndexedHead with no head seen: %+v %v, want the subgraph's indexed block", r, err)
	}
	if _, err := p.Run(context.Background(), Ask{Chain: 1}, Strategy{}, func(context.Context) error { return nil }); !errors.Is(err, errUnstated) {
		t.Errorf("an unstated strategy: %v", err)
	}
	if _, err := p.Run(context.Background(), Ask{Chain: 2}, IndexedHead(StaleStrikes), func(context.Context) error { return nil }); problem.As(err).Code != problem.UpstreamNotConfigured {
		t.Errorf("a chain without sources: %v", err)
	}
}

// A block a client asks for is read from the node once per fresh age (a
// client paging at one block), every time with the zero ages; one past the
// node's head is the node's BLOCK_NOT_FOUND.
func TestBlockAtIsRemembered(t *testing.T) {
	h := &headers{head: Ref{Number: 12}}
	p := newPins(t, &gatedIndexer{}, h, HeadAges{Fresh: time.Hour})
	for range 3 {
		if r, err := p.BlockAt(context.Background(), 1, 10, nil); err != nil || r.Hash != hashOf(10) {
			t.Fatalf("BlockAt: %+v %v", r, err)
		}
	}
	if h.count() != 1 {
		t.Errorf("%d header reads for one block within the fresh age, want 1", h.count())
	}
	p.SetHeadAges(HeadAges{})
	_, _ = p.BlockAt(context.Background(), 1, 10, nil)
	if h.count() != 2 {
		t.Errorf("the zero ages remembered a header")
	}
	if _, err := p.BlockAt(context.Background(), 1, 13, nil); problem.As(err).Code != problem.BlockNotFound {
		t.Errorf("past the head: %v", err)
	}
}

// Pins need both readers of every chain: a chain without one is refused
// when the app is built, naming what it lacks.
func TestNewNamesAMissingSource(t *testing.T) {
	for _, c := range []struct {
		src  Sources
		want string
	}{
		{Sources{Headers: &headers{}}, "Sources.Indexed"},
		{Sources{Indexed: &gatedIndexer{}}, "Sources.Headers"},
	} {
		if _, err := New(map[uint64]Sources{42161: c.src}, HeadAges{}); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "42161") {
			t.Errorf("%+v: %v, want an error naming chain 42161 and %s", c.src, err, c.want)
		}
	}
}

// A head without a hash or number is none; the answer to the latest
// question wins whatever its block, so a head that went back is followed;
// an answer to an earlier question than the one recorded does not replace
// it.
func TestSeenFollowsTheLatestQuestion(t *testing.T) {
	var s Seen
	if _, _, ok := s.Last(); ok {
		t.Fatal("the zero Seen has seen a head")
	}
	t0 := time.Unix(1_700_000_000, 0)
	s.Saw(Ref{Number: 8}, t0)
	s.Saw(Ref{Number: 9, Hash: "0x09"}, t0)
	s.Saw(Ref{Number: 7, Hash: "0x07"}, t0.Add(time.Second))
	if r, at, ok := s.Last(); !ok || r.Number != 7 || !at.Equal(t0.Add(time.Second)) {
		t.Errorf("last %+v at %v, want block 7, the later question's, at %v", r, at, t0.Add(time.Second))
	}
	s.Saw(Ref{Number: 12, Hash: "0x0c"}, t0)
	if r, _, _ := s.Last(); r.Number != 7 {
		t.Errorf("last %+v: an answer to an earlier question replaced the later one's", r)
	}
}

// counted is an Admit of max slots that counts its refusals.
type counted struct {
	slots   chan struct{}
	refused atomic.Int64
}

func (c *counted) admit(ctx context.Context) (context.Context, func(), error) {
	select {
	case c.slots <- struct{}{}:
		return ctx, func() { <-c.slots }, nil
	default:
		c.refused.Add(1)
		return ctx, nil, problem.New(problem.Overloaded, "full")
	}
}

// A flood of requests naming blocks: every header read is admitted (at most
// as many in flight as the bound; the others are refused with the bound's
// error at once), and requests asking for one block at the same time share
// one read; a request that ends stops waiting without failing the read
// for the others.
func TestBlockAtIsOneAdmittedReadPerBlock(t *testing.T) {
	h := &headers{head: Ref{Number: 1000}, gate: make(chan struct{})}
	p := newPins(t, &gatedIndexer{}, h, HeadAges{Fresh: time.Hour})
	adm := &counted{slots: make(chan struct{}, 4)}
	tally := func(errs <-chan error) (ok, over, cancelled int) {
		for err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, context.Canceled):
				cancelled++
			case problem.As(err).Code == problem.Overloaded:
				over++
			default:
				t.Errorf("BlockAt: %v", err)
			}
		}
		return
	}

	// 200 requests, each naming another block.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for n := range uint64(200) {
		wg.Go(func() { _, err := p.BlockAt(context.Background(), 1, 1+n, adm.admit); errs <- err })
	}
	eventually.True(t, "4 reads in flight and the other 196 refused", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.inFlight == 4 && adm.refused.Load() == 196
	})
	close(h.gate)
	wg.Wait()
	close(errs)
	if ok, over, _ := tally(errs); ok != 4 || over != 196 || h.count() != 4 || h.maxIn != 4 {
		t.Errorf("200 blocks: %d answered, %d refused, %d reads (%d at once); want 4, 196, 4, 4", ok, over, h.count(), h.maxIn)
	}

	// 100 requests for one block, and one more that hangs up meanwhile.
	h.mu.Lock()
	h.gate, h.reads = make(chan struct{}), 0
	h.mu.Unlock()
	errs = make(chan error, 101)
	for range 100 {
		wg.Go(func() { _, err := p.BlockAt(context.Background(), 1, 500, adm.admit); errs <- err })
	}
	eventually.True(t, "the read of block 500", func() bool { return h.count() == 1 })
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.BlockAt(gone, 1, 500, adm.admit); !errors.Is(err, context.Canceled) {
		t.Errorf("a request that hung up: %v", err)
	}
	close(h.gate)
	wg.Wait()
	close(errs)
	if ok, _, _ := tally(errs); ok != 100 || h.count() != 1 || h.perBlock[500] != 1 {
		t.Errorf("one block asked 100 times: %d answered, %d reads; want 100 and 1", ok, h.count())
	}
}

// A node's header is checked before it is served or remembered: another
// block's (asked N, answered N-1), a hash that is not 32 bytes, a time
// past any sane bound (2^64-1 read as int64 is -1) are 502 RPC_ERROR,
// and the next request asks again.
func TestBlockAtChecksTheHeader(t *testing.T) {
	for name, lie := range map[string]func(Ref) Ref{
		"another block":   func(r Ref) Ref { r.Number--; r.Hash = hashOf(r.Number); return r },
		"short hash":      func(r Ref) Ref { r.Hash = "0x0b"; return r },
		"no hash":         func(r Ref) Ref { r.Hash = ""; return r },
		"time 2^64-1":     func(r Ref) Ref { r.Timestamp = -1; return r },
		"time past 9999":  func(r Ref) Ref { r.Timestamp = MaxTimestamp + 1; return r },
		"hash not in hex": func(r Ref) Ref { r.Hash = "0x" + strings.Repeat("g", 64); return r },
	} {
		h := &headers{head: Ref{Number: 100}, answer: lie}
		p := newPins(t, &gatedIndexer{}, h, HeadAges{Fresh: time.Hour})
		for range 2 {
			if r, err := p.BlockAt(context.Background(), 1, 50, nil); problem.As(err).Code != problem.RPCError {
				t.Errorf("%s: %+v %v, want RPC_ERROR", name, r, err)
			}
		}
		if h.count() != 2 {
			t.Errorf("%s: %d reads, want 2 (a refused header is not remembered)", name, h.count())
		}
	}
}

// flakyIndexer is a subgraph whose `_meta` answers head; it counts reads.
type flakyIndexer struct {
	mu    sync.Mutex
	head  Ref
	reads int
	seen  Seen
}

func (f *flakyIndexer) IndexedHead(context.Context) (Ref, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return f.head, nil
}

func (f *flakyIndexer) Seen() *Seen { return &f.seen }

// A subgraph whose head went back 50 blocks (an indexer behind the same
// URL rewound): the strikes miss pinned to the head last seen is refused
// BLOCK_NOT_INDEXED, then read once more at the head `_meta` names now,
// which is remembered; the next misses pin to it without asking. When
// `_meta` still names the block that failed, the refusal stands.
func TestRunFollowsAHeadThatWentBack(t *testing.T) {
	f := &flakyIndexer{head: Ref{Number: 950, Hash: hashOf(950)}}
	p, err := New(map[uint64]Sources{1: {Indexed: f, Headers: &headers{}}}, HeadAges{Fresh: time.Hour, Strikes: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f.seen.Saw(Ref{Number: 1000, Hash: hashOf(1000)}, time.Now())
	read := func(ctx context.Context) error {
		if r, _ := From(ctx).Resolved(); r.Number > 950 {
			return problem.New(problem.BlockNotIndexed, "the subgraph has indexed up to block 950 only")
		}
		return nil
	}
	for i := range 3 {
		r, err := p.Run(context.Background(), Ask{Chain: 1}, IndexedHead(StaleStrikes), read)
		if err != nil || r.Number != 950 {
			t.Fatalf("miss %d: %+v %v, want an answer at 950", i, r, err)
		}
	}
	if f.reads != 1 {
		t.Errorf("%d `_meta` reads for three misses, want 1", f.reads)
	}
	f.seen.Saw(Ref{Number: 1000, Hash: hashOf(1000)}, time.Now())
	f.head = Ref{Number: 1000, Hash: hashOf(1000)}
	if _, err := p.Run(context.Background(), Ask{Chain: 1}, IndexedHead(StaleStrikes), read); problem.As(err).Code != problem.BlockNotIndexed {
		t.Errorf("with `_meta` naming the block that failed: %v, want BLOCK_NOT_INDEXED", err)
	}
}

// A subgraph whose `_meta` names no block (block 0, or null: an embedded
// index before its first commit, a Graph Node after a quiet spell) gives
// an IndexedHead answer nothing to pin to: 503 SUBGRAPH_UNAVAILABLE, the
// read never run, and never the 500 of an unmapped error (attack 5, S4).
// Once `_meta` names a block, the next miss pins to it.
func TestRunRefusesAHeadOfNoBlockAsUnavailable(t *testing.T) {
	for _, head := range []Ref{{}, {Number: 0, Hash: hashOf(0)}} {
		f := &flakyIndexer{head: head}
		p, err := New(map[uint64]Sources{1: {Indexed: f, Headers: &headers{}}}, HeadAges{Fresh: time.Hour, Strikes: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		reads := 0
		read := func(context.Context) error { reads++; return nil }
		for _, s := range []Strategy{IndexedHead(StaleStrikes), IndexedHead(StaleQuotes)} {
			_, err := p.Run(context.Background(), Ask{Chain: 1}, s, read)
			if pe := problem.As(err); pe.Code != problem.SubgraphUnavailable || !strings.Contains(pe.Message, "no block yet") {
				t.Errorf("`_meta` %+v: %v, want SUBGRAPH_UNAVAILABLE naming no block yet", head, err)
			}
		}
		if reads != 0 {
			t.Errorf("`_meta` %+v: the answer was read %d times with no block to pin it to", head, reads)
		}
		f.mu.Lock()
		f.head = Ref{Number: 950, Hash: hashOf(950)}
		f.mu.Unlock()
		if r, err := p.Run(context.Background(), Ask{Chain: 1}, IndexedHead(StaleStrikes), read); err != nil || r.Number != 950 {
			t.Errorf("after the first commit: %+v %v, want an answer at 950", r, err)
		}
	}
}
