// Package redistest runs a real redis-server for tests: on loopback, on a
// port the test picks, with no persistence, stopped when the test ends.
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
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	Addr string // 127.0.0.1:port
	t    testing.TB
	port int
	args []string // extra redis-server arguments
	cmd  *exec.Cmd
}

// URL is the redis:// URL of the server.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Start runs a redis-server on a free loopback port and waits until it
// answers PING. Extra arguments go to redis-server ("--requirepass", "pw").
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server is not on PATH: these tests run a real Redis; install it with `apt-get install -y redis-server` (.ci/run does)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), t: t, port: port, args: args}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	s.t.Helper()
	s.cmd = exec.Command("redis-server", append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"}, s.args...)...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	for i := 0; ; i++ {
		// Up when it answers, even if only to say NOAUTH.
		if _, err := s.Do("PING"); err == nil || strings.Contains(err.Error(), "NOAUTH") {
			return
		}
		if i == 500 {
			s.Stop()
			s.t.Fatalf("redis-server on %s did not answer PING", s.Addr)
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
	s.cmd = nil
}

// Restart starts a fresh, empty server on the same port.
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
