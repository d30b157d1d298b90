package redistier_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
)

// clock is a settable time shared by a test's replicas.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}
func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }
func (c *clock) opt() func() time.Time   { return c.now }
func tier(t *testing.T, url string, o redistier.Options) *redistier.Tier {
	t.Helper()
	o.URL = url
	if o.Prefix == "" {
		o.Prefix = config.Default().RedisPrefix
	}
	if o.OpTimeout == 0 {
		// Generous: a loaded test machine must not make a healthy Redis
		// look failed. Faults here are refusals and errors, not stalls.
		o.OpTimeout = 5 * time.Second
	}
	tr, err := redistier.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// replica is one gateway's cache on the shared Redis.
func replica(t *testing.T, url string, clk *clock, o redistier.Options) (*cache.Cache[string], *redistier.Tier) {
	tr := tier(t, url, o)
	opts := cache.Options{MaxEntries: 100, FillTimeout: time.Minute, Shared: tr, Codec: redistest.TextCodec{}}
	if clk != nil {
		opts.Now = clk.opt()
	}
	return cache.New[string](opts), tr
}

var policy = cache.Policy{TTL: time.Minute, Grace: time.Minute}

// A key filled on one replica is a hit on another: same value, and an age
// counted from the first replica's fill, not from the copy.
func TestFilledOnOneIsHitOnAnother(t *testing.T) {
	srv := redistest.Start(t)
	clk := newClock()
	a, _ := replica(t, srv.URL(), clk, redistier.Options{})
	b, _ := replica(t, srv.URL(), clk, redistier.Options{})
	var fills atomic.Int64
	fill := func(context.Context) (string, error) { fills.Add(1); return "answer", nil }
	v, st, _, err := a.Get(context.Background(), "k", policy, fill)
	if err != nil || v != "answer" || st != cache.Miss {
		t.Fatalf("a: %q %s %v", v, st, err)
	}
	clk.advance(7 * time.Second)
	v, st, age, err := b.Get(context.Background(), "k", policy, fill)
	if err != nil || v != "answer" || st != cache.Hit || age != 7*time.Second {
		t.Fatalf("b: %q %s age %s %v", v, st, age, err)
	}
	if fills.Load() != 1 || b.SharedStats().Hits != 1 {
		t.Fatalf("fills %d, b's shared stats %+v", fills.Load(), b.SharedStats())
	}
	// Now in b's local tier, with a's build time.
	if _, age, ok := b.Peek("k"); !ok || age != 7*time.Second {
		t.Fatalf("b's local copy: %v age %s", ok, age)
	}
	// Redis holds it for TTL+grace, not forever.
	ttl, err := srv.Do("PTTL", "clamm:v1:v:k")
	if err != nil || ttl == "-1" || ttl == "-2" {
		t.Fatalf("PTTL %q %v", ttl, err)
	}
}

// 100 concurrent misses spread over three replicas: one fill.
func TestConcurrentMissesAcrossReplicasFillOnce(t *testing.T) {
	srv := redistest.Start(t)
	var reps []*cache.Cache[string]
	for range 3 {
		c, _ := replica(t, srv.URL(), nil, redistier.Options{})
		reps = append(reps, c)
	}
	release := make(chan struct{})
	var fills atomic.Int64
	fill := func(context.Context) (string, error) {
		fills.Add(1)
		<-release
		return "answer", nil
	}
	var wg sync.WaitGroup
	var started sync.WaitGroup
	for i := range 100 {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			v, _, _, err := reps[i%3].Get(context.Background(), "k", policy, fill)
			if err != nil || v != "answer" {
				t.Errorf("%q %v", v, err)
			}
		}()
	}
	started.Wait()
	// Let the three replicas reach Redis (one holds the lease, two wait)
	// before the fill may finish; without the tier each would fill.
	eventually.True(t, "two replicas wait on the lease", func() bool {
		waits := 0
		for _, c := range reps {
			if c.SharedStats().Waits > 0 {
				waits++
			}
		}
		return waits >= 2
	})
	close(release)
	wg.Wait()
	if fills.Load() != 1 {
		t.Fatalf("%d fills, want 1", fills.Load())
	}
}

// A holder that dies keeps its lease until it expires; then a waiting
// replica takes over and fills. The dead holder is a lease taken by hand
// and never renewed.
func TestDeadHolderLeaseExpiresAndAnotherFills(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := replica(t, srv.URL(), nil, redistier.Options{LeaseTTL: 300 * time.Millisecond})
	if _, err := srv.Do("SET", "clamm:v1:l:k", "dead-holder", "PX", "300"); err != nil {
		t.Fatal(err)
	}
	var fills atomic.Int64
	v, st, _, err := c.Get(context.Background(), "k", policy, func(context.Context) (string, error) {
		fills.Add(1)
		return "answer", nil
	})
	if err != nil || v != "answer" || st != cache.Miss || fills.Load() != 1 {
		t.Fatalf("%q %s %v fills %d", v, st, err, fills.Load())
	}
	if c.SharedStats().Waits == 0 {
		t.Fatal("did not wait for the holder")
	}
	if got, _ := srv.Do("GET", "clamm:v1:l:k"); got != "" {
		t.Fatalf("lease left behind: %q", got)
	}
}

// A holder renews its lease: a fill longer than LeaseTTL is not taken
// over by another replica.
func TestLiveHolderKeepsItsLease(t *testing.T) {
	srv := redistest.Start(t)
	o := redistier.Options{LeaseTTL: 150 * time.Millisecond}
	a, _ := replica(t, srv.URL(), nil, o)
	b, _ := replica(t, srv.URL(), nil, o)
	var fills atomic.Int64
	inFill := make(chan struct{})
	release := make(chan struct{})
	slow := func(context.Context) (string, error) {
		if fills.Add(1) == 1 {
			close(inFill)
		}
		<-release
		return "answer", nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if v, _, _, err := a.Get(context.Background(), "k", policy, slow); err != nil || v != "answer" {
			t.Errorf("a: %q %v", v, err)
		}
	}()
	<-inFill
	bDone := make(chan struct{})
	go func() {
		defer close(bDone)
		if v, _, _, err := b.Get(context.Background(), "k", policy, slow); err != nil || v != "answer" {
			t.Errorf("b: %q %v", v, err)
		}
	}()
	// Several lease lifetimes pass while a fills and b waits.
	eventually.True(t, "b waits five times", func() bool { return b.SharedStats().Waits >= 5 })
	close(release)
	<-done
	<-bDone
	if fills.Load() != 1 {
		t.Fatalf("%d fills, want 1", fills.Load())
	}
}

// A failed fill shares nothing: the lease is given up, nothing is written,
// and the next miss (on any replica) fills again.
func TestFailedFillWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	a, _ := replica(t, srv.URL(), nil, redistier.Options{})
	b, _ := replica(t, srv.URL(), nil, redistier.Options{})
	boom := errors.New("upstream down")
	if _, _, _, err := a.Get(context.Background(), "k", policy, func(context.Context) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	for _, k := range []string{"clamm:v1:v:k", "clamm:v1:l:k"} {
		if got, _ := srv.Do("EXISTS", k); got != "0" {
			t.Fatalf("%s exists after a failed fill", k)
		}
	}
	v, st, _, err := b.Get(context.Background(), "k", policy, func(context.Context) (string, error) { return "answer", nil })
	if err != nil || v != "answer" || st != cache.Miss {
		t.Fatalf("%q %s %v", v, st, err)
	}
}

// A record that does not decode (garbage, another codec, another record
// version) is a miss: filled and overwritten, no error.
func TestUndecodableRecordIsMiss(t *testing.T) {
	srv := redistest.Start(t)
	c, _ := replica(t, srv.URL(), nil, redistier.Options{})
	for i, junk := range []string{"", "x", "\x01\x00\x00\x00\x00\x00\x00\x00\x00binary:not text", "\x03\x00\x00\x00\x00\x00\x00\x00\x00text:future"} {
		key := fmt.Sprint("k", i)
		if _, err := srv.Do("SET", "clamm:v1:v:"+key, junk); err != nil {
			t.Fatal(err)
		}
		v, st, _, err := c.Get(context.Background(), key, policy, func(context.Context) (string, error) { return "answer", nil })
		if err != nil || v != "answer" || st != cache.Miss {
			t.Fatalf("%q: %q %s %v", junk, v, st, err)
		}
		if got, _ := srv.Do("GET", "clamm:v1:v:"+key); !strings.HasSuffix(got, "text:answer") {
			t.Fatalf("%q not overwritten: %q", junk, got)
		}
	}
	if n := c.SharedStats().Undecodable; n != 4 {
		t.Fatalf("undecodable %d", n)
	}
}

// Stale-while-revalidate across replicas: past the TTL, each replica serves
// the stale answer and the fleet makes one refresh; the other replica then
// adopts the refreshed answer from Redis instead of refreshing too.
func TestStaleRefreshOncePerFleet(t *testing.T) {
	srv := redistest.Start(t)
	clk := newClock()
	a, _ := replica(t, srv.URL(), clk, redistier.Options{})
	b, _ := replica(t, srv.URL(), clk, redistier.Options{})
	var fills atomic.Int64
	fill := func(context.Context) (string, error) { return fmt.Sprint("v", fills.Add(1)), nil }
	ctx := context.Background()
	if _, _, _, err := a.Get(ctx, "k", policy, fill); err != nil {
		t.Fatal(err)
	}
	if _, st, _, _ := b.Get(ctx, "k", policy, fill); st != cache.Hit {
		t.Fatalf("b: %s", st)
	}
	clk.advance(policy.TTL + time.Second)
	v, st, _, err := a.Get(ctx, "k", policy, fill)
	if err != nil || v != "v1" || st != cache.Stale {
		t.Fatalf("a stale: %q %s %v", v, st, err)
	}
	// a's refresh runs in the background; wait for it to land in Redis.
	eventually.True(t, "a refreshes", func() bool { return a.Fills() >= 2 })
	eventually.True(t, "v2 lands in Redis", func() bool {
		got, _ := srv.Do("GET", "clamm:v1:v:k")
		return strings.HasSuffix(got, "text:v2")
	})
	// b's local copy is stale: it serves it and its refresh adopts v2.
	if v, st, _, _ := b.Get(ctx, "k", policy, fill); v != "v1" || st != cache.Stale {
		t.Fatalf("b stale: %q %s", v, st)
	}
	eventually.True(t, "b adopts v2", func() bool { v, _, ok := b.Peek("k"); return ok && v == "v2" })
	if fills.Load() != 2 || b.Fills() != 0 {
		t.Fatalf("fills %d (b %d), want 2 (b 0)", fills.Load(), b.Fills())
	}
}

// Stale-if-error across replicas: a refresh that fails writes nothing, and
// the stale answer is still what Redis and the replicas serve.
func TestFailedRefreshKeepsStale(t *testing.T) {
	srv := redistest.Start(t)
	clk := newClock()
	a, _ := replica(t, srv.URL(), clk, redistier.Options{})
	ctx := context.Background()
	if _, _, _, err := a.Get(ctx, "k", policy, func(context.Context) (string, error) { return "good", nil }); err != nil {
		t.Fatal(err)
	}
	clk.advance(policy.TTL + time.Second)
	failed := make(chan struct{})
	var once sync.Once
	v, st, _, _ := a.Get(ctx, "k", policy, func(context.Context) (string, error) {
		defer once.Do(func() { close(failed) })
		return "", errors.New("upstream down")
	})
	if v != "good" || st != cache.Stale {
		t.Fatalf("%q %s", v, st)
	}
	<-failed
	eventually.True(t, "the failed refresh gives its lease up", func() bool {
		got, _ := srv.Do("EXISTS", "clamm:v1:l:k")
		return got == "0"
	})
	b, _ := replica(t, srv.URL(), clk, redistier.Options{})
	if v, st, _, _ := b.Get(ctx, "k", policy, func(context.Context) (string, error) { return "", errors.New("must not fill") }); v != "good" || st != cache.Stale {
		t.Fatalf("b: %q %s", v, st)
	}
}

// Redis stopped: the replica answers from its upstream fill, reports
// itself degraded, and skips Redis while it backs off; when Redis is back
// the tier recovers.
func TestRedisStoppedFallsBackToLocalFills(t *testing.T) {
	srv := redistest.Start(t)
	c, tr := replica(t, srv.URL(), nil, redistier.Options{Backoff: time.Hour})
	ctx := context.Background()
	srv.Stop()
	for i := range 3 {
		v, st, _, err := c.Get(ctx, fmt.Sprint("k", i), policy, func(context.Context) (string, error) { return "answer", nil })
		if err != nil || v != "answer" || st != cache.Miss {
			t.Fatalf("%q %s %v", v, st, err)
		}
	}
	if down, why := tr.Degraded(); !down || why != "redis unreachable" {
		t.Fatalf("degraded %v %q", down, why)
	}
	if s := tr.Stats(); s.Errors != 1 || s.Skipped < 2 {
		t.Fatalf("stats %+v: one failure, then skipped while down", s)
	}
	srv.Restart()
	if err := tr.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if down, _ := tr.Degraded(); down {
		t.Fatal("still degraded after a good ping")
	}
}

// Redis full (maxmemory reached, noeviction): writes are refused, the fill
// is still answered, and no lease is left behind.
func TestRedisFullStillAnswers(t *testing.T) {
	srv := redistest.Start(t)
	c, tr := replica(t, srv.URL(), nil, redistier.Options{})
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
		if _, err := srv.Do(args...); err != nil {
			t.Fatal(err)
		}
	}
	v, _, _, err := c.Get(context.Background(), "k", policy, func(context.Context) (string, error) { return "answer", nil })
	if err != nil || v != "answer" {
		t.Fatalf("%q %v", v, err)
	}
	down, why := tr.Degraded()
	if !down || !strings.Contains(why, "OOM") {
		t.Fatalf("degraded %v %q", down, why)
	}
	if got, _ := srv.Do("EXISTS", "clamm:v1:l:k"); got != "0" {
		t.Fatal("lease left behind")
	}
}

// A malformed URL is the only error New reports, and it does not echo the
// URL (which may hold a password).
func TestBadURL(t *testing.T) {
	_, err := redistier.New(redistier.Options{URL: "http://user:s3cret@host"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("%v", err)
	}
}

// Replicas' clocks differ: an answer built by a replica whose clock runs
// ahead is served with age 0, never a negative one; one its clock says is
// past TTL+grace is a miss.
func TestClockSkewBetweenReplicas(t *testing.T) {
	srv := redistest.Start(t)
	ahead, behind := newClock(), newClock()
	ahead.advance(5 * time.Second)
	a, _ := replica(t, srv.URL(), ahead, redistier.Options{})
	b, _ := replica(t, srv.URL(), behind, redistier.Options{})
	fill := func(context.Context) (string, error) { return "answer", nil }
	if _, _, _, err := a.Get(context.Background(), "k", policy, fill); err != nil {
		t.Fatal(err)
	}
	if v, st, age, err := b.Get(context.Background(), "k", policy, fill); err != nil || v != "answer" || st != cache.Hit || age != 0 {
		t.Fatalf("%q %s %s %v", v, st, age, err)
	}
	late := newClock()
	late.advance(5*time.Second + policy.TTL + policy.Grace + time.Second) // past TTL+grace after a's (ahead) build time
	c, _ := replica(t, srv.URL(), late, redistier.Options{})
	var fills atomic.Int64
	if _, st, _, _ := c.Get(context.Background(), "k", policy, func(context.Context) (string, error) { fills.Add(1); return "new", nil }); st != cache.Miss || fills.Load() != 1 {
		t.Fatalf("%s fills %d", st, fills.Load())
	}
}

// A record from a clock an hour ahead is served as built at the reader's
// now, and then ages like any other: when it goes stale the refresh does
// not take the same record back as fresh (it would count as built now
// again, forever), it refreshes, and the upstream is asked.
func TestRecordFromTheFutureAges(t *testing.T) {
	srv := redistest.Start(t)
	ahead, local := newClock(), newClock()
	ahead.advance(time.Hour)
	a, _ := replica(t, srv.URL(), ahead, redistier.Options{})
	b, _ := replica(t, srv.URL(), local, redistier.Options{})
	if _, _, _, err := a.Get(context.Background(), "k", policy, func(context.Context) (string, error) { return "future", nil }); err != nil {
		t.Fatal(err)
	}
	var fills atomic.Int64
	fill := func(context.Context) (string, error) { fills.Add(1); return "now", nil }
	if v, st, age, err := b.Get(context.Background(), "k", policy, fill); err != nil || v != "future" || st != cache.Hit || age != 0 {
		t.Fatalf("%q %s %s %v", v, st, age, err)
	}
	local.advance(policy.TTL + time.Second)
	if v, st, _, err := b.Get(context.Background(), "k", policy, fill); err != nil || v != "future" || st != cache.Stale {
		t.Fatalf("past its TTL by the reader's clock: %q %s %v", v, st, err)
	}
	eventually.True(t, "the stale record's refresh", func() bool { return fills.Load() > 0 })
	if fills.Load() != 1 {
		t.Fatalf("%d refreshes filled: the future record was taken back as fresh", fills.Load())
	}
	eventually.True(t, "the refreshed answer served", func() bool {
		v, st, _, _ := b.Get(context.Background(), "k", policy, fill)
		return v == "now" && st == cache.Hit
	})
}

// Close is safe twice (it panicked closing its channel again).
func TestCloseTwice(t *testing.T) {
	srv := redistest.Start(t)
	tr, err := redistier.New(redistier.Options{URL: srv.URL(), Prefix: config.Default().RedisPrefix, OpTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	_ = tr.Close()
}

// The URL forms the tier accepts, and refusals that never quote the URL.
func TestURLForms(t *testing.T) {
	for _, good := range []string{"redis://h:6379/0", "rediss://u:pw@h:6380", "redis+sentinel://:pw@s1:26379/0?master_name=m&addr=s2:26379", "redis+cluster://n1:7000?addr=n2:7001"} {
		tr, err := redistier.New(redistier.Options{URL: good, Prefix: config.Default().RedisPrefix, OpTimeout: time.Second})
		if err != nil {
			t.Errorf("%q: %v", good, err)
			continue
		}
		_ = tr.Close()
	}
	for _, bad := range []string{"redis+sentinel://:s3cret@s1:26379", "redis+mirror://:s3cret@h:1", "s3cret", "http://:s3cret@h:1"} {
		if _, err := redistier.New(redistier.Options{URL: bad, Prefix: config.Default().RedisPrefix, OpTimeout: time.Second}); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// A head one replica publishes reaches every replica on the Redis, its
// own included; another prefix hears none of it.
func TestHeadsReachEveryReplica(t *testing.T) {
	srv := redistest.Start(t)
	got := make([]chan string, 3)
	tiers := make([]*redistier.Tier, 3)
	for i := range tiers {
		o := redistier.Options{}
		if i == 2 {
			o.Prefix = "other:"
		}
		tiers[i] = tier(t, srv.URL(), o)
		ch := make(chan string, 1024)
		got[i] = ch
		tiers[i].OnHeads(func(p string) {
			select {
			case ch <- p:
			default:
			}
		})
	}
	// the subscription is made in the background: publish until heard
	eventually.True(t, "replica 1 hears replica 0's head", func() bool {
		if err := tiers[0].PublishHead(context.Background(), []byte("42161:10")); err != nil {
			t.Fatal(err)
		}
		select {
		case p := <-got[1]:
			return p == "42161:10"
		default:
			return false
		}
	})
	if p := <-got[0]; p != "42161:10" {
		t.Fatalf("the publisher heard %q", p)
	}
	select {
	case p := <-got[2]:
		t.Fatalf("another prefix heard %q", p)
	default:
	}
}
