package systemtest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// coalescer is a connection that coalesces writes (gateway.WriteCoalescer)
// and records the header lines it is given.
type coalescer struct {
	net.Conn
	lines []byte // "name: value\n" each
}

func (c *coalescer) HoldNextWrite()   { c.lines = c.lines[:0] }
func (c *coalescer) FlushHeld() error { return nil }
func (c *coalescer) AddHeader(name, value string) {
	c.lines = append(append(append(append(c.lines, name...), ": "...), value...), '\n')
}

// flusher is discard with Flush, as net/http's writer has.
type flusher struct{ discard }

func (f *flusher) Flush() {}

// A large hit on a connection that coalesces writes gives the entry's
// headers to the held header block, not to the header map, and is still
// the one allocation every hit is.
func TestLargeHitAddsEntryHeadersToTheHeldBlock(t *testing.T) {
	// A thousand ranges: the gzip answer is large too (the demo's is not).
	srv := benchServer(t, wideScenario(t, 1000))
	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodGet, strikes, nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		mapped := &discard{h: http.Header{}} // no coalescer: the header map
		srv.ServeHTTP(mapped, req)
		if mapped.code != http.StatusOK || mapped.n <= 4<<10 {
			t.Fatalf("gzip %v: %d, %d bytes: not a large answer", gz, mapped.code, mapped.n)
		}
		conn := &coalescer{lines: make([]byte, 0, 1<<10)}
		req = req.WithContext(gateway.ConnContext(req.Context(), conn))
		w := &flusher{discard{h: http.Header{}}}
		allocs := testing.AllocsPerRun(200, func() { clear(w.h); srv.ServeHTTP(w, req) })
		if allocs > 1 || w.h.Get("X-Cache") != "HIT" || w.code != http.StatusOK {
			t.Errorf("gzip %v: %.1f allocations per large hit, want 1 (%d %v)", gz, allocs, w.code, w.h)
		}
		lines := string(conn.lines)
		for _, name := range []string{"Etag", "X-Subgraph-Block", "X-Block-Number", "X-Block-Hash", "X-Block-Timestamp"} {
			if !strings.Contains(lines, name+": "+mapped.h.Get(name)+"\n") || mapped.h.Get(name) == "" || w.h.Get(name) != "" {
				t.Errorf("gzip %v, %s: lines %q, header map %q, without a coalescer %q", gz, name, lines, w.h[name], mapped.h[name])
			}
		}
	}
}
