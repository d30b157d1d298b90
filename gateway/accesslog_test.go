package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"
)

func TestAccessLogLineIsJSON(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	x := &exchange{id: "r-1", route: "/clamm/strikes-chain", status: 503, cache: "MISS", err: errors.New("x"), errText: "dial \"tcp\"\n<upstream url>: refused \u2603"}
	accessLog{&buf}.write(httptest.NewRequest("GET", "/clamm/strikes-chain?x=1", nil), x, time.Unix(1763726400, 5), 1500*time.Microsecond)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	want := map[string]any{"time": "2025-11-21T12:00:00.000000005Z", "level": "WARN", "msg": "request", "id": "r-1", "method": "GET",
		"route": "/clamm/strikes-chain", "status": 503.0, "latency": 1.5e6, "cache": "MISS", "error": x.errText}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v", k, line[k], v)
		}
	}
}

// TestAppendRFC3339Nano checks the cached-second formatter against
// time.RFC3339Nano itself, across whole seconds, trailing zeros, zones and
// second boundaries in both directions.
func TestAppendRFC3339Nano(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC)
	east := time.FixedZone("UTC+5:30", 5*3600+1800)
	var times []time.Time
	for _, ns := range []int{0, 1, 5, 10, 100_000, 120_000_000, 999_999_999, 500_000_000, 123_456_789} {
		for _, sec := range []int{0, 1, -1, 86400 * 400} {
			at := base.Add(time.Duration(sec)*time.Second + time.Duration(ns))
			times = append(times, at, at.In(east))
		}
	}
	times = append(times, time.Date(1969, 12, 31, 23, 59, 59, 999, time.UTC), time.Date(12000, 1, 1, 0, 0, 0, 7, time.UTC))
	for _, at := range times {
		if got, want := string(appendRFC3339Nano(nil, at)), at.UTC().Format(time.RFC3339Nano); got != want {
			t.Errorf("%v: %s, want %s", at, got, want)
		}
	}
}
