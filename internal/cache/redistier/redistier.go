// Package redistier is the cache's shared tier on Redis (or Valkey): the
// store several gateway replicas read on a local miss, and the lease that
// makes one fill per key across all of them (cache.Shared).
//
// Keys, under a prefix (CLAMM_REDIS_PREFIX):
//
//   - prefix+"v:"+key holds a record (build time + encoded answer), written
//     with the entry's TTL plus its stale grace, so Redis drops it when no
//     replica may serve it any more;
//   - prefix+"l:"+key is the fill lease, SET NX PX with a random token,
//     renewed by its holder while it fills; a holder that dies stops
//     renewing and the lease expires after LeaseTTL;
//   - prefix+"filled" is a pub/sub channel: a holder publishes the key it
//     stored or gave up, so waiters look again at once instead of at their
//     next poll. Notices are a shortcut; polling alone is correct.
//
// Redis is an optimisation, never a dependency: every command has a short
// deadline (OpTimeout), and after any failure the tier reports itself down
// for Backoff, answering at once with ErrDown, so a Redis that is stopped,
// slow or full costs each miss at most one OpTimeout before the replica
// carries on alone from its upstreams. Degraded reports that state for
// /readyz and Stats counts it for /metrics.
//
// One Redis primary, a primary behind Sentinel, or a Redis Cluster, by the
// URL's scheme (url.go), through go-redis's universal client. On a Cluster
// a key's record and lease carry the key as a hash tag, so the scripts that
// touch both run in one slot; the notices' PUBLISH reaches every node.
package redistier

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
)

// Options configure a Tier.
type Options struct {
	// URL names the Redis: redis://[user:password@]host:port[/db], or
	// rediss:// for TLS. It may hold a password: never log it.
	URL string
	// Prefix namespaces every key (required); replicas that share answers
	// must share it.
	Prefix string
	// OpTimeout bounds each Redis command (required).
	OpTimeout time.Duration
	// LeaseTTL is how long a fill lease lives without renewal (default
	// 2s): how long the fleet waits for a holder that died. The holder
	// renews it every LeaseTTL/3 while it fills.
	LeaseTTL time.Duration
	// Poll is how often a waiter looks again without a notice (default
	// 100ms).
	Poll time.Duration
	// Backoff is how long after a failure the tier stays down, skipping
	// Redis (default 1s).
	Backoff time.Duration
}

var tracer = otel.Tracer("github.com/clamm-gateway/clamm-gateway/internal/cache/redistier")

// ErrDown is returned while the tier backs off after a Redis failure.
var ErrDown = errors.New("redis tier: down after a recent failure")

// Tier is a cache.Shared on one Redis.
type Tier struct {
	opts    Options
	client  redis.UniversalClient
	cluster bool // keys carry a hash tag: a record and its lease in one slot
	sub     *redis.PubSub
	channel string
	// heads is the channel replicas announce their chains' heads on;
	// onHead hears what arrives there (OnHeads).
	heads  string
	onHead atomic.Pointer[func(payload string)]

	downUntil atomic.Int64 // Unix nanoseconds
	lastErr   atomic.Pointer[string]
	errs      atomic.Int64
	skipped   atomic.Int64

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}
	done    chan struct{}
	closed  sync.Once
}

// Stats counts the tier's failures.
type Stats struct {
	Errors  int64 // Redis commands that failed (timeouts, refusals, OOM)
	Skipped int64 // calls answered ErrDown without trying Redis
}

func init() {
	// go-redis logs reconnects and pool errors through its own logger; the
	// tier counts failures and reports them in /readyz and /metrics, and
	// its errors could echo connection details, so it stays quiet.
	redis.SetLogger(quiet{})
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// New connects lazily: a Redis that is down at start makes a degraded
// tier, not an error. Only a malformed URL is one.
func New(opts Options) (*Tier, error) {
	uo, err := parseURL(opts.URL)
	if err != nil {
		return nil, err
	}
	if opts.Prefix == "" || opts.OpTimeout <= 0 {
		// Validated configuration supplies both (internal/config).
		return nil, errors.New("redis tier: Prefix and OpTimeout are required")
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 2 * time.Second
	}
	if opts.Poll <= 0 {
		opts.Poll = 100 * time.Millisecond
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	uo.DialTimeout, uo.ReadTimeout, uo.WriteTimeout, uo.PoolTimeout = opts.OpTimeout, opts.OpTimeout, opts.OpTimeout, opts.OpTimeout
	uo.ContextTimeoutEnabled = true
	uo.MaxRetries = -1 // a retry would spend a second OpTimeout; the cache falls back instead
	uo.DialerRetries = 1
	uo.DisableIdentity = true
	uo.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	t := &Tier{opts: opts, client: redis.NewUniversalClient(uo), cluster: uo.IsClusterMode, channel: opts.Prefix + "filled", heads: opts.Prefix + "heads",
		waiters: map[string]map[chan struct{}]struct{}{}, done: make(chan struct{})}
	t.sub = t.client.Subscribe(context.Background(), t.channel, t.heads)
	go t.listen()
	return t, nil
}

// Close stops the subscription and closes the connections. Safe to call
// more than once (a test's cleanup and the composition root's both may).
func (t *Tier) Close() error {
	var err error
	t.closed.Do(func() {
		close(t.done)
		_ = t.sub.Close()
		err = t.client.Close()
	})
	return err
}

// listen wakes the waiters of each key a holder announces. go-redis
// resubscribes after a lost connection; notices sent meanwhile are lost,
// and the waiters' polls cover them.
func (t *Tier) listen() {
	ch := t.sub.Channel(redis.WithChannelSize(256))
	for {
		select {
		case <-t.done:
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			if m.Channel == t.heads {
				if fn := t.onHead.Load(); fn != nil {
					(*fn)(m.Payload)
				}
				continue
			}
			t.mu.Lock()
			for w := range t.waiters[m.Payload] {
				select {
				case w <- struct{}{}:
				default:
				}
			}
			t.mu.Unlock()
		}
	}
}

// PublishHead announces payload (a chain's head event, as the caller
// encodes it) to every replica on the tier's Redis, this one included,
// so the fleet's streams move together. Best effort, like every write
// of the tier: a replica that misses it follows its own feed.
func (t *Tier) PublishHead(ctx context.Context, payload []byte) error {
	return t.do(ctx, func(ctx context.Context) error { return t.client.Publish(ctx, t.heads, payload).Err() })
}

// OnHeads makes fn hear every head payload published on the tier (its
// own included), on the tier's listening goroutine: fn must not block.
func (t *Tier) OnHeads(fn func(payload string)) { t.onHead.Store(&fn) }

// Stats reports the failure counters.
func (t *Tier) Stats() Stats { return Stats{Errors: t.errs.Load(), Skipped: t.skipped.Load()} }

// Failures is Stats for callers that do not import this package.
func (t *Tier) Failures() (errs, skipped int64) { return t.errs.Load(), t.skipped.Load() }

// Degraded reports whether the tier is backing off after a failure, and
// the failure. The text names the error's kind, never the URL.
func (t *Tier) Degraded() (bool, string) {
	if time.Now().UnixNano() < t.downUntil.Load() {
		if p := t.lastErr.Load(); p != nil {
			return true, *p
		}
		return true, "redis unavailable"
	}
	return false, ""
}

// Ping checks Redis now, even while the tier is down (for /readyz), with a
// write (a short-lived probe key), since a full Redis still answers PING
// but refuses what a fill needs. A success ends the back-off early, a
// failure is recorded like any command's.
func (t *Tier) Ping(ctx context.Context) error {
	return t.try(ctx, func(ctx context.Context) error {
		return t.client.Set(ctx, t.opts.Prefix+"probe", "1", time.Second).Err()
	})
}

// do runs one Redis round trip under OpTimeout, unless the tier is down.
func (t *Tier) do(ctx context.Context, f func(context.Context) error) error {
	if time.Now().UnixNano() < t.downUntil.Load() {
		t.skipped.Add(1)
		return ErrDown
	}
	return t.try(ctx, f)
}

// try runs one Redis round trip under OpTimeout. A failure takes the tier
// down for Backoff; the caller's own context ending is not Redis's
// failure.
func (t *Tier) try(ctx context.Context, f func(context.Context) error) error {
	// A child span per Redis round trip (a no-op with tracing off; the
	// tier is only asked on local misses).
	ctx, span := tracer.Start(ctx, "redis", trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	octx, cancel := context.WithTimeout(ctx, t.opts.OpTimeout)
	defer cancel()
	err := f(octx)
	if err == nil || errors.Is(err, redis.Nil) {
		if t.downUntil.Load() != 0 {
			t.downUntil.Store(0)
		}
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	t.errs.Add(1)
	msg := describe(err)
	t.lastErr.Store(&msg)
	t.downUntil.Store(time.Now().Add(t.opts.Backoff).UnixNano())
	return fmt.Errorf("redis tier: %s", msg)
}

// describe names a Redis failure without the address or credentials a
// dial error would carry.
func describe(err error) string {
	var re redis.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return "redis timed out"
	case errors.As(err, &re):
		s := re.Error()
		if len(s) > 80 {
			s = s[:80]
		}
		return "redis refused a command: " + s // server replies (OOM, READONLY, NOAUTH) carry no secrets
	default:
		return "redis unreachable"
	}
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// valueKey and leaseKey name a key's record and lease. On a Cluster both
// carry the key as a hash tag ({key}): the scripts that read or write them
// together must find them in one slot.
func (t *Tier) valueKey(key string) string { return t.opts.Prefix + "v:" + t.tagged(key) }
func (t *Tier) leaseKey(key string) string { return t.opts.Prefix + "l:" + t.tagged(key) }

func (t *Tier) tagged(key string) string {
	if t.cluster {
		return "{" + key + "}"
	}
	return key
}

// Load implements cache.Shared.
func (t *Tier) Load(ctx context.Context, key string) ([]byte, error) {
	var b []byte
	err := t.do(ctx, func(ctx context.Context) error {
		var err error
		b, err = t.client.Get(ctx, t.valueKey(key)).Bytes()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return b, err
}

// loadOrLease returns the record, or takes the lease when there is none:
// one round trip, and atomic, so a record stored between a look and a
// lease cannot be filled twice. A lease found without an expiry (written
// by hand, by a foreign client, or left by a Redis that lost the PX) is
// given one: every lease is bounded, so a waiter takes it over at the
// latest LeaseTTL later instead of waiting on it to its deadline.
var loadOrLease = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then return {1, v} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {2} end
if redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
return {0}
`)

// tryLease is SET NX PX, bounding a lease found without an expiry as
// loadOrLease does.
var tryLease = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// LoadOrLease implements cache.Shared.
func (t *Tier) LoadOrLease(ctx context.Context, key string) ([]byte, cache.Lease, error) {
	token := newToken()
	var res []any
	err := t.do(ctx, func(ctx context.Context) error {
		var err error
		res, err = loadOrLease.Run(ctx, t.client, []string{t.valueKey(key), t.leaseKey(key)}, token, t.opts.LeaseTTL.Milliseconds()).Slice()
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if len(res) == 0 {
		return nil, nil, errors.New("redis tier: empty script reply")
	}
	switch res[0] {
	case int64(1):
		if len(res) == 2 {
			if s, ok := res[1].(string); ok {
				return []byte(s), nil, nil
			}
		}
		return nil, nil, errors.New("redis tier: malformed script reply")
	case int64(2):
		return nil, t.hold(key, token), nil
	}
	return nil, nil, nil
}

// TryLease implements cache.Shared.
func (t *Tier) TryLease(ctx context.Context, key string) (cache.Lease, error) {
	token := newToken()
	var ok bool
	err := t.do(ctx, func(ctx context.Context) error {
		var err error
		n, err := tryLease.Run(ctx, t.client, []string{t.leaseKey(key)}, token, t.opts.LeaseTTL.Milliseconds()).Int()
		ok = n == 1
		return err
	})
	if err != nil || !ok {
		return nil, err
	}
	return t.hold(key, token), nil
}

// Wait implements cache.Shared: it returns on a notice for key, after
// Poll, or with ctx's error; ErrDown at once while the tier is down.
func (t *Tier) Wait(ctx context.Context, key string) error {
	if time.Now().UnixNano() < t.downUntil.Load() {
		t.skipped.Add(1)
		return ErrDown
	}
	w := make(chan struct{}, 1)
	t.mu.Lock()
	set := t.waiters[key]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		t.waiters[key] = set
	}
	set[w] = struct{}{}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(set, w)
		if len(set) == 0 {
			delete(t.waiters, key) // set is still t.waiters[key]: an empty set is always removed under mu
		}
		t.mu.Unlock()
	}()
	timer := time.NewTimer(t.opts.Poll)
	defer timer.Stop()
	select {
	case <-w:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lease is a held fill lease, renewed until stored or released.
type lease struct {
	t          *Tier
	key, token string
	once       sync.Once
	stop       chan struct{}
	renewed    chan struct{} // closed when the renewer has exited
}

func (t *Tier) hold(key, token string) *lease {
	l := &lease{t: t, key: key, token: token, stop: make(chan struct{}), renewed: make(chan struct{})}
	go l.renew()
	return l
}

var renewLease = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// renew keeps the lease alive while its holder fills: a fill may take
// longer than LeaseTTL, and only a dead holder should lose it.
func (l *lease) renew() {
	defer close(l.renewed)
	tick := time.NewTicker(l.t.opts.LeaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
			_ = l.t.do(context.Background(), func(ctx context.Context) error {
				return renewLease.Run(ctx, l.t.client, []string{l.t.leaseKey(l.key)}, l.token, l.t.opts.LeaseTTL.Milliseconds()).Err()
			})
		}
	}
}

// storeAndRelease writes the record, gives the lease up if still ours and
// tells the waiters, in one step.
var storeAndRelease = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
`)

var release = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
`)

// Store implements cache.Lease.
func (l *lease) Store(ctx context.Context, record []byte, ttl time.Duration) error {
	if !l.end() {
		return errors.New("redis tier: lease already given up")
	}
	ms := ttl.Milliseconds()
	if ms <= 0 {
		l.releaseNow()
		return nil
	}
	err := l.t.do(ctx, func(ctx context.Context) error {
		return storeAndRelease.Run(ctx, l.t.client, []string{l.t.valueKey(l.key), l.t.leaseKey(l.key)},
			record, strconv.FormatInt(ms, 10), l.token, l.t.channel, l.key).Err()
	})
	if err != nil {
		l.releaseNow() // e.g. OOM: the SET failed, the lease must not linger
	}
	return err
}

// Release implements cache.Lease.
func (l *lease) Release() {
	if l.end() {
		l.releaseNow()
	}
}

// end stops renewal; false if the lease was already ended.
func (l *lease) end() bool {
	first := false
	l.once.Do(func() {
		first = true
		close(l.stop)
		<-l.renewed
	})
	return first
}

// releaseNow gives the lease up even while the tier is down (a failed
// Store has just taken it down): a lease left behind holds the fleet
// back for LeaseTTL.
func (l *lease) releaseNow() {
	_ = l.t.try(context.Background(), func(ctx context.Context) error {
		return release.Run(ctx, l.t.client, []string{l.t.leaseKey(l.key)}, l.token, l.t.channel, l.key).Err()
	})
}
