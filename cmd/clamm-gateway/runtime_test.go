package main

import (
	"fmt"
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

	for _, operator := range []map[string]string{{"GOGC": "100"}, {"GOMEMLIMIT": "1GiB"}, {"GOGC": "off"}} {
		if _, _, tuned := tuneGC(env(operator), 256<<20); tuned {
			t.Errorf("%v: tuned over the operator's setting", operator)
		}
	}
	if _, _, tuned := tuneGC(env(nil), 0); tuned {
		t.Error("tuned with no cache byte bound to size the limit from")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC changed to %d without tuning", got)
	}

	gogc, limit, tuned := tuneGC(env(nil), 256<<20)
	if !tuned || gogc != 1600 || limit != 768<<20 {
		t.Fatalf("tuned %v: gogc %d limit %d", tuned, gogc, limit)
	}
	if got := debug.SetGCPercent(100); got != 1600 {
		t.Errorf("runtime GOGC %d, want 1600", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 768<<20 {
		t.Errorf("runtime memory limit %d, want %d", got, 768<<20)
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
