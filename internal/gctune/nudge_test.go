package gctune

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// script feeds a nudger one reading a tick, the last one again once used up.
type script struct {
	readings []counts
	i        int
}

func (s *script) read() counts {
	r := s.readings[min(s.i, len(s.readings)-1)]
	s.i++
	return r
}

// step is what a tick should do: nudge or not, and when to look next.
type step struct {
	nudge bool
	next  time.Duration
}

func TestNudgerNudgesWhileASweepFrees(t *testing.T) {
	busy, idle, manyP := step{false, NudgeEvery}, step{false, idleEvery}, step{false, manyPEvery}
	nudge := step{true, NudgeEvery}
	for _, c := range []struct {
		name     string
		procs    int
		readings []counts // the first is read at the start
		want     []step   // at each tick after it
	}{
		{"no collection, allocating: look every millisecond", 1,
			[]counts{{5, 100, 1000}, {5, 100, 2000}, {5, 100, 3000}},
			[]step{busy, busy}},
		{"no collection, nothing allocated: look less often", 1,
			[]counts{{5, 100, 1000}, {5, 100, 1000}, {5, 100, 2000}, {5, 100, 2000}},
			[]step{idle, busy, idle}},
		{"a collection, its sweep, then quiet", 1,
			[]counts{{5, 100, 1000}, {6, 200, 2000}, {6, 300, 3000}, {6, 300, 4000}, {6, 300, 5000}, {6, 300, 6000}, {6, 300, 6000}},
			// Three still ticks end it: the first two of them still nudge.
			[]step{nudge, nudge, nudge, nudge, busy, idle}},
		{"a sweep that pauses a tick goes on", 1,
			[]counts{{5, 100, 0}, {6, 200, 0}, {6, 200, 0}, {6, 300, 0}, {6, 300, 0}, {6, 300, 0}, {6, 300, 0}},
			[]step{nudge, nudge, nudge, nudge, nudge, idle}},
		{"a collection at each tick keeps it on", 1,
			[]counts{{5, 100, 0}, {6, 100, 0}, {7, 100, 0}, {8, 100, 0}},
			[]step{nudge, nudge, nudge}},
		{"more than one P: the others poll, look each second", 2,
			[]counts{{5, 100, 0}, {6, 200, 1000}, {6, 300, 2000}, {6, 300, 2000}},
			[]step{manyP, manyP, manyP}},
		{"a sweep under way at the start is the runtime's", 1,
			[]counts{{5, 100, 0}, {5, 200, 0}, {5, 300, 0}},
			[]step{idle, idle}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{readings: c.readings}
			nudged := false
			n := newNudger(s.read, func() { nudged = true }, func() int { return c.procs })
			for i, want := range c.want {
				nudged = false
				next := n.tick()
				if got := (step{nudged, next}); got != want {
					t.Fatalf("tick %d: %+v, want %+v", i+1, got, want)
				}
			}
		})
	}
}

// TestNudgerSeesTheRuntimesCollections runs the nudger on the runtime's own
// counts: the metric names are real, a collection starts nudging and the
// end of its sweep stops it.
func TestNudgerSeesTheRuntimesCollections(t *testing.T) {
	read := readGCMetrics()
	nudges := 0
	n := newNudger(read, func() { nudges++ }, func() int { return 1 })
	runtime.GC() // sweeps before it returns: the ticks below see it done
	if c := read(); c.cycles == 0 || c.frees == 0 || c.allocs == 0 {
		t.Fatalf("runtime/metrics read %+v: a name is wrong", c)
	}
	cycles := read().cycles
	for range quietTicks + 3 {
		n.tick()
	}
	// The collection's tick and the two still ones after it, unless the
	// test binary's own allocation started another collection meanwhile.
	if read().cycles == cycles && nudges != quietTicks {
		t.Fatalf("nudged %d times after one collection, want %d", nudges, quietTicks)
	}
}

// TestRuntimeNudgeStopsTheWorld checks the nudge is a stop of the world
// (what polls the network) and the P count the runtime's own.
func TestRuntimeNudgeStopsTheWorld(t *testing.T) {
	pauses := []metrics.Sample{{Name: "/sched/pauses/total/other:seconds"}}
	count := func() uint64 {
		metrics.Read(pauses)
		if pauses[0].Value.Kind() != metrics.KindFloat64Histogram {
			t.Fatalf("runtime/metrics has no %s", pauses[0].Name)
		}
		var sum uint64
		for _, c := range pauses[0].Value.Float64Histogram().Counts {
			sum += c
		}
		return sum
	}
	n := runtimeNudger()
	if got, want := n.procs(), runtime.GOMAXPROCS(0); got != want {
		t.Fatalf("procs %d, GOMAXPROCS %d", got, want)
	}
	before := count()
	n.nudge()
	if after := count(); after <= before {
		t.Fatalf("stops of the world other than the collector's: %d before the nudge, %d after", before, after)
	}
}

func TestNudgeNetpollStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { NudgeNetpoll(ctx); close(done) }()
	time.Sleep(3 * NudgeEvery) // a few ticks first
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("NudgeNetpoll still running 10 s after its context ended")
	}
}
