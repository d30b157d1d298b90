package topologytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// freePort finds a loopback port free now, below 55000 so that a cluster
// node's bus port (port+10000) exists too (start retries a server that
// loses the port before it binds it).
func freePort(t *testing.T) int {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if p < 55000 {
			if b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000)); err == nil {
				_ = b.Close()
				return p
			}
		}
	}
}

// server is one redis-server (or sentinel) process on a loopback port.
type server struct {
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been waited for
}

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

func (s *server) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
	}
}

// start runs redis-server with a config file of lines in dir (a sentinel
// rewrites its own) and waits until it answers PING. Redis cannot bind
// port 0 and say which it took, so the port is found free first; a server
// that loses it to another process in between exits ("Address already in
// use") and is started again on another port.
func start(t *testing.T, dir string, lines ...string) *server {
	t.Helper()
	prereq.Programs(t, "redis-server", "redis-cli")
	for attempt := 1; ; attempt++ {
		s := launch(t, dir, lines)
		eventually.True(t, "redis on "+s.addr()+" answers PING or exits", func() bool {
			select {
			case <-s.done:
				return true
			default:
			}
			out, err := cli(s.addr(), "PING")
			return err == nil && strings.Contains(out, "PONG")
		})
		select {
		case <-s.done: // lost the port, or someone else's server answered on it
			if attempt == 5 {
				t.Fatalf("redis-server on %s exited at start %d times in a row", s.addr(), attempt)
			}
			continue
		default:
		}
		return s
	}
}

// launch starts one redis-server on a free port.
func launch(t *testing.T, dir string, lines []string) *server {
	t.Helper()
	s := &server{port: freePort(t)}
	conf := filepath.Join(dir, fmt.Sprintf("redis-%d.conf", s.port))
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\nsave \"\"\nappendonly no\nprotected-mode no\nloglevel warning\ndir %s\n", s.port, dir) + strings.Join(lines, "\n") + "\n"
	body = strings.ReplaceAll(body, "{port}", strconv.Itoa(s.port))
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{conf}
	if strings.Contains(body, "sentinel monitor") {
		args = append(args, "--sentinel")
	}
	cmd := exec.Command("redis-server", args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); close(s.done) }()
	t.Cleanup(s.stop)
	return s
}

// cli runs redis-cli against addr: the test's view of the servers, apart
// from the client under test.
func cli(addr string, args ...string) (string, error) {
	host, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "redis-cli", append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
	return string(out), err
}

// replicas are caches of gateway replicas, each on its own tier (its own
// connections) to one deployment, and those tiers.
func replicas(t *testing.T, url string, n int) (out []*cache.Cache[string], tiers []*redistier.Tier) {
	t.Helper()
	for range n {
		tr, err := redistier.New(redistier.Options{URL: url, Prefix: config.Default().RedisPrefix, OpTimeout: 2 * time.Second, LeaseTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tr.Close() })
		out = append(out, cache.New[string](cache.Options{MaxEntries: 1000, FillTimeout: 20 * time.Second, Shared: tr, Codec: redistest.TextCodec{}}))
		tiers = append(tiers, tr)
	}
	return out, tiers
}

var policy = cache.Policy{TTL: time.Minute, Grace: time.Minute}

// fillOnce asks every replica for each key at once, the fill held until
// all have asked, and checks that each key was filled once across them
// and every answer is that fill's.
func fillOnce(t *testing.T, reps []*cache.Cache[string], keys []string) {
	t.Helper()
	for _, key := range keys {
		var fills atomic.Int64
		release := make(chan struct{})
		fill := func(context.Context) (string, error) {
			fills.Add(1)
			<-release
			return "answer-" + key, nil
		}
		type mark struct{ waits, fills int64 }
		before := make([]mark, len(reps))
		for i, r := range reps {
			before[i] = mark{r.SharedStats().Waits, r.Fills()}
		}
		var wg sync.WaitGroup
		errs := make([]error, 3*len(reps))
		vals := make([]string, len(errs))
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				vals[i], _, _, errs[i] = reps[i%len(reps)].Get(context.Background(), key, policy, fill)
			}()
		}
		// Hold the fill until every replica has reached the tier: one
		// holds the lease and fills, the others wait on it.
		eventually.True(t, "every replica fills or waits on the lease", func() bool {
			for i, r := range reps {
				if r.SharedStats().Waits == before[i].waits && r.Fills() == before[i].fills {
					return false
				}
			}
			return true
		})
		close(release)
		wg.Wait()
		for i := range errs {
			if errs[i] != nil || vals[i] != "answer-"+key {
				t.Fatalf("key %s request %d: %q %v", key, i, vals[i], errs[i])
			}
		}
		if fills.Load() != 1 {
			t.Fatalf("key %s filled %d times across %d replicas, want 1", key, fills.Load(), len(reps))
		}
	}
}

// keepAnswering asks every replica for fresh keys: each is answered (from
// the shared tier or the replica's own fill), never an error.
func keepAnswering(t *testing.T, reps []*cache.Cache[string], prefix string) {
	t.Helper()
	for i := range 20 {
		key := fmt.Sprintf("%s-%d", prefix, i)
		for _, r := range reps {
			v, _, _, err := r.Get(context.Background(), key, policy, func(context.Context) (string, error) { return "v-" + key, nil })
			if err != nil || v != "v-"+key {
				t.Fatalf("%s: %q %v", key, v, err)
			}
		}
	}
}

// Two replicas on a primary with a replica behind a sentinel
// (redis+sentinel://): each key filled once across them; the primary
// stopped, every request is still answered, and once the sentinel has
// promoted the replica the replicas share answers again through it.
func TestSentinel(t *testing.T) {
	dir := t.TempDir()
	primary := start(t, dir)
	replica := start(t, dir, "replicaof 127.0.0.1 "+strconv.Itoa(primary.port))
	sentinel := start(t, dir, "sentinel monitor fleet 127.0.0.1 "+strconv.Itoa(primary.port)+" 1",
		"sentinel down-after-milliseconds fleet 500", "sentinel failover-timeout fleet 2000")
	// The sentinel learns of the replica from the primary's INFO, which it
	// asks every 10 s: a primary stopped before the sentinel has seen the
	// replica linked to it (on a loaded machine the replica links late)
	// leaves it nothing to promote, ever.
	eventually.True(t, "the sentinel knows the replica, linked to the primary", func() bool {
		out, err := cli(sentinel.addr(), "SENTINEL", "replicas", "fleet")
		return err == nil && linkedReplica(out, replica.port)
	})
	reps, _ := replicas(t, "redis+sentinel://"+sentinel.addr()+"?master_name=fleet", 2)
	fillOnce(t, reps, []string{"a", "b", "c"})

	primary.stop()
	keepAnswering(t, reps, "during")
	// A failover attempt that runs late on a loaded machine is aborted
	// and tried again after twice the failover timeout, and a sentinel
	// whose timer ran late pauses 30 s (TILT): waited for as long as it
	// takes, within a generous deadline.
	eventually.Within(t, failoverDeadline, "the sentinel promotes the replica", func() bool {
		out, err := cli(sentinel.addr(), "SENTINEL", "get-master-addr-by-name", "fleet")
		return err == nil && strings.Contains(out, strconv.Itoa(replica.port))
	})
	eventually.Within(t, failoverDeadline, "the replicas share answers through the new primary", func() bool {
		key := fmt.Sprint("after-", time.Now().UnixNano())
		if _, _, _, err := reps[0].Get(context.Background(), key, policy, func(context.Context) (string, error) { return "shared", nil }); err != nil {
			return false
		}
		v, st, _, err := reps[1].Get(context.Background(), key, policy, func(context.Context) (string, error) { return "own", nil })
		return err == nil && v == "shared" && st == cache.Hit
	})
	fillOnce(t, reps, []string{"d"})
}

// failoverDeadline bounds the waits on a Sentinel's failover.
const failoverDeadline = 3 * time.Minute

// linkedReplica says whether SENTINEL REPLICAS's answer (redis-cli's raw
// lines: field, value, field, value, ...) lists the replica on port as a
// replica, up, whose link to the primary is up.
func linkedReplica(out string, port int) bool {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var f map[string]string
	for i := 0; i+1 < len(lines); i += 2 {
		k, v := strings.TrimSpace(lines[i]), strings.TrimSpace(lines[i+1])
		if k == "name" {
			f = map[string]string{}
		}
		if f == nil {
			continue
		}
		f[k] = v
		if f["port"] == strconv.Itoa(port) && f["flags"] == "slave" && f["master-link-status"] == "ok" {
			return true
		}
	}
	return false
}

// Two replicas on a three-node Redis Cluster (redis+cluster://, one seed
// node named): keys spread over the nodes' slots are each filled once
// across them (a record and its lease share a slot by their hash tag);
// one node stopped, every request is still answered, those of the other
// nodes' slots still shared.
func TestCluster(t *testing.T) {
	dir := t.TempDir()
	var nodes []*server
	for range 3 {
		nodes = append(nodes, start(t, dir, "cluster-enabled yes", "cluster-config-file nodes-{port}.conf",
			"cluster-node-timeout 1000", "cluster-require-full-coverage no"))
	}
	args := []string{"--cluster", "create"}
	for _, n := range nodes {
		args = append(args, n.addr())
	}
	if out, err := cli(nodes[0].addr(), append(args, "--cluster-replicas", "0", "--cluster-yes")...); err != nil {
		t.Fatalf("cluster create: %v\n%s", err, out)
	}
	eventually.True(t, "the cluster is ok", func() bool {
		for _, n := range nodes {
			out, err := cli(n.addr(), "CLUSTER", "INFO")
			if err != nil || !strings.Contains(out, "cluster_state:ok") {
				return false
			}
		}
		return true
	})
	reps, tiers := replicas(t, "redis+cluster://"+nodes[0].addr(), 2)
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	fillOnce(t, reps, keys)
	slots := map[string]bool{}
	for _, k := range keys {
		out, err := cli(nodes[0].addr(), "CLUSTER", "KEYSLOT", k)
		if err != nil {
			t.Fatal(err)
		}
		slots[strings.TrimSpace(out)] = true
	}
	if len(slots) < 3 {
		t.Fatalf("keys in %d slots", len(slots))
	}

	nodes[2].stop()
	keepAnswering(t, reps, "during")
	// Keys whose slots the living nodes serve are still shared. A key of
	// the stopped node's slots fails its command, and the tier skips
	// Redis for its back-off (1 s): each attempt waits until neither
	// tier is backing off (not for a pause longer than the back-off).
	i := 0
	eventually.True(t, "a key shared through the two living nodes", func() bool {
		for _, tr := range tiers {
			if down, _ := tr.Degraded(); down {
				return false
			}
		}
		i++
		key := fmt.Sprint("after-", i)
		if _, _, _, err := reps[0].Get(context.Background(), key, policy, func(context.Context) (string, error) { return "shared", nil }); err != nil {
			t.Fatal(err)
		}
		v, st, _, err := reps[1].Get(context.Background(), key, policy, func(context.Context) (string, error) { return "own", nil })
		return err == nil && v == "shared" && st == cache.Hit
	})
	t.Logf("shared again at attempt %d with one node of three stopped", i)
}
