package systemtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/demo"
)

// The demo's history keeps one clock: every answer of the sweep at a
// pinned block before the head is dated (X-Block-Timestamp, asOf) no
// earlier than the newest event it lists. The fake node once dated a
// past block one second per block back from the head while the history
// places four blocks in a second, so a block a day back by the history
// was dated four days back, and its answers listed events days after it.
func TestDemoPastBlocksAreDatedAfterTheirEvents(t *testing.T) {
	t.Parallel()
	paths, err := demo.Sweep(sweepRoutes(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := newDemoServer(t)
	head := demo.HistoryBlocks[0]
	checked, dated := 0, 0
	for _, p := range paths {
		u, err := url.Parse(p)
		if err != nil {
			t.Fatal(err)
		}
		if b := u.Query().Get("block"); b == "" || b == head {
			continue
		}
		rec := get(t, srv, p)
		if rec.Code != http.StatusOK {
			continue
		}
		at, err := strconv.ParseInt(rec.Header().Get("X-Block-Timestamp"), 10, 64)
		if err != nil {
			t.Fatalf("%s: X-Block-Timestamp %q", p, rec.Header().Get("X-Block-Timestamp"))
		}
		var body any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		checked++
		for _, ts := range eventTimes(body, "") {
			dated++
			if ts > at {
				t.Errorf("%s: dated %d, lists an event at %d (%d s later)", p, at, ts, ts-at)
				break
			}
		}
	}
	if checked == 0 || dated == 0 {
		t.Fatalf("%d answers at past blocks, %d event times: is the sweep still pinning blocks?", checked, dated)
	}
	t.Logf("%d answers at past blocks, %d event times", checked, dated)
}

// eventTimes are the times of the events an answer lists: every
// "timestamp" field outside the answer's own asOf.
func eventTimes(v any, key string) []int64 {
	var out []int64
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != "asOf" {
				out = append(out, eventTimes(e, k)...)
			}
		}
	case []any:
		for _, e := range x {
			out = append(out, eventTimes(e, key)...)
		}
	case string:
		if key == "timestamp" {
			if ts, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
				out = append(out, ts)
			}
		}
	case float64:
		if key == "timestamp" {
			out = append(out, int64(x))
		}
	}
	return out
}
