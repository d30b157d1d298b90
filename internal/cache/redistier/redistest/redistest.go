// Package redistest runs a real redis-server for tests, with no
// persistence, stopped when the test ends. The server listens only on a
// unix socket in the test's temporary directory; the test's own loopback
// listener (bound to port 0 and held for the whole test) forwards each
// connection to it. No port is chosen, closed and handed on, so tests in
// parallel packages cannot race for one, and a restarted server is reached
// at the same address.
// Tests of the shared tier run against the real server, not a fake, so
// the lease scripts, expiry and pub/sub are Redis's own.
//
// redis-server must be on PATH (the Debian package redis-server, which
// .ci/run installs); without it the test fails and says so, rather than
// skipping: a skipped test would pass CI with the tier untested.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// Server is one redis-server process behind the test's own listener.
type Server struct {
	Addr string // 127.0.0.1:port, the test's listener
	t    testing.TB
	sock string   // the server's unix socket
	args []string // extra redis-server arguments
	cmd  *exec.Cmd
	ln   net.Listener
}

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Start runs a redis-server reached at a loopback address of the test's
// own and waits until it answers PING. Extra arguments go to
// redis-server ("--requirepass", "pw").
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	prereq.Programs(t, "redis-server")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A short path: a unix socket path is limited to about 100 bytes.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), t: t, sock: filepath.Join(dir, "s"), args: args, ln: ln}
	go s.forward()
	t.Cleanup(func() {
		_ = ln.Close()
		s.Stop()
		_ = os.RemoveAll(dir)
	})
	s.start()
	return s
}

// forward passes each connection to the listener on to the server's socket
// until the listener closes; while the server is down a connection is
// closed at once, as a refused one would be.
func (s *Server) forward() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("unix", s.sock)
			if err != nil {
				return
			}
			defer u.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
			go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
			<-done // either side closing ends both
		}()
	}
}

func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", append([]string{"--port", "0", "--unixsocket", s.sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--loglevel", "warning"}, s.args...)...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Up when it answers, even if only to say NOAUTH.
		if _, err := s.Do("PING"); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatalf("redis-server behind %s did not answer PING within 10s", s.Addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop kills the server (a crash, not a shutdown) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	_ = os.Remove(s.sock)
	s.cmd = nil
}

// Restart starts a fresh, empty server at the same address.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Do sends one command over a fresh connection (RESP, inline-free) and
// returns the reply as text: a test's view of Redis that does not go
// through the client under test.
func (s *Server) Do(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return readReply(bufio.NewReader(c))
}

func readReply(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("redis: %s", line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err // nil bulk: "" and no error
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", err
		}
		parts := make([]string, 0, max(n, 0))
		for range n {
			p, err := readReply(r)
			if err != nil {
				return "", err
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("unexpected reply %q", line)
}

// TextCodec is the codec of the tiers' tests, which cache strings: it
// refuses anything it did not write, as the gateway's codec does, so a
// foreign or corrupt record reads as undecodable.
type TextCodec struct{}

// Encode writes a string value.
func (TextCodec) Encode(v any) ([]byte, error) { return []byte("text:" + v.(string)), nil }

// Decode reads what Encode wrote.
func (TextCodec) Decode(b []byte) (any, error) {
	s, ok := strings.CutPrefix(string(b), "text:")
	if !ok {
		return nil, errors.New("not text")
	}
	return s, nil
}
