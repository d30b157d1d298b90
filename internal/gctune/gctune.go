// Package gctune sizes the garbage collector of the served gateway: the
// GOGC it runs with and its soft memory limit, capped by the memory limit
// of the container it runs in; and it keeps a one-P process polling the
// network while the collector sweeps (NudgeNetpoll). It lives outside
// cmd/clamm-gateway so that the memory system test (gateway/systemtest)
// runs with the very values the binary ships, not a copy of them.
package gctune

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// Percent is the GOGC the gateway runs with when the operator sets none
// (cmd/clamm-gateway tuneGC says why it is this high).
const Percent = 1600

// LimitMargin is what the soft limit keeps beside twice the response
// cache's byte bound: the upstream answers' memory budget
// (upstream.DefaultBudget, 192 MiB) and the rest of the live heap.
const LimitMargin = 256 << 20

// CgroupShare is the part of a container's memory limit, in percent, the
// soft limit may take: the rest is for what the soft limit does not count,
// so the collector works hard before the kernel's OOM killer acts. The
// process maps up to an eighth past the soft limit (the heap's spans and
// the runtime's own structures; the memory system test's bound), and
// SQLite's memory is outside Go's heap: each connection of the embedded
// index store is a WebAssembly SQLite whose page cache holds up to 16 MiB
// (cache_size), database/sql keeps two of them idle (32 MiB), and the
// order book's one connection caches up to SQLite's default 2,000 KiB.
// At 75 % the soft limit plus an eighth is 84.4 % of the container, which
// leaves 80 MiB of a 512 MiB container (160 MiB of 1 GiB) for those 34 MiB
// of page caches, thread stacks, the binary's text and the kernel's page
// cache charged to the container; 90 % plus an eighth passed the
// container's limit itself, and 80 % left 51 MiB of 512.
const CgroupShare = 75

// CgroupFiles are where a container's memory limit is read, in order:
// cgroup v2's memory.max, then cgroup v1's memory.limit_in_bytes, both as
// seen from inside a container with its own cgroup namespace (Docker,
// Kubernetes). A process on a host, in a cgroup below the root, finds
// neither and is not capped.
var CgroupFiles = []string{
	"/sys/fs/cgroup/memory.max",
	"/sys/fs/cgroup/memory/memory.limit_in_bytes",
}

// noLimitFrom is where a cgroup v1 limit means none: v1 writes "no limit"
// as the largest page-aligned int64 (9223372036854771712), not "max".
const noLimitFrom = 1 << 62

// CgroupLimit is the container's memory limit in bytes, read through
// readFile (os.ReadFile outside tests) from the first of CgroupFiles that
// exists; 0 when none exists or the limit is "max" (none). A file that
// exists but holds no number is an error: the caller runs uncapped and
// says so.
func CgroupLimit(readFile func(string) ([]byte, error)) (int64, error) {
	for _, path := range CgroupFiles {
		b, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reading the container's memory limit: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("the container's memory limit %s holds %q, not a number of bytes", path, s)
		}
		if n >= noLimitFrom {
			return 0, nil
		}
		return n, nil
	}
	return 0, nil
}

// SoftLimit is the soft memory limit for a response cache of at most
// cacheMaxBytes: twice the cache bound plus LimitMargin (wanted), capped at
// CgroupShare percent of cgroupLimit when that is set (non-zero). The heap
// may grow to the limit before a collection (GOGC=Percent lets it grow to
// 17 times the live heap), so a limit above the container's would let the
// kernel kill the process where the collector should have run. When limit
// is below wanted, a full cache may not fit: the caller warns.
func SoftLimit(cacheMaxBytes, cgroupLimit int64) (limit, wanted int64) {
	wanted = 2*cacheMaxBytes + LimitMargin
	if cgroupLimit <= 0 {
		return wanted, wanted
	}
	// In two parts, exact (the floor of cgroupLimit·CgroupShare/100) and
	// without overflowing for any int64.
	share := cgroupLimit/100*CgroupShare + cgroupLimit%100*CgroupShare/100
	return min(wanted, share), wanted
}

// CacheFitting is the largest response cache bound whose wanted soft limit
// fits under limit (what the warning suggests for CLAMM_CACHE_MAX_BYTES);
// 0 when even an empty cache's margin does not fit.
func CacheFitting(limit int64) int64 {
	return max(0, (limit-LimitMargin)/2)
}
