// Package pgtest runs a real, throw-away PostgreSQL cluster for tests:
// initdb into a temporary directory, pg_ctl start on a loopback port the
// test's own listener reserved and released just before, trust
// authentication on 127.0.0.1 only, stopped (immediate) and removed when
// the test ends. The binaries are Debian's postgresql package's (on PATH,
// or under /usr/lib/postgresql/*/bin); without them the test skips, naming
// scripts/test-setup.sh (prereq; CI fails instead). PostgreSQL refuses to
// run as root: as root the cluster runs as the package's postgres user
// (runuser).
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// Server is one running cluster.
type Server struct {
	URL string // postgres://postgres@127.0.0.1:port/postgres?sslmode=disable
	dir string
	bin string
	as  *user.User // nil: the test's own user
}

// binDir finds initdb and pg_ctl.
func binDir() (string, error) {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(m) == 0 {
		return "", errors.New("initdb and pg_ctl are not on PATH nor under /usr/lib/postgresql/*/bin (Debian package postgresql)")
	}
	return filepath.Dir(m[len(m)-1]), nil
}

// Start runs a cluster and waits until it accepts connections.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	prereq.Need(t, "PostgreSQL's initdb and pg_ctl", err)
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		prereq.Need(t, "the postgres user to run PostgreSQL as (it refuses root)", err)
		s.as = u
	}
	if s.dir, err = os.MkdirTemp("", "pg"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(); _ = os.RemoveAll(s.dir) })
	s.chown(s.dir)
	data := filepath.Join(s.dir, "data")
	if out, err := s.run("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories=%s -c fsync=on", port, s.dir)
	if out, err := s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	s.wait(t)
	return s
}

func (s *Server) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(s.bin, prog)
	if s.as == nil {
		return exec.Command(path, args...).CombinedOutput()
	}
	return exec.Command("runuser", append([]string{"-u", s.as.Username, "--", path}, args...)...).CombinedOutput()
}

func (s *Server) chown(dir string) {
	if s.as == nil {
		return
	}
	uid, _ := strconv.Atoi(s.as.Uid)
	gid, _ := strconv.Atoi(s.as.Gid)
	_ = os.Chown(dir, uid, gid)
}

func (s *Server) wait(t testing.TB) {
	db, err := sql.Open("pgx", s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL at %s did not answer within 30s: %v", s.URL, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) stop() {
	_, _ = s.run("pg_ctl", "-D", filepath.Join(s.dir, "data"), "-m", "immediate", "-w", "stop")
}

// freePort is a loopback port the kernel gave a listener, released for
// the server to take.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
