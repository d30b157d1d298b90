package block

import (
	"sync"
	"time"
)

// Seen is a subgraph's indexed head as last read, and when it was asked
// (an answer read soon after may pin to it without asking: IndexedHead).
// The subgraph client keeps one and records every head it reads at the
// indexed head: readiness probes' `_meta`, an answer's first page that
// resolved its pin, the strikes document's unpinned `head`; Pins record
// what they read themselves (seeding, refreshes). The zero value has seen
// nothing.
type Seen struct {
	mu  sync.Mutex
	ref Ref
	at  time.Time
}

// Saw records r, read from a question asked at at (a head is as old as
// the question, not the answer). A ref without a number or hash is no
// head (a `_meta` without one). The answer to the latest question wins,
// whatever its number: a subgraph whose head went back (an indexer
// rewound or replaced behind the same URL, a load balancer between two)
// is followed, so answers pin to what it has indexed now rather than to a
// block it no longer serves (BLOCK_NOT_INDEXED until it passed the old
// high). An answer to a question asked before the recorded one's does not
// replace it: of two reads in flight, the later question is the newer
// view, whichever answers last.
func (s *Seen) Saw(r Ref, at time.Time) {
	if r.Hash == "" || r.Number == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ref.Number == 0 || !at.Before(s.at) {
		s.ref, s.at = r, at
	}
}

// Last returns the head last recorded and when it was asked; ok is false
// before any.
func (s *Seen) Last() (r Ref, at time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ref, s.at, s.ref.Number != 0
}
