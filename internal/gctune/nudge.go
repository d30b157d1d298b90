package gctune

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// NudgeEvery is how often NudgeNetpoll looks, on a process with one P that
// allocates, for a new collection and, while its sweep runs, lets the
// network be polled: the longest a ready connection then waits for it.
const NudgeEvery = time.Millisecond

// idleEvery is how often it looks when nothing was allocated since the last
// look (no collection can start without allocation), and manyPEvery when
// the process has more than one P (only whether that changed): each look
// wakes a thread, some tens of microseconds on a virtual machine, which at
// NudgeEvery would cost an idle gateway a few percent of a CPU.
const (
	idleEvery  = 20 * time.Millisecond
	manyPEvery = time.Second
)

// quietTicks is how many ticks in a row must free nothing before a sweep is
// taken as finished. One is not enough: a tick whose millisecond went to the
// connections the last nudge readied can leave the background sweeper no
// time, and it resumes (and starves the network again) after.
const quietTicks = 3

// NudgeNetpoll keeps a process with one P (GOMAXPROCS=1: a one-CPU
// container, or a CPU set of one) polling the network while the garbage
// collector sweeps, until ctx ends.
//
// After each collection the runtime's background sweeper frees the heap's
// spans ten at a time and yields between batches with Gosched, which puts
// it on the global run queue. The scheduler takes the global run queue
// before it polls the network, so with one P no connection is polled until
// the sweep ends or sysmon polls after 10 ms (golang/go#56060, open). The
// sweep takes time in proportion to the heap, and the gateway's heap goal
// is large (GOGC=1600, Percent): an execution trace of the demo under wrk
// showed the hits served in bursts every 10 ms, nothing between, for the
// 40-50 ms the sweep of a 190 MB heap took after every collection, and that
// was most of the p99 tail over bare net/http (whose 4 MB heap sweeps in
// under a millisecond). Starting the world polls the network
// (startTheWorldWithSema), so while a sweep runs this stops and starts it
// every NudgeEvery with runtime.ReadMemStats: a few microseconds with one
// P, and it empties the allocation caches, so the next allocations refill
// them (sweeping a span or two). Connections then wait about a
// millisecond, not ten.
//
// A sweep is seen through runtime/metrics: a new collection starts one, and
// it is over once the count of freed objects, which only sweeping raises,
// stays still for quietTicks ticks. With more than one P the other Ps poll
// the network and nothing is done.
func NudgeNetpoll(ctx context.Context) {
	n := runtimeNudger()
	t := time.NewTimer(NudgeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			t.Reset(n.tick())
		}
	}
}

// counts are the runtime's cumulative counts a nudger reads.
type counts struct {
	cycles uint64 // collections completed
	frees  uint64 // objects freed (by sweeping)
	allocs uint64 // bytes allocated
}

// nudger is NudgeNetpoll's state, its runtime reads apart so the decisions
// can be tested on their own.
type nudger struct {
	read  func() counts
	nudge func()     // stop and start the world
	procs func() int // GOMAXPROCS

	last  counts
	quiet int // ticks in a row that freed nothing; quietTicks: not sweeping
}

// runtimeNudger reads the runtime's own counts and nudges with
// runtime.ReadMemStats.
func runtimeNudger() *nudger {
	var ms runtime.MemStats
	return newNudger(readGCMetrics(), func() { runtime.ReadMemStats(&ms) }, func() int { return runtime.GOMAXPROCS(0) })
}

// newNudger starts from the counts so far, not sweeping: a sweep already
// under way at the start is left to the runtime.
func newNudger(read func() counts, nudge func(), procs func() int) *nudger {
	return &nudger{read: read, nudge: nudge, procs: procs, last: read(), quiet: quietTicks}
}

// tick reads the runtime's counts, nudges while a sweep runs on one P, and
// says when to look next.
func (n *nudger) tick() time.Duration {
	c, onlyP := n.read(), n.procs() == 1
	switch {
	case c.cycles != n.last.cycles:
		// A collection ended since the last tick: its sweep runs now.
		n.quiet = 0
	case c.frees == n.last.frees && n.quiet < quietTicks:
		n.quiet++
	case c.frees != n.last.frees && n.quiet < quietTicks:
		n.quiet = 0
	}
	if !onlyP {
		n.quiet = quietTicks
	}
	allocated := c.allocs != n.last.allocs
	n.last = c
	switch {
	case n.quiet < quietTicks:
		n.nudge()
		return NudgeEvery
	case !onlyP:
		return manyPEvery
	case allocated:
		return NudgeEvery
	default:
		return idleEvery
	}
}

// readGCMetrics reads the runtime's counts through runtime/metrics (under a
// microsecond).
func readGCMetrics() func() counts {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/frees:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	return func() counts {
		metrics.Read(s)
		return counts{cycles: value(s[0]), frees: value(s[1]), allocs: value(s[2])}
	}
}

// value is a sample's count, 0 when this runtime does not know the metric.
func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
