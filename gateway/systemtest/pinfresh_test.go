package systemtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/graphnodetest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/internal/upstream"
)

// upstreamLog records the upstream requests of a gateway in the order they
// were sent: a subgraph request by its operation name ("Meta",
// "Strikes"), an RPC request as "rpc". While hold is set, `_meta`
// requests wait for it to close.
type upstreamLog struct {
	mu   sync.Mutex
	ops  []string
	hold chan struct{}
}

func (l *upstreamLog) add(op string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, op)
	if op == "Meta" {
		return l.hold
	}
	return nil
}

func (l *upstreamLog) reset() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ops := l.ops
	l.ops = nil
	return ops
}

func (l *upstreamLog) count(op string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, o := range l.ops {
		if o == op {
			n++
		}
	}
	return n
}

// metaBeforeChain reports whether `_meta` was asked before the first RPC.
func metaBeforeChain(ops []string) bool {
	for _, o := range ops {
		switch o {
		case "rpc":
			return false
		case "Meta":
			return true
		}
	}
	return false
}

// logged logs each request into log before passing it on.
type logged struct {
	rt       http.RoundTripper
	log      *upstreamLog
	subgraph bool
}

func (l logged) RoundTrip(r *http.Request) (*http.Response, error) {
	op := "rpc"
	if l.subgraph {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var q struct {
			OperationName string `json:"operationName"`
		}
		_ = json.Unmarshal(body, &q)
		op = q.OperationName
	}
	if hold := l.log.add(op); hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return l.rt.RoundTrip(r)
}

// loggedApp is the gateway over the demo scenario's fakes with its
// upstream requests logged, as the command builds it (head ages from the
// configuration), not yet started.
func loggedApp(t *testing.T) (*app.App, *scenario.Fakes, *upstreamLog) {
	t.Helper()
	f := newFakesOnly(t)
	log := &upstreamLog{}
	a, err := app.New(app.Options{Config: arbitrumOnly(), Transports: map[uint64]upstream.Transports{42161: {
		Subgraph: logged{transport(f.Subgraph), log, true}, RPC: logged{transport(f.Node), log, false}, Quote: transport(f.OneInch)}}})
	if err != nil {
		t.Fatal(err)
	}
	return a, f, log
}

// strikesMiss asks a strikes chain no earlier request asked (reach k) and
// returns the block its answer names.
func strikesMiss(t *testing.T, a *app.App, k int) uint64 {
	t.Helper()
	n, err := tryStrikesMiss(t, a, k)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// tryStrikesMiss is strikesMiss for goroutines other than the test's.
func tryStrikesMiss(t *testing.T, a *app.App, k int) (uint64, error) {
	rec := get(t, a.Server, fmt.Sprintf("%s?optionMarket=%s&chainId=42161&callsReach=%d&putsReach=100", gateway.PathStrikesChain, wethUSDC, k))
	if rec.Code != http.StatusOK || rec.Header().Get("X-Cache") != "MISS" {
		return 0, fmt.Errorf("strikes chain %d: %d %s %s", k, rec.Code, rec.Header().Get("X-Cache"), rec.Body)
	}
	return strconv.ParseUint(rec.Header().Get("X-Block-Number"), 10, 64)
}

// advanceSubgraph moves the node and the subgraph's indexed head one block.
func advanceSubgraph(f *scenario.Fakes) uint64 {
	f.Node.Lock()
	f.Node.BlockNumber++
	f.Node.BlockTimestamp++
	n, ts := f.Node.BlockNumber, f.Node.BlockTimestamp
	f.Node.Unlock()
	f.Subgraph.Store.SetHead(graphnode.Block{Number: n, Hash: strings.ToLower(f.Node.HashOf(n).Hex()), Timestamp: uint64(ts)})
	return n
}

// A started gateway's first strikes-chain miss pins its chain read to the
// subgraph head its start check read, and one after a readiness probe to
// the head the probe read: neither asks `_meta` before the chain read.
// The answer names that block with the node's hash of it.
func TestStrikesMissAfterStartOrProbeAsksNoMetaFirst(t *testing.T) {
	for _, seed := range []struct {
		name string
		run  func(t *testing.T, a *app.App)
	}{
		{"start check", func(t *testing.T, a *app.App) {
			if unreachable, err := a.Service.CheckChainIDs(context.Background()); err != nil || len(unreachable) != 0 {
				t.Fatalf("start check: %v %v", unreachable, err)
			}
			a.Pins.SeedHeads(context.Background())
		}},
		{"readiness probe", func(t *testing.T, a *app.App) {
			if rec := get(t, a.Server, gateway.PathReadyz); rec.Code != http.StatusOK {
				t.Fatalf("readyz: %d %s", rec.Code, rec.Body)
			}
		}},
	} {
		t.Run(seed.name, func(t *testing.T) {
			a, f, log := loggedApp(t)
			// No head ages past the fresh age here, however slow the
			// machine: a background refresh's `_meta` would look like one
			// asked first.
			a.Pins.SetHeadAges(block.HeadAges{Fresh: time.Hour, Strikes: time.Hour})
			seed.run(t, a)
			if log.count("Meta") != 1 {
				t.Fatalf("the %s asked `_meta` %d times, want once: %v", seed.name, log.count("Meta"), log.ops)
			}
			log.reset()
			n := strikesMiss(t, a, 7)
			if ops := log.reset(); metaBeforeChain(ops) || len(ops) == 0 {
				t.Errorf("the first miss asked `_meta` before its chain read: %v", ops)
			}
			if want := f.Node.BlockNumber; n != want {
				t.Errorf("the answer names block %d, the subgraph's indexed block is %d", n, want)
			}
		})
	}
	t.Run("nothing seen", func(t *testing.T) {
		a, _, log := loggedApp(t)
		strikesMiss(t, a, 7)
		if ops := log.reset(); !metaBeforeChain(ops) {
			t.Errorf("a gateway that has seen no head pinned without asking `_meta`: %v", ops)
		}
	})
}

// A remembered head younger than the fresh age is used as is; one past it
// but within the stale bound is used at once and refreshed once in the
// background (never two refreshes in flight, a failed one not taken for a
// head); one past the stale bound makes the miss ask `_meta` first. Ages
// are set rather than waited for: no clock is read here.
func TestStrikesMissUsesAStaleHeadAndRefreshesIt(t *testing.T) {
	seeded := func(t *testing.T, ages block.HeadAges) (*app.App, *scenario.Fakes, *upstreamLog) {
		a, f, log := loggedApp(t)
		a.Pins.SetHeadAges(ages)
		a.Pins.SeedHeads(context.Background())
		log.reset()
		return a, f, log
	}
	t.Run("fresh", func(t *testing.T) {
		a, _, log := seeded(t, block.HeadAges{Fresh: time.Hour, Strikes: time.Hour})
		strikesMiss(t, a, 7)
		if log.count("Meta") != 0 {
			t.Errorf("a miss with a fresh head asked `_meta`: %v", log.reset())
		}
	})
	t.Run("stale within the bound", func(t *testing.T) {
		a, f, log := seeded(t, block.HeadAges{Strikes: time.Hour})
		seen := f.Node.BlockNumber
		next := advanceSubgraph(f)
		hold := make(chan struct{})
		log.mu.Lock()
		log.hold = hold
		log.mu.Unlock()
		defer close(hold)
		// Answered while `_meta` cannot answer: the miss did not wait for
		// it, and is at the head seen.
		if n := strikesMiss(t, a, 1); n != seen {
			t.Errorf("the miss named block %d, want the head seen, %d", n, seen)
		}
		eventually.True(t, "one background `_meta`", func() bool { return log.count("Meta") >= 1 })
		// The next misses, at the head the first one's strikes document
		// saw, start no second refresh while one is in flight.
		for k := 2; k <= 4; k++ {
			if n := strikesMiss(t, a, k); n != next {
				t.Errorf("miss %d named block %d, want %d", k, n, next)
			}
		}
		// (The refresh may be sent before the first miss's chain read:
		// it runs beside it, which the hold above shows.)
		if c := log.count("Meta"); c != 1 {
			t.Errorf("%d `_meta` requests, want the one refresh: %v", c, log.reset())
		}
	})
	t.Run("refresh fails", func(t *testing.T) {
		a, f, log := seeded(t, block.HeadAges{Strikes: time.Hour})
		seen := f.Node.BlockNumber
		f.Subgraph.Fail = func(op string) *graphnodetest.Failure {
			if op == "Meta" {
				return &graphnodetest.Failure{Status: http.StatusBadGateway, Body: "down"}
			}
			return nil
		}
		if n := strikesMiss(t, a, 1); n != seen {
			t.Fatalf("named %d, want %d", n, seen)
		}
		eventually.True(t, "the refresh tried", func() bool { return log.count("Meta") >= 1 })
		// The failure is no head and no error: the next misses still pin
		// to the head seen, and try again.
		k := 1
		eventually.True(t, "a second refresh after the failed one", func() bool {
			k++
			if n := strikesMiss(t, a, k); n != seen {
				t.Fatalf("named %d, want %d", n, seen)
			}
			return log.count("Meta") >= 2
		})
	})
	t.Run("past the bound", func(t *testing.T) {
		a, _, log := seeded(t, block.HeadAges{})
		strikesMiss(t, a, 7)
		if ops := log.reset(); !metaBeforeChain(ops) {
			t.Errorf("a miss with a head past the stale bound did not ask `_meta` first: %v", ops)
		}
	})
	// A purchase quote is cached for the prepare TTL, not the strikes
	// chain's: its own bound applies.
	t.Run("quote past its own bound", func(t *testing.T) {
		a, _, log := seeded(t, block.HeadAges{Strikes: time.Hour})
		rec := get(t, a.Server, quoteQuery)
		if rec.Code != http.StatusOK {
			t.Fatalf("quote: %d %s", rec.Code, rec.Body)
		}
		if ops := log.reset(); !metaBeforeChain(ops) {
			t.Errorf("a quote pinned to a head older than its bound without asking: %v", ops)
		}
	})
}

// Concurrent strikes misses on a gateway that has seen no head share one
// `_meta` read: the first miss's read is held until every miss has asked
// or waits on it, and all of them pin to what it answers. The gateway runs
// over in-process fakes and its misses in a bubble, so "every miss has
// asked or waits" is synctest.Wait, not a pause long enough on this
// machine. (The gateway is built outside the bubble: its caches' janitors
// run for the process's life, which a bubble may not outlive.)
func TestConcurrentMissesWithNoHeadShareOneMeta(t *testing.T) {
	a, f, log := loggedApp(t)
	synctest.Test(t, func(t *testing.T) {
		hold := make(chan struct{})
		log.mu.Lock()
		log.hold = hold
		log.mu.Unlock()
		const misses = 8
		type answer struct {
			block uint64
			err   error
		}
		answers := make(chan answer, misses)
		for i := range misses {
			go func(k int) {
				n, err := tryStrikesMiss(t, a, 20+k)
				answers <- answer{n, err}
			}(i)
		}
		synctest.Wait() // every miss waits: on the held `_meta` read, or on one of its own
		if n := log.count("Meta"); n != 1 {
			t.Errorf("%d misses asked `_meta` %d times before any answer, want once: %v", misses, n, log.reset())
		}
		log.mu.Lock()
		close(hold)
		log.hold = nil // a channel of the bubble: no request after it may wait on it
		log.mu.Unlock()
		for range misses {
			if got := <-answers; got.err != nil || got.block != f.Node.BlockNumber {
				t.Errorf("a miss names block %d (%v), the subgraph's indexed block is %d", got.block, got.err, f.Node.BlockNumber)
			}
		}
		if n := log.count("Meta"); n != 1 {
			t.Errorf("%d misses asked `_meta` %d times, want once: %v", misses, n, log.reset())
		}
	})
}
