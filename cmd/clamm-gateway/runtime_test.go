package main

import (
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestTuneGC(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	host := cgroupFiles(nil)

	for _, operator := range []map[string]string{{"GOGC": "100"}, {"GOMEMLIMIT": "1GiB"}, {"GOGC": "off"}} {
		if _, tuned := tuneGC(env(operator), 256<<20, host); tuned {
			t.Errorf("%v: tuned over the operator's setting", operator)
		}
	}
	if _, tuned := tuneGC(env(nil), 0, host); tuned {
		t.Error("tuned with no cache byte bound to size the limit from")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC changed to %d without tuning", got)
	}

	got, tuned := tuneGC(env(nil), 256<<20, host)
	if !tuned || got.gogc != 1600 || got.limit != 768<<20 || got.cgroup != 0 {
		t.Fatalf("tuned %v: %+v", tuned, got)
	}
	if got := debug.SetGCPercent(100); got != 1600 {
		t.Errorf("runtime GOGC %d, want 1600", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 768<<20 {
		t.Errorf("runtime memory limit %d, want %d", got, 768<<20)
	}
	var log strings.Builder
	logGC(slog.New(slog.NewTextHandler(&log, nil)), got)
	if strings.Contains(log.String(), "WARN") {
		t.Errorf("warned with no container limit:\n%s", log.String())
	}
}

// cgroupFiles is a fake /sys/fs/cgroup holding the files given.
func cgroupFiles(kv map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if v, ok := kv[p]; ok {
			return []byte(v), nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
}

// TestTuneGCFitsTheContainer: in a 512 MiB container (cgroup v2) the soft
// limit is 75% of it, 402653184 bytes (0.75 × 536870912), not the
// 768 MiB the default cache bound wants, under which GOGC=1600 would let
// the heap pass the container's limit; the start warns, naming the
// setting to lower and the bound that fits ((402653184 - 256 MiB) / 2).
func TestTuneGCFitsTheContainer(t *testing.T) {
	prevPercent := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() { debug.SetGCPercent(prevPercent); debug.SetMemoryLimit(prevLimit) })
	noEnv := func(string) string { return "" }

	got, tuned := tuneGC(noEnv, 256<<20, cgroupFiles(map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}))
	if !tuned || got.limit != 402653184 || got.wanted != 768<<20 || got.cgroup != 536870912 {
		t.Fatalf("tuned %v: %+v", tuned, got)
	}
	if limit := debug.SetMemoryLimit(-1); limit != 402653184 {
		t.Errorf("runtime memory limit %d, want 402653184", limit)
	}
	var log strings.Builder
	logGC(slog.New(slog.NewTextHandler(&log, nil)), got)
	for _, want := range []string{"level=WARN", "CLAMM_CACHE_MAX_BYTES", "cacheMaxBytesFitting=67108864", "containerMemoryLimitBytes=536870912", "memoryLimitBytes=402653184"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("start log lacks %q:\n%s", want, log.String())
		}
	}

	// A container big enough (cgroup v1, 2 GiB): the cache's limit, no warning.
	got, _ = tuneGC(noEnv, 256<<20, cgroupFiles(map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648"}))
	log.Reset()
	logGC(slog.New(slog.NewTextHandler(&log, nil)), got)
	if got.limit != 768<<20 || strings.Contains(log.String(), "WARN") {
		t.Errorf("2 GiB container: %+v\n%s", got, log.String())
	}

	// An unreadable limit: not capped, and said so.
	got, _ = tuneGC(noEnv, 256<<20, cgroupFiles(map[string]string{"/sys/fs/cgroup/memory.max": "lots"}))
	log.Reset()
	logGC(slog.New(slog.NewTextHandler(&log, nil)), got)
	if got.limit != 768<<20 || !strings.Contains(log.String(), "GOMEMLIMIT") {
		t.Errorf("unreadable container limit: %+v\n%s", got, log.String())
	}
}

// line is a log line of fixed text.
type line string

func (l line) AppendLogLine(b []byte) []byte { return append(append(b, l...), '\n') }

// TestLogWriterAppendLine: lines formatted into the buffer arrive whole and
// in order, across flushes and with lines longer than the buffer.
func TestLogWriterAppendLine(t *testing.T) {
	var out strings.Builder
	w := newLogWriter(&out, time.Hour)
	var want strings.Builder
	for i := range 3000 {
		l := line(fmt.Sprintf("line %d %s", i, strings.Repeat("x", i%50)))
		if i%700 == 0 {
			l = line(strings.Repeat("long", 30000)) // longer than the whole buffer
		}
		w.AppendLine(l)
		want.WriteString(string(l) + "\n")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Fatalf("got %d bytes, want %d; lines differ", out.Len(), want.Len())
	}
}
