package main

import (
	"runtime/debug"
)

// GC settings for a cache server (tuneGC).
const (
	gcPercent     = 1600
	gcLimitMargin = 256 << 20
)

// tuneGC fits the garbage collector to a cache server, unless the operator
// set GOGC or GOMEMLIMIT (the runtime then follows them) or the response
// cache has no byte bound (nothing to size a limit from).
//
// Go's default (GOGC=100, no limit, a 4 MiB floor) collects whenever the
// heap doubles: a gateway answering hits from a small cache collected every
// 35 ms under load, marking its whole live heap each time for the ~2.5 KB of
// garbage net/http makes per request, and lost about 5% of its hit
// throughput to it (BENCHMARKS.md). Each collection also costs the tail:
// during its mark phase (8-14 ms of wall on the one CPU the benchmark gives
// the server, over the demo's 17 MB live heap) hits took twice the median
// time of those around them (an execution trace under wrk), and at
// GOGC=400, with ~2.7 KB of garbage a hit and a 68 MB allowance, 50,000
// hits a second meant a collection every half second: 2-3% of the time in
// a mark phase, more than the 1% a p99 looks at. GOGC=1600 collects a
// quarter as often (a heap goal 17 times the live heap: ~290 MB over the
// demo's). The garbage is request-scoped (a hit allocates almost nothing
// itself), so the larger goal holds no more live data, only collects it
// later. The soft memory limit, twice the cache bound plus 256 MiB, stays
// the bound: near it (a full cache) the collector runs as often as it
// must, as before.
func tuneGC(getenv func(string) string, cacheMaxBytes int64) (gogc int, limit int64, tuned bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || cacheMaxBytes <= 0 {
		return 0, 0, false
	}
	limit = 2*cacheMaxBytes + gcLimitMargin
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(limit)
	return gcPercent, limit, true
}
