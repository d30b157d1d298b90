package systemtest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// gate holds upstream requests until opened; it counts the requests that
// reach it. With holdFirst only the first request waits (a holder stuck
// mid-fill), the rest pass.
type gate struct {
	next      http.Handler
	open      chan struct{}
	holdFirst bool
	seen      atomic.Int64
	arrived   chan struct{} // closed on the first request
	once      sync.Once
}

func newGate(next http.Handler, holdFirst bool) *gate {
	return &gate{next: next, open: make(chan struct{}), holdFirst: holdFirst, arrived: make(chan struct{})}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := g.seen.Add(1)
	g.once.Do(func() { close(g.arrived) })
	if !g.holdFirst || n == 1 {
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *gate) release() {
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

// replica is one gateway of a fleet on one Redis, reading the fleet's
// shared upstream fakes (the subgraph behind sg).
type replica struct {
	srv  *gateway.Server
	tier *redistier.Tier
	m    *metrics.Metrics
}

func newReplica(t *testing.T, f *scenario.Fakes, sg http.Handler, redisURL string, to redistier.Options, adjust func(*gateway.Options)) *replica {
	t.Helper()
	to.URL = redisURL
	if to.Prefix == "" {
		to.Prefix = config.Default().RedisPrefix
	}
	if to.OpTimeout == 0 {
		// Generous: a loaded test machine must not make a healthy Redis
		// look failed; the fault test sets the default deadline itself.
		to.OpTimeout = 5 * time.Second
	}
	tier, err := redistier.New(to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tier.Close() })
	m := metrics.New()
	tr := f.Transports()
	tr.Subgraph = transport(sg)
	srv := newApp(t, app.Options{Transports: map[uint64]upstream.Transports{42161: tr}, Metrics: m, Gateway: func(o *gateway.Options) {
		o.CacheMaxEntries, o.Shared = 100, tier
		if adjust != nil {
			adjust(o)
		}
	}})
	return &replica{srv: srv, tier: tier, m: m}
}

// sharedMetric reads one shared-tier series from the replica's /metrics.
func (r *replica) sharedMetric(t *testing.T, series string) int64 {
	t.Helper()
	body := get(t, r.srv, gateway.PathMetrics).Body.String()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no %s in /metrics", series)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return int64(v)
}

// redisLink is a toxiproxy between a replica and Redis, to cut or slow
// that replica's connection alone.
func redisLink(t *testing.T, rds *redistest.Server) *toxiproxy.Proxy {
	t.Helper()
	zerolog.SetGlobalLevel(zerolog.Disabled) // toxics log through zerolog's global logger
	tp := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	link := toxiproxy.NewProxy(tp, "redis", "127.0.0.1:0", rds.Addr)
	if err := link.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(link.Stop)
	return link
}

// oneFillCost is what one strikes-chain fill asks of the subgraph: a
// fresh gateway without Redis on fresh fakes, asked once.
func oneFillCost(t *testing.T) int64 {
	srv, f := newFakeServer(t)
	if rec := get(t, srv, strikes); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	return f.Subgraph.Requests()
}

// Three gateways on one Redis: 100 concurrent identical misses spread
// over the three make one upstream fill, and every answer carries the
// same body, ETag and X-Subgraph-Block.
func TestFleetFillsOncePerKey(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	g := newGate(f.Subgraph, false)
	var fleet []*replica
	for range 3 {
		fleet = append(fleet, newReplica(t, f, g, rds.URL(), redistier.Options{}, nil))
	}
	recs := make([]*httptest.ResponseRecorder, 100)
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = get(t, fleet[i%3].srv, strikes)
		}()
	}
	// Hold the fill until the two replicas without the lease wait for it:
	// the misses were concurrent across the fleet, not one after another.
	<-g.arrived
	eventually.True(t, "two replicas wait on the lease", func() bool {
		waiting := 0
		for _, r := range fleet {
			if r.sharedMetric(t, `clamm_cache_shared_results_total{result="wait"}`) > 0 {
				waiting++
			}
		}
		return waiting >= 2
	})
	g.release()
	wg.Wait()

	var fills int64
	for _, r := range fleet {
		fills += r.srv.CacheFills()
	}
	if fills != 1 {
		t.Fatalf("%d fills across the fleet, want 1", fills)
	}
	if want := oneFillCost(t); f.Subgraph.Requests() != want {
		t.Fatalf("subgraph asked %d times, one fill asks %d", f.Subgraph.Requests(), want)
	}
	first := recs[0]
	for i, rec := range recs {
		if rec.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
		}
		for _, h := range []string{"Etag", "X-Subgraph-Block"} {
			if rec.Header().Get(h) != first.Header().Get(h) || rec.Header().Get(h) == "" {
				t.Fatalf("request %d: %s %q, first %q", i, h, rec.Header().Get(h), first.Header().Get(h))
			}
		}
		if rec.Body.String() != first.Body.String() {
			t.Fatalf("request %d: body differs", i)
		}
	}
}

// A key filled on one replica is a HIT on the others: same body, ETag,
// X-Subgraph-Block and Age, no upstream request. If-None-Match with the
// ETag one replica gave gets 304 from another.
func TestFilledOnOneIsHitOnOthers(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	var fleet []*replica
	for range 3 {
		fleet = append(fleet, newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil))
	}
	a := get(t, fleet[0].srv, strikes)
	if a.Code != http.StatusOK || a.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("%d %s", a.Code, a.Header().Get("X-Cache"))
	}
	asked := f.Subgraph.Requests()
	for _, r := range fleet[1:] {
		b := get(t, r.srv, strikes)
		if b.Code != http.StatusOK || b.Header().Get("X-Cache") != "HIT" {
			t.Fatalf("%d %s", b.Code, b.Header().Get("X-Cache"))
		}
		for _, h := range []string{"Etag", "X-Subgraph-Block", "Content-Length", "Content-Type"} {
			if b.Header().Get(h) != a.Header().Get(h) {
				t.Errorf("%s: %q vs %q", h, b.Header().Get(h), a.Header().Get(h))
			}
		}
		if b.Body.String() != a.Body.String() {
			t.Error("body differs")
		}
		if age, err := strconv.Atoi(b.Header().Get("Age")); err != nil || age > 1 {
			t.Errorf("Age %q: counted from the first fill, which was just now", b.Header().Get("Age"))
		}
		req := httptest.NewRequest(http.MethodGet, strikes, nil)
		req.Header.Set("If-None-Match", a.Header().Get("Etag"))
		rec := httptest.NewRecorder()
		r.srv.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotModified {
			t.Errorf("If-None-Match across replicas: %d", rec.Code)
		}
	}
	if f.Subgraph.Requests() != asked {
		t.Fatal("a hit on another replica asked the subgraph")
	}
}

// Killing the lease holder mid-fill: its Redis connection is cut (as a
// crashed process's would be) while its upstream read hangs. Its lease
// is no longer renewed and expires; another replica takes it, fills, and
// every client of the living replicas gets its answer.
func TestDeadLeaseHolderIsTakenOver(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	g := newGate(f.Subgraph, true) // the first fill (the holder's) hangs
	defer g.release()
	holderLink := redisLink(t, rds)
	to := redistier.Options{LeaseTTL: 400 * time.Millisecond}
	holder := newReplica(t, f, g, "redis://"+holderLink.Listen, to, func(o *gateway.Options) { o.RequestTimeout = 10 * time.Second })
	others := []*replica{newReplica(t, f, g, rds.URL(), to, nil), newReplica(t, f, g, rds.URL(), to, nil)}

	go get(t, holder.srv, strikes) // its client would see the process die
	<-g.arrived                    // the holder has the lease and is mid-fill
	if leases, _ := rds.Do("KEYS", "clamm:v1:l:*"); leases == "" {
		t.Fatal("the holder took no lease")
	}
	recs := make([]*httptest.ResponseRecorder, 20)
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func() { defer wg.Done(); recs[i] = get(t, others[i%2].srv, strikes) }()
	}
	for _, r := range others {
		eventually.True(t, "the replica waits on the lease", func() bool {
			return r.sharedMetric(t, `clamm_cache_shared_results_total{result="wait"}`) > 0
		})
	}
	killed := time.Now()
	holderLink.Stop()
	wg.Wait()
	t.Logf("answered %s after the holder died (lease %s)", time.Since(killed).Round(time.Millisecond), to.LeaseTTL)
	for i, rec := range recs {
		if rec.Code != http.StatusOK {
			t.Fatalf("client %d of a living replica: %d %s", i, rec.Code, rec.Body)
		}
	}
	if fills := others[0].srv.CacheFills() + others[1].srv.CacheFills(); fills != 1 {
		t.Fatalf("%d fills among the living, want 1", fills)
	}
	select {
	case <-g.open:
		t.Fatal("the holder's fill was released: the takeover did not happen while it hung")
	default:
	}
}

// Redis stopped, slowed past the command deadline, refusing connections,
// and full: every request is still answered (200: within the request
// deadline, or it would be a 504) from the replica's own fill, /readyz
// stays ready and says degraded, /metrics counts it.
func TestRedisFaultsStillAnswer(t *testing.T) {
	cases := []struct {
		name  string
		fault func(t *testing.T, rds *redistest.Server, link *toxiproxy.Proxy)
	}{
		{"stopped", func(t *testing.T, rds *redistest.Server, _ *toxiproxy.Proxy) { rds.Stop() }},
		{"slowed", func(t *testing.T, _ *redistest.Server, link *toxiproxy.Proxy) {
			addToxic(t, link, `{"name":"slow","type":"latency","stream":"downstream","attributes":{"latency":3000}}`)
		}},
		{"refusing", func(t *testing.T, _ *redistest.Server, link *toxiproxy.Proxy) { link.Stop() }},
		{"full", func(t *testing.T, rds *redistest.Server, _ *toxiproxy.Proxy) {
			for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", "1"}} {
				if _, err := rds.Do(args...); err != nil {
					t.Fatal(err)
				}
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rds := redistest.Start(t)
			link := redisLink(t, rds)
			f := newFakesOnly(t)
			deadline := 2 * time.Second
			r := newReplica(t, f, f.Subgraph, "redis://"+link.Listen, redistier.Options{OpTimeout: 150 * time.Millisecond}, func(o *gateway.Options) { o.RequestTimeout = deadline })
			if rec := get(t, r.srv, strikes); rec.Code != http.StatusOK { // Redis healthy: filled and shared
				t.Fatalf("%d", rec.Code)
			}
			c.fault(t, rds, link)
			for i := range 5 {
				path := fmt.Sprintf("%s?optionMarket=%s&chainId=42161&callsReach=%d&putsReach=%d", gateway.PathStrikesChain, wethUSDC, 10+i, 10)
				start := time.Now()
				rec := get(t, r.srv, path)
				if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
					t.Fatalf("request %d: %d %s %s", i, rec.Code, rec.Header().Get("X-Cache"), rec.Body)
				}
				t.Logf("request %d answered in %s (deadline %s)", i, time.Since(start).Round(time.Millisecond), deadline)
			}
			if rec := get(t, r.srv, strikes); rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "HIT" {
				t.Fatalf("local hit: %d %s", rec.Code, rec.Header().Get("X-Cache"))
			}
			rec := get(t, r.srv, gateway.PathReadyz)
			var ready struct {
				Ready       bool              `json:"ready"`
				SharedCache map[string]string `json:"sharedCache"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &ready); err != nil {
				t.Fatal(err)
			}
			if rec.Code != http.StatusOK || !ready.Ready || ready.SharedCache["status"] != "degraded" || ready.SharedCache["reason"] == "" {
				t.Fatalf("/readyz %d %s", rec.Code, rec.Body)
			}
			if r.sharedMetric(t, "clamm_cache_shared_degraded") != 1 || r.sharedMetric(t, "clamm_cache_shared_errors_total") == 0 ||
				r.sharedMetric(t, `clamm_cache_shared_results_total{result="fallback"}`) == 0 {
				t.Fatal("/metrics does not count the failure")
			}
		})
	}
}

// A record in Redis that does not decode as the gateway's (foreign bytes,
// or a body that does not match its ETag) is a miss: filled and
// overwritten, never an error or a wrong answer.
func TestCorruptSharedRecordIsMiss(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	a := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
	good := get(t, a.srv, strikes)
	key, err := rds.Do("KEYS", "clamm:v1:v:*") // the one answer stored
	if err != nil || key == "" {
		t.Fatalf("no record: %v", err)
	}
	rec, err := rds.Do("GET", key)
	if err != nil || rec == "" {
		t.Fatalf("no record under %s: %v", key, err)
	}
	tampered := []byte(rec)
	tampered[len(tampered)-2] ^= 1 // one bit of the body
	// The block's hash comes before the body in a record: one that is not
	// 0x and 64 hex digits (same length) makes the record foreign; it was
	// served as X-Block-Hash.
	hash := good.Header().Get("X-Block-Hash")
	if len(hash) != 66 || !strings.Contains(rec, hash) {
		t.Fatalf("the record does not hold the answer's block hash %q", hash)
	}
	badHash := strings.Replace(rec, hash, hash[:10]+"zz"+hash[12:], 1)
	for _, junk := range []string{"garbage", string(tampered), forgedRecord("<html><body>not JSON</body></html>"), badHash} {
		if _, err := rds.Do("SET", key, junk); err != nil {
			t.Fatal(err)
		}
		b := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
		got := get(t, b.srv, strikes)
		if got.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("X-Content-Type-Options %q", got.Header().Get("X-Content-Type-Options"))
		}
		if got.Code != http.StatusOK || got.Header().Get("X-Cache") != "MISS" || got.Body.String() != good.Body.String() {
			t.Fatalf("%d %s", got.Code, got.Header().Get("X-Cache"))
		}
		if b.sharedMetric(t, `clamm_cache_shared_results_total{result="undecodable"}`) != 1 {
			t.Fatal("not counted as undecodable")
		}
	}
}

// With the tier on, a local hit stays what it was: no Redis command and
// one allocation (the cache key).
func TestLocalHitLeavesRedisAlone(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	r := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
	if rec := get(t, r.srv, strikes); rec.Code != http.StatusOK {
		t.Fatalf("%d", rec.Code)
	}
	commands := func() string {
		stats, err := rds.Do("INFO", "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		// The data commands only: INFO counts itself.
		return fmt.Sprint(regexp.MustCompile(`cmdstat_(get|set|evalsha|eval|publish|pexpire):calls=\d+`).FindAllString(stats, -1))
	}
	before := commands()
	if !strings.Contains(before, "evalsha") {
		t.Fatalf("the fill's commands are not counted: %s", before)
	}
	req := httptest.NewRequest(http.MethodGet, strikes, nil)
	w := &discard{h: http.Header{}}
	allocs := testing.AllocsPerRun(200, func() {
		clear(w.h)
		r.srv.ServeHTTP(w, req)
	})
	if w.h.Get("X-Cache") != "HIT" {
		t.Fatalf("not a hit: %v", w.h)
	}
	if after := commands(); after != before {
		t.Fatalf("local hits sent Redis commands: %s -> %s", before, after)
	}
	if allocs > 1 {
		t.Fatalf("%.1f allocations per local hit with the tier on, want 1", allocs)
	}
}

// storedKeys fills strikes on a throwaway replica and returns the Redis
// keys of its record and of its fill lease, the record deleted again.
func storedKeys(t *testing.T, f *scenario.Fakes, rds *redistest.Server) (value, lease string) {
	t.Helper()
	a := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
	if rec := get(t, a.srv, strikes); rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	value, err := rds.Do("KEYS", "clamm:v1:v:*")
	if err != nil || value == "" {
		t.Fatalf("no record: %v", err)
	}
	if _, err := rds.Do("DEL", value); err != nil {
		t.Fatal(err)
	}
	return value, strings.Replace(value, "clamm:v1:v:", "clamm:v1:l:", 1)
}

// A lease written without an expiry (by hand, by a foreign client) is
// bounded by the first replica that finds it: after LeaseTTL it is taken
// over and filled, instead of every replica waiting on it to its deadline
// and answering 500.
func TestLeaseWithoutExpiryIsTakenOver(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	_, lease := storedKeys(t, f, rds)
	if _, err := rds.Do("SET", lease, "someone-else"); err != nil {
		t.Fatal(err)
	}
	r := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{LeaseTTL: 300 * time.Millisecond},
		func(o *gateway.Options) { o.RequestTimeout = 5 * time.Second })
	rec := get(t, r.srv, strikes)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if r.srv.CacheFills() != 1 {
		t.Fatalf("%d fills, want 1 (after taking the lease over)", r.srv.CacheFills())
	}
}

// Requests waiting on a lease another replica holds (alive, renewing, its
// fill hung) end at their deadline with the documented 504 TIMEOUT: the
// one that started the wait and those that joined it after it had started
// (seen in the replica's metrics, not after a pause), whose own deadline
// had not passed when the shared wait ended.
//
// Nothing here needs the machine to be quick: the holder's lease and fill
// outlive the test however long it takes, and a first request that a
// loaded machine kept from reaching the lease before its deadline (its
// fill then runs on its own, past the deadline, and may even fill the
// replica's cache) tested nothing: it is tried again on a new replica
// until one is seen waiting.
func TestWaitOnAnotherReplicasLeaseEndsIn504(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	g := newGate(f.Subgraph, true)
	defer g.release()
	holder := newReplica(t, f, g, rds.URL(), redistier.Options{LeaseTTL: time.Hour},
		func(o *gateway.Options) { o.RequestTimeout = time.Hour })
	go get(t, holder.srv, strikes)
	<-g.arrived
	var waiter *replica
	var first chan *httptest.ResponseRecorder
	attempts := 0
	eventually.True(t, "a first request waits on the lease", func() bool {
		attempts++
		waiter = newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{},
			func(o *gateway.Options) { o.RequestTimeout = 2 * time.Second })
		first = make(chan *httptest.ResponseRecorder, 1)
		go func() { first <- get(t, waiter.srv, strikes) }()
		for {
			if waiter.sharedMetric(t, `clamm_cache_shared_results_total{result="wait"}`) > 0 {
				return true
			}
			select {
			case rec := <-first:
				t.Logf("attempt %d: the first request ended before it reached the lease: %d", attempts, rec.Code)
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	recs := make([]*httptest.ResponseRecorder, 10)
	var wg sync.WaitGroup
	wg.Add(len(recs))
	go func() { defer wg.Done(); recs[0] = <-first }()
	for i := 1; i < len(recs); i++ {
		go func() { defer wg.Done(); recs[i] = get(t, waiter.srv, strikes) }()
	}
	wg.Wait()
	for i, rec := range recs {
		if rec.Code != http.StatusGatewayTimeout || !strings.Contains(rec.Body.String(), `"TIMEOUT"`) {
			t.Errorf("request %d: %d %s", i, rec.Code, rec.Body)
		}
	}
}

// forgedRecord is a shared-tier record as the gateway lays it out (record
// version, build time now; block, ETag, body length, body, no gzip), whose ETag matches its
// body: what anyone able to write to the Redis can make.
func forgedRecord(body string) string {
	sum := sha256.Sum256([]byte(body))
	tag := `"` + hex.EncodeToString(sum[:16]) + `"`
	b := make([]byte, 9, 64)
	b[0] = 2
	binary.BigEndian.PutUint64(b[1:], uint64(time.Now().UnixNano()))
	b = binary.BigEndian.AppendUint64(b, 1)
	b = append(b, byte(len(tag)))
	b = binary.BigEndian.AppendUint32(append(b, tag...), uint32(len(body)))
	return string(append(b, body...))
}
