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
	srv, _ := newFakeServer(t)
	if rec := get(t, srv, strikes); rec.Code != http.StatusOK || rec.Body.Len() <= 4<<10 {
		t.Fatalf("%d, %d bytes: not a large answer", rec.Code, rec.Body.Len())
	}
	conn := &coalescer{lines: make([]byte, 0, 1<<10)}
	req := httptest.NewRequest(http.MethodGet, strikes, nil)
	req = req.WithContext(gateway.ConnContext(req.Context(), conn))
	w := &flusher{discard{h: http.Header{}}}
	allocs := testing.AllocsPerRun(200, func() { clear(w.h); srv.ServeHTTP(w, req) })
	if allocs > 1 || w.h.Get("X-Cache") != "HIT" || w.code != http.StatusOK {
		t.Errorf("%.1f allocations per large hit, want 1 (%d %v)", allocs, w.code, w.h)
	}
	lines := string(conn.lines)
	for _, name := range []string{"Etag", "X-Block-Number", "X-Block-Hash", "X-Block-Timestamp"} {
		if !strings.Contains(lines, name+": ") || w.h.Get(name) != "" {
			t.Errorf("%s: lines %q, header map %q", name, lines, w.h[name])
		}
	}
}
