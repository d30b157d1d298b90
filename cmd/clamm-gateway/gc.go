package main

import (
	"runtime/debug"
)

// GC settings for a cache server (tuneGC).
const (
	gcPercent     = 400
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
// throughput to it (BENCHMARKS.md). GOGC=400 collects a quarter as often.
// The soft memory limit, twice the cache bound plus 256 MiB, stops that
// looser pacing from letting a full cache's heap grow fivefold: near the
// limit the collector runs as often as it must.
func tuneGC(getenv func(string) string, cacheMaxBytes int64) (gogc int, limit int64, tuned bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || cacheMaxBytes <= 0 {
		return 0, 0, false
	}
	limit = 2*cacheMaxBytes + gcLimitMargin
	debug.SetGCPercent(gcPercent)
	debug.SetMemoryLimit(limit)
	return gcPercent, limit, true
}
