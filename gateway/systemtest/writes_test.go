package systemtest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

// recordingListener keeps what the server writes on each connection, one
// entry per Write call (one write system call each on a TCP connection).
type recordingListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*recordingConn
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &recordingConn{Conn: c}
	l.mu.Lock()
	l.conns = append(l.conns, rc)
	l.mu.Unlock()
	return rc, nil
}

func (l *recordingListener) last() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.conns[len(l.conns)-1]
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

type recordingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, bytes.Clone(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestHitWrites: a cache hit's body of 4 KiB or more goes to the socket in
// one write of its own after the headers; a smaller one shares a single
// write with them.
func TestHitWrites(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServer(t)
	ts := httptest.NewUnstartedServer(srv)
	ln := &recordingListener{Listener: ts.Listener}
	ts.Listener = ln
	ts.Start()
	defer ts.Close()
	small := gateway.PathStrikesChain + "?optionMarket=" + wethUSDC + "&chainId=42161&callsReach=1&putsReach=1"
	for _, c := range []struct {
		path   string
		writes int
	}{{strikes, 2}, {small, 1}} {
		fetch := func() []byte {
			// A connection per request, so the last one holds only this answer.
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}} // the identity body's writes
			resp, err := client.Get(ts.URL + c.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d", c.path, resp.StatusCode)
			}
			return body
		}
		fetch() // fill
		body := fetch()
		writes := ln.last()
		if len(writes) != c.writes {
			t.Fatalf("%s (%d-byte body): %d writes, want %d", c.path, len(body), len(writes), c.writes)
		}
		if (len(body) >= 4096) != (c.writes == 2) {
			t.Fatalf("%s: a %d-byte body is on the wrong side of 4 KiB for this case", c.path, len(body))
		}
		all := bytes.Join(writes, nil)
		if !bytes.Contains(all, []byte("X-Cache: HIT")) || !bytes.HasSuffix(all, body) {
			t.Fatalf("%s: the writes are not the hit's headers and body", c.path)
		}
		if c.writes == 2 && (!bytes.Equal(writes[1], body) || !bytes.HasSuffix(writes[0], []byte("\r\n\r\n"))) {
			t.Fatalf("%s: first write %d bytes, second %d bytes; want the headers, then the %d-byte body", c.path, len(writes[0]), len(writes[1]), len(body))
		}
	}
}
