package gctune

import (
	"context"
	"runtime"
	"runtime/metrics"
	"time"
)

// NudgeEvery is how often NudgeNetpoll looks for a new collection and, while
// that collection's sweep runs on a process with one P, lets the network be
// polled: the longest a ready connection then waits for it.
const NudgeEvery = time.Millisecond

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
// every NudgeEvery with runtime.ReadMemStats, a few microseconds with one
// P (its flush of the allocation caches included): connections then wait
// about a millisecond, not ten.
//
// A sweep is seen through runtime/metrics: a new collection starts one, and
// it is over once the count of freed objects, which sweeping raises, stays
// still for quietTicks ticks. With more than one P the other Ps poll the
// network and nothing is done. What is left is one runtime/metrics read a
// millisecond (under a microsecond each).
func NudgeNetpoll(ctx context.Context) {
	n := newNudger(readGCMetrics(), readMemStats(), func() int { return runtime.GOMAXPROCS(0) })
	t := time.NewTicker(NudgeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.tick()
		}
	}
}

// nudger is NudgeNetpoll's state, its runtime reads apart so the decisions
// can be tested on their own.
type nudger struct {
	read  func() (cycles, frees uint64) // collections so far, objects freed so far
	nudge func()                        // stop and start the world
	procs func() int                    // GOMAXPROCS

	cycles, frees uint64
	quiet         int // ticks in a row that freed nothing; quietTicks: not sweeping
	nudges        int // for tests: how many times nudge ran
}

// newNudger starts from the collections and frees so far, not sweeping:
// a sweep already under way at the start is left to the runtime.
func newNudger(read func() (uint64, uint64), nudge func(), procs func() int) *nudger {
	n := &nudger{read: read, nudge: nudge, procs: procs, quiet: quietTicks}
	n.cycles, n.frees = read()
	return n
}

// tick reads the runtime's counts and nudges while a sweep runs.
func (n *nudger) tick() {
	cycles, frees := n.read()
	switch {
	case cycles != n.cycles:
		// A collection ended since the last tick: its sweep runs now,
		// and matters only with one P.
		n.quiet = 0
		if n.procs() != 1 {
			n.quiet = quietTicks
		}
	case frees == n.frees && n.quiet < quietTicks:
		n.quiet++
	case frees != n.frees && n.quiet < quietTicks:
		n.quiet = 0
	}
	n.cycles, n.frees = cycles, frees
	if n.quiet < quietTicks {
		n.nudge()
		n.nudges++
	}
}

// readGCMetrics reads the count of collections and of objects freed.
func readGCMetrics() func() (uint64, uint64) {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/frees:objects"}}
	return func() (uint64, uint64) {
		metrics.Read(s)
		return value(s[0]), value(s[1])
	}
}

// value is a sample's count, 0 when this runtime does not know the metric.
func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

func readMemStats() func() {
	var ms runtime.MemStats
	return func() { runtime.ReadMemStats(&ms) }
}
