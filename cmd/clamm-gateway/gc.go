package main

import (
	"log/slog"
	"runtime/debug"
	"strconv"

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
// cache has no byte bound (nothing to size a limit from): GOGC off under a
// soft memory limit, so that a collection starts only when the heap
// reaches the limit.
//
// Hits allocate almost nothing themselves, but net/http makes ~2.3 KB of
// garbage a request (the request, its header map, the response header and
// the clone WriteHeader takes of it), and each collection's mark phase
// slows the hits beside it: on the one CPU the load benchmark gives the
// server, hits that overlapped a mark took twice the median of the others
// (an execution trace under wrk). Go's default (GOGC=100, a 4 MiB floor)
// collected every 35 ms under load; GOGC=400 and then 1600 made it rarer,
// but a proportional goal ties the collections' share of the time to the
// garbage rate alone: halving the demo's live heap (35,120 objects to
// 11,830) halved each mark and doubled how often one ran (2-4 in a 5 s
// round either way), and the hit path's p99 stayed 1.15-1.25 times bare
// net/http's. With no collection at all it was 0.79 times
// (BENCHMARKS.md). A collection when the heap reaches the limit is the
// fewest the memory budget allows: about one every 6 s at 50,000 hits a
// second against the 768 MiB default.
//
// The limit, twice the cache bound plus 256 MiB, is what the process is
// budgeted for: a full cache reaches it whatever GOGC is, and the heap
// grew to it under load at GOGC=1600 already. Near it (a full cache, or
// live data close to it) the runtime collects as often as it must, with
// the collector's CPU capped at half, as before. Since the heap grows to
// the limit, the limit must fit the container: a 512 MiB container would
// be OOM-killed under a 768 MiB limit. So it is capped at 75% of the
// cgroup's memory limit, read through readFile (os.ReadFile outside
// tests) from gctune.CgroupFiles.
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
		"gogc", gogcText(t.gogc), "memoryLimitBytes", t.limit, "containerMemoryLimitBytes", t.cgroup)
	if t.err != nil {
		logger.Warn("soft memory limit not capped by the container's: set GOMEMLIMIT below it", "err", t.err)
	}
	if t.limit < t.wanted {
		logger.Warn("the container's memory limit caps the soft memory limit below what CLAMM_CACHE_MAX_BYTES wants (twice it plus 256 MiB): lower CLAMM_CACHE_MAX_BYTES or raise the container's limit",
			"memoryLimitBytes", t.limit, "wantedBytes", t.wanted, "containerMemoryLimitBytes", t.cgroup,
			"cacheMaxBytesFitting", gctune.CacheFitting(t.limit))
	}
}

// gogcText is a GOGC as the variable writes it: "off" for -1.
func gogcText(percent int) string {
	if percent < 0 {
		return "off"
	}
	return strconv.Itoa(percent)
}
