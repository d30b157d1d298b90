package gctune

import (
	"context"
	"runtime"
	"testing"
)

// script feeds a nudger one (cycles, frees) reading a tick.
type script struct {
	readings [][2]uint64
	i        int
}

func (s *script) read() (uint64, uint64) {
	r := s.readings[min(s.i, len(s.readings)-1)]
	s.i++
	return r[0], r[1]
}

func TestNudgerNudgesWhileASweepFrees(t *testing.T) {
	for _, c := range []struct {
		name     string
		procs    int
		readings [][2]uint64 // the first is read at the start
		want     []bool      // nudged at each tick after it
	}{
		{"no collection: nothing", 1,
			[][2]uint64{{5, 100}, {5, 100}, {5, 100}},
			[]bool{false, false}},
		{"a collection, its sweep, then quiet", 1,
			[][2]uint64{{5, 100}, {6, 200}, {6, 300}, {6, 300}, {6, 300}, {6, 300}, {6, 300}},
			// Three still ticks end it: the last two of them still nudge.
			[]bool{true, true, true, true, false, false}},
		{"a sweep that pauses a tick goes on", 1,
			[][2]uint64{{5, 100}, {6, 200}, {6, 200}, {6, 300}, {6, 300}, {6, 300}, {6, 300}},
			[]bool{true, true, true, true, true, false}},
		{"a collection at each tick keeps it on", 1,
			[][2]uint64{{5, 100}, {6, 100}, {7, 100}, {8, 100}},
			[]bool{true, true, true}},
		{"more than one P: the others poll", 2,
			[][2]uint64{{5, 100}, {6, 200}, {6, 300}, {6, 300}},
			[]bool{false, false, false}},
		{"a sweep under way at the start is the runtime's", 1,
			[][2]uint64{{5, 100}, {5, 200}, {5, 300}},
			[]bool{false, false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &script{readings: c.readings}
			nudged := false
			n := newNudger(s.read, func() { nudged = true }, func() int { return c.procs })
			for i, want := range c.want {
				nudged = false
				n.tick()
				if nudged != want {
					t.Fatalf("tick %d: nudged %v, want %v", i+1, nudged, want)
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
	n := newNudger(read, func() {}, func() int { return 1 })
	runtime.GC() // sweeps before it returns, so the ticks below see it done
	if c, f := read(); c == 0 || f == 0 {
		t.Fatalf("runtime/metrics read %d collections and %d frees: a name is wrong", c, f)
	}
	for range quietTicks + 1 {
		n.tick()
	}
	if n.nudges == 0 || n.nudges > quietTicks+1 {
		t.Fatalf("nudged %d times after a collection, want 1 to %d", n.nudges, quietTicks+1)
	}
	before, cycles := n.nudges, n.cycles
	for range 5 {
		n.tick()
	}
	// Nothing more unless another collection ran meanwhile (the test
	// binary's own allocation could start one).
	if n.cycles == cycles && (n.nudges != before || n.quiet != quietTicks) {
		t.Fatalf("nudged %d more times with no collection (quiet %d)", n.nudges-before, n.quiet)
	}
}

func TestNudgeNetpollStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { NudgeNetpoll(ctx); close(done) }()
	cancel()
	<-done
}
