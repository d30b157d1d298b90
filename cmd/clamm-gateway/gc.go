package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/clamm-gateway/clamm-gateway/internal/gctune"
)

// gcTuning is what tuneGC set, for the start's log.
type gcTuning struct {
	gogc   int
	limit  int64 // the soft memory limit set
	wanted int64 // what the cache bound wants: twice it plus the margin
	cgroup int64 // the container's memory limit, 0 when none
	err    error // reading the container's limit, when it failed
}

// tuneGC fits the garbage collector to a cache server, unless the operator
// set GOGC or GOMEMLIMIT (the runtime then follows them) or the response
// cache has no byte bound (nothing to size a limit from).
//
// Go's default (GOGC=100, no limit, a 4 MiB floor) collects whenever the
// heap doubles: a gateway answering hits from a small cache collected every
// 35 ms under load, marking its whole live heap each time for the ~2.5 KB of
// garbage net/http makes per request, and lost about 5% of its hit
// throughput to it (BENCHMARKS.md). Each collection also costs the tail:
// its mark phase (5-8 ms of wall on the one CPU the benchmark gives the
// server, over the demo's 10 MB live heap) serves a fraction of the hits it
// would, so the fewer collections the better. GOGC=1600 collects every
// 1-2 s under that load (a heap goal 17 times the live heap: ~190 MB over
// the demo's). The garbage is request-scoped (a hit allocates almost
// nothing itself), so the larger goal holds no more live data, only
// collects it later. The sweep after each collection takes time in
// proportion to that goal, and with one P it would keep the network
// unpolled for up to 10 ms a time; gctune.NudgeNetpoll (run beside, with
// any GOGC) is what makes the goal's size harmless to the tail. The soft
// memory limit, twice the cache bound plus 256 MiB, stays the bound: near
// it (a full cache) the collector runs as often as it must, as before.
//
// Since the heap grows to that limit before a collection, the limit must
// fit the container: a 512 MiB container would be OOM-killed at ~45 MiB of
// live data under a 768 MiB limit. So it is capped at 75% of the cgroup's
// memory limit, read through readFile (os.ReadFile outside tests) from
// gctune.CgroupFiles.
func tuneGC(getenv func(string) string, cacheMaxBytes int64, readFile func(string) ([]byte, error)) (gcTuning, bool) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" || cacheMaxBytes <= 0 {
		return gcTuning{}, false
	}
	t := gcTuning{gogc: gctune.Percent}
	t.cgroup, t.err = gctune.CgroupLimit(readFile)
	t.limit, t.wanted = gctune.SoftLimit(cacheMaxBytes, t.cgroup)
	debug.SetGCPercent(t.gogc)
	debug.SetMemoryLimit(t.limit)
	return t, true
}

// logGC logs what tuneGC set, and warns when the container's memory limit
// left less than the response cache's bound wants (a full cache then makes
// the collector run without pause) or could not be read (the limit is then
// not capped).
func logGC(logger *slog.Logger, t gcTuning) {
	logger.Info("garbage collector tuned for the response cache (set GOGC or GOMEMLIMIT to choose)",
		"gogc", t.gogc, "memoryLimitBytes", t.limit, "containerMemoryLimitBytes", t.cgroup)
	if t.err != nil {
		logger.Warn("soft memory limit not capped by the container's: set GOMEMLIMIT below it", "err", t.err)
	}
	if t.limit < t.wanted {
		logger.Warn("the container's memory limit caps the soft memory limit below what CLAMM_CACHE_MAX_BYTES wants (twice it plus 256 MiB): lower CLAMM_CACHE_MAX_BYTES or raise the container's limit",
			"memoryLimitBytes", t.limit, "wantedBytes", t.wanted, "containerMemoryLimitBytes", t.cgroup,
			"cacheMaxBytesFitting", gctune.CacheFitting(t.limit))
	}
}
