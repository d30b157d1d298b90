package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// recordingConn records each write it is given, in order.
type recordingConn struct {
	net.Conn
	writes []string
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

// A held write leaves before the write that follows it, and only then; a
// hold with nothing written, or ended by FlushHeld, sends what it holds
// and nothing else.
func TestHeldWriteLeavesWithTheNext(t *testing.T) {
	rec := &recordingConn{}
	c := &jsonErrorConn{Conn: rec}
	check := func(step string, want ...string) {
		t.Helper()
		if strings.Join(rec.writes, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: writes %q, want %q", step, rec.writes, want)
		}
	}
	c.HoldNextWrite()
	if n, err := c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); n != 19 || err != nil {
		t.Fatalf("held write: %d %v", n, err)
	}
	check("held")
	if n, err := c.Write([]byte("body")); n != 4 || err != nil {
		t.Fatalf("body write: %d %v", n, err)
	}
	// net.Buffers on a connection without writev writes each buffer in
	// turn: the order is what this test can see.
	check("body", "HTTP/1.1 200 OK\r\n\r\n", "body")
	if err := c.FlushHeld(); err != nil {
		t.Fatal(err)
	}
	check("flush after the body took the held bytes", "HTTP/1.1 200 OK\r\n\r\n", "body")

	rec.writes = nil
	c.HoldNextWrite()
	if err := c.FlushHeld(); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("plain"))
	check("a hold that held nothing", "plain")

	rec.writes = nil
	c.HoldNextWrite()
	_, _ = c.Write([]byte("headers only"))
	_ = c.FlushHeld()
	check("held then flushed", "headers only")
}

// Lines added to a hold go inside the held header block, before its blank
// line; a hold forgets the lines of the one before; a line with CR or LF
// is not added; a held write that is not a header block fails rather than
// leave without its lines.
func TestAddedHeadersGoInsideTheHeldBlock(t *testing.T) {
	rec := &recordingConn{}
	c := &jsonErrorConn{Conn: rec}
	c.HoldNextWrite()
	c.AddHeader("Etag", `"x"`)
	c.AddHeader("X-Block-Number", "7")
	c.AddHeader("X-Evil", "1\r\nX-Injected: 1")
	c.AddHeader("X-Evil:", "1")
	_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"))
	_, _ = c.Write([]byte("body"))
	want := "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nEtag: \"x\"\r\nX-Block-Number: 7\r\n\r\n|body"
	if got := strings.Join(rec.writes, "|"); got != want {
		t.Fatalf("writes %q, want %q", got, want)
	}

	rec.writes = nil
	c.HoldNextWrite()
	_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	_ = c.FlushHeld()
	if got := strings.Join(rec.writes, "|"); got != "HTTP/1.1 200 OK\r\n\r\n" {
		t.Fatalf("a hold after one with lines: %q", got)
	}

	rec.writes = nil
	c.HoldNextWrite()
	c.AddHeader("Etag", `"x"`)
	if n, err := c.Write([]byte("not a header block")); n != 0 || !errors.Is(err, errNotAHeaderBlock) {
		t.Fatalf("held write that is not a header block: %d %v", n, err)
	}
	if _, _ = c.Write([]byte("next")); strings.Join(rec.writes, "|") != "next" {
		t.Fatalf("after the failed hold: %q", rec.writes)
	}
}

// A header block longer than net/http's 4 KiB connection buffer reaches
// the connection in pieces: they are gathered, the lines go in before its
// blank line, and the block leaves with the body.
func TestAddedHeadersGoInsideASplitBlock(t *testing.T) {
	rec := &recordingConn{}
	c := &jsonErrorConn{Conn: rec}
	block := "HTTP/1.1 200 OK\r\nX-Long: " + strings.Repeat("a", 5<<10) + "\r\nContent-Length: 4\r\n\r\n"
	c.HoldNextWrite()
	c.AddHeader("Etag", `"x"`)
	bw := bufio.NewWriterSize(c, 4<<10) // net/http's connection buffer
	if _, err := bw.WriteString(block); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) != 0 {
		t.Fatalf("sent before the body: %d writes", len(rec.writes))
	}
	_, _ = c.Write([]byte("body"))
	_ = c.FlushHeld()
	want := strings.TrimSuffix(block, "\r\n") + "Etag: \"x\"\r\n\r\n|body"
	if got := strings.Join(rec.writes, "|"); got != want {
		t.Fatalf("writes (%d) %.120q..., want %.120q...", len(rec.writes), got[len(got)-60:], want[len(want)-60:])
	}
}

// net/http's own text answers are still rewritten with the fast path in
// front of rewriteRawError.
func TestRawErrorStillRewrittenOnTheConnection(t *testing.T) {
	rec := &recordingConn{}
	c := &jsonErrorConn{Conn: rec}
	raw := "HTTP/1.1 400 Bad Request: missing required Host header" + rawErrorHeaders + "400 Bad Request: missing required Host header"
	if n, err := c.Write([]byte(raw)); n != len(raw) || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if len(rec.writes) != 1 || !strings.Contains(rec.writes[0], `"code":"MALFORMED_REQUEST"`) {
		t.Fatalf("not rewritten: %q", rec.writes)
	}
}

// On the served demo, one keep-alive connection carries large hits (their
// headers held and sent with the body), HEAD, 304 and small answers in a
// row, each whole and in order, through the real listener and server.
func TestCoalescedAnswersOnOneConnection(t *testing.T) {
	base, _, _, stop := start(t, nil)
	defer stop()
	const large = "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100"
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A bound for the test, not a measurement: a header block held and
	// never sent fails here instead of hanging until go test's timeout.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var raw bytes.Buffer // what the server sent since the last Reset
	r := bufio.NewReader(io.TeeReader(conn, &raw))
	do := func(method, path string, header ...string) (*http.Response, []byte) {
		t.Helper()
		req := method + " " + path + " HTTP/1.1\r\nHost: x\r\n" + strings.Join(header, "") + "\r\n"
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, &http.Request{Method: method})
		if err != nil {
			t.Fatalf("%s %s: %.300v", method, path, err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s %s body: %v", method, path, err)
		}
		return resp, body
	}
	_, miss := do("GET", large)
	if len(miss) < 4<<10 {
		t.Fatalf("the strikes chain is %d bytes: too small to be written as a large hit", len(miss))
	}
	raw.Reset()
	hit, body := do("GET", large)
	// The lines added to the held block come after net/http's Date; in
	// the header map's order they would come before it: the hit took the
	// coalesced path.
	if head := raw.String(); strings.Index(head, "\r\nDate: ") > strings.Index(head, "\r\nEtag: ") {
		t.Fatalf("the hit's headers were not added to the held block:\n%.600s", head)
	}
	if hit.Header.Get("X-Cache") != "HIT" || !bytes.Equal(body, miss) || hit.ContentLength != int64(len(body)) {
		t.Fatalf("hit: %s, %d bytes (Content-Length %d), equal to the miss: %v", hit.Header.Get("X-Cache"), len(body), hit.ContentLength, bytes.Equal(body, miss))
	}
	if gz, b := do("GET", large, "Accept-Encoding: gzip\r\n"); gz.Header.Get("Content-Encoding") != "gzip" || gz.ContentLength != int64(len(b)) {
		t.Fatalf("gzip hit: %q, %d bytes (Content-Length %d)", gz.Header.Get("Content-Encoding"), len(b), gz.ContentLength)
	}
	head, b := do("HEAD", large)
	if head.StatusCode != 200 || len(b) != 0 {
		t.Fatalf("HEAD: %d, %d body bytes", head.StatusCode, len(b))
	}
	// The hit's entry headers were added to the held header block, HEAD's
	// set in net/http's header map: the client sees the same headers.
	for name := range head.Header {
		if name != "Date" && !slices.Equal(hit.Header[name], head.Header[name]) {
			t.Errorf("%s: hit %q, HEAD %q", name, hit.Header[name], head.Header[name])
		}
	}
	if len(hit.Header) != len(head.Header) || hit.Header.Get("Etag") == "" || hit.Header.Get("X-Block-Number") == "" || hit.Header.Get("X-Block-Hash") == "" {
		t.Fatalf("hit headers %q, HEAD's %q", hit.Header, head.Header)
	}
	if nm, b := do("GET", large, "If-None-Match: "+hit.Header.Get("Etag")+"\r\n"); nm.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Fatalf("If-None-Match: %d, %d body bytes", nm.StatusCode, len(b))
	}
	if small, b := do("GET", "/healthz"); small.StatusCode != 200 || len(b) == 0 {
		t.Fatalf("healthz: %d %q", small.StatusCode, b)
	}
	if again, b := do("GET", large); again.StatusCode != 200 || !bytes.Equal(b, miss) {
		t.Fatalf("hit after the others: %d, equal %v", again.StatusCode, bytes.Equal(b, miss))
	}
}
