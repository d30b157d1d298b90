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
