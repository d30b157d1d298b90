package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/demo"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

// syncBuffer is a bytes.Buffer safe for the server goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs the command and returns its base URL once it is listening.
func start(t *testing.T, env map[string]string) (base string, stdout, stderr *syncBuffer, stop func()) {
	t.Helper()
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, stdout, stderr)
	}()
	re := regexp.MustCompile(`listening on (\S+)`)
	eventually.True(t, "the server to listen", func() bool {
		if m := re.FindStringSubmatch(stdout.String()); m != nil {
			base = "http://" + m[1]
			return true
		}
		select {
		case err := <-done:
			t.Fatalf("run ended early: %v\n%s", err, stderr)
		default:
		}
		return false
	})
	return base, stdout, stderr, func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

func fetch(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestRunServesTheDemoAndPrintsExamples(t *testing.T) {
	base, stdout, _, stop := start(t, nil)
	defer stop()
	if !strings.Contains(stdout.String(), "curl '") {
		t.Fatalf("no example requests printed:\n%s", stdout)
	}
	// Every chain's mode, printed and in readiness.
	for _, line := range []string{"chain 42161: mode demo", "chain 5000: not served"} {
		if !strings.Contains(stdout.String(), line) {
			t.Errorf("start does not print %q:\n%s", line, stdout)
		}
	}
	if _, body := fetch(t, base+"/readyz"); !strings.Contains(body, `"chainId":42161,"mode":"demo"`) || !strings.Contains(body, `"chainId":5000,"mode":"not served"`) {
		t.Errorf("readiness does not show the modes: %s", body)
	}
	// The README's examples, and variations of them nobody recorded: the
	// demo answers any reach and any page (issue 13).
	for _, path := range []string{
		"/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100",
		"/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=7&putsReach=3",
		"/clamm/option-markets?chainId=42161",
	} {
		code, body := fetch(t, base+path)
		if code != http.StatusOK || !strings.HasPrefix(body, `[{"`) {
			t.Fatalf("%s: status %d: %.200s", path, code, body)
		}
	}
	code, body := fetch(t, base+"/clamm/exercise/history?chainId=42161&user=0xA11CE00000000000000000000000000000000001&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&first=3&skip=0")
	if code != http.StatusOK || strings.Count(body, `"txHash"`) != 3 {
		t.Fatalf("history first=3: status %d: %.300s", code, body)
	}
}

// Half of a live configuration stops the start, naming what is missing,
// rather than serving the chain from the demo's recordings.
func TestHalfALiveChainStopsTheStart(t *testing.T) {
	var stdout, stderr syncBuffer
	env := map[string]string{"CLAMM_CHAIN_42161_SUBGRAPH_URL": "http://127.0.0.1:1/subgraphs/name/clamm"}
	err := run(context.Background(), []string{"-listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "CLAMM_CHAIN_42161_RPC_URL") {
		t.Fatalf("run: %v", err)
	}
	if strings.Contains(stdout.String(), "listening on") {
		t.Errorf("it listened:\n%s", stdout.String())
	}
}

// A key inside a configured URL reaches neither the client nor the logs,
// even when the upstream fails and its error quotes the URL.
func TestSecretsInURLsStayOutOfLogsAndBodies(t *testing.T) {
	secret := "SECRETKEY1234567890"
	env := map[string]string{
		"CLAMM_CHAIN_5000_SUBGRAPH_URL": "http://" + closedAddr(t) + "/api/" + secret + "/subgraphs/x",
		"CLAMM_CHAIN_5000_RPC_URL":      "http://user:" + secret + "@" + closedAddr(t) + "/v2/" + secret,
	}
	base, stdout, stderr, stop := start(t, env)
	code, body := fetch(t, base+"/clamm/strikes-chain?optionMarket=0x1D5DE630BbBF68c9bf17D8462605227D79eA910C&chainId=5000&callsReach=1&putsReach=1")
	stop()
	if code != http.StatusServiceUnavailable {
		t.Fatalf("status %d: %s", code, body)
	}
	for name, text := range map[string]string{"body": body, "stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("secret in %s:\n%s", name, text)
		}
	}
	if !strings.Contains(stderr.String(), "RPC_UNAVAILABLE") {
		t.Errorf("the failure was not logged:\n%s", stderr)
	}
}

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-version"}, func(string) string { return "" }, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "clamm-gateway "+release) {
		t.Fatalf("%v %q", err, out.String())
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(release) {
		t.Errorf("release %q is not a semantic version", release)
	}
}

// The running binary says which release serves it: /healthz names the
// version, and /metrics has clamm_build_info with it.
func TestServedVersionIsTheRelease(t *testing.T) {
	base, _, _, stop := start(t, nil)
	defer stop()
	code, body := fetch(t, base+"/healthz")
	var h struct{ Status, Version string }
	if err := json.Unmarshal([]byte(body), &h); code != http.StatusOK || err != nil || h.Version != release {
		t.Errorf("/healthz: %d %s", code, body)
	}
	_, metrics := fetch(t, base+"/metrics")
	if !strings.Contains(metrics, `clamm_build_info{`) || !strings.Contains(metrics, `version="`+release+`"`) {
		t.Errorf("/metrics has no clamm_build_info of release %s", release)
	}
}

// The 1inch key from the environment reaches neither logs nor answers,
// and no recorded fixture carries a credential.
func TestOneInchKeyStaysSecret(t *testing.T) {
	secret := "ONEINCHKEY-0123456789"
	base, stdout, stderr, stop := start(t, map[string]string{"CLAMM_1INCH_API_KEY": secret})
	var bodies strings.Builder
	for _, id := range []string{"110", "112"} {
		_, body := fetch(t, base+"/clamm/exercise/prepare?chainId=42161&optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&optionId="+id+"&swapperId=1inch&slippage=1")
		bodies.WriteString(body)
	}
	stop()
	for name, text := range map[string]string{"bodies": bodies.String(), "stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("1inch key in %s", name)
		}
	}
	err := filepath.WalkDir("../../internal/demo/recordings", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		low := strings.ToLower(string(raw))
		for _, bad := range []string{"authorization", "bearer ", "apikey", "api_key", "x-api-key"} {
			if strings.Contains(low, bad) {
				t.Errorf("%s carries %q", path, bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Record mode against "live" upstreams (the scenario's fakes behind real
// loopback servers, URLs carrying a key) writes fixtures the demo replays
// byte for byte, and none of them holds the key or the URLs.
func TestRecordModeWritesReplayableFixtures(t *testing.T) {
	scs, err := scenario.Load("../../testdata/scenarios/arbitrum-weth-usdc.json")
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	sg, node := httptest.NewServer(f.Subgraph), httptest.NewServer(f.Node)
	defer sg.Close()
	defer node.Close()
	secret := "RECORDKEY42"
	dir := t.TempDir()
	var out bytes.Buffer
	env := map[string]string{
		"CLAMM_CHAIN_42161_SUBGRAPH_URL": sg.URL + "/api/" + secret,
		"CLAMM_CHAIN_42161_RPC_URL":      node.URL + "/v2/" + secret,
	}
	path := "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100"
	if err := run(context.Background(), []string{"record", "-out", dir, path}, func(k string) string { return env[k] }, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"subgraph.json", "rpc.json"} {
		raw, err := os.ReadFile(filepath.Join(dir, "42161", name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), secret) || strings.Contains(string(raw), sg.URL) || strings.Contains(string(raw), node.URL) {
			t.Errorf("%s holds the key or an upstream URL", name)
		}
	}
	// The recorded subgraph answer is the one the committed demo replays.
	got, _ := os.ReadFile(filepath.Join(dir, "42161", "subgraph.json"))
	if !strings.Contains(string(got), `"totalLiquidity": "1250000000000000000"`) {
		t.Error("recorded subgraph cassette lacks the scenario's strikes")
	}
}

// A client that sends half a request line and stops is cut off by the
// read-header timeout; every other server timeout is set too.
func TestServerTimeouts(t *testing.T) {
	hs := httpServer(http.NotFoundHandler(), time.Second)
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= time.Second || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("timeouts not all set: %+v", hs)
	}
	hs.ReadHeaderTimeout = 50 * time.Millisecond // the production value is 5 s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("GET /healthz HT")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound for the test, not a measurement
	// Closed either way: an orderly close, or a reset when the server
	// drops the connection with bytes of ours unread. Only the test's own
	// deadline passing means it kept the connection open.
	if _, err := io.ReadAll(c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server did not close the stalled connection: %v", err)
	}
}

// A profiling address that cannot be bound stops the start, naming the
// variable; it used to fail silently.
func TestPprofBindFailureStopsTheStart(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	env := map[string]string{"CLAMM_PPROF_LISTEN": busy.Addr().String()}
	err = run(context.Background(), []string{"-listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "CLAMM_PPROF_LISTEN") {
		t.Fatalf("%v", err)
	}
}

// On the real server, oversized header fields and OPTIONS * get the JSON
// error shape, not net/http's own text 431 and empty 200.
func TestRawRequestsGetJSONOnTheWire(t *testing.T) {
	base, _, _, stop := start(t, map[string]string{})
	defer stop()
	addr := strings.TrimPrefix(base, "http://")
	for _, c := range []struct {
		name, request, status string
	}{
		{"header fields of 20 KB", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 20<<10) + "\r\nConnection: close\r\n\r\n", "431"},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "404"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(conn, c.request)
		raw, _ := io.ReadAll(conn)
		conn.Close()
		head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
		if !strings.HasPrefix(head, "HTTP/1.1 "+c.status) || !strings.Contains(head, "application/json") || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %.300s", c.name, raw)
		}
	}
}

// A request with both Content-Length and Transfer-Encoding (RFC 9112 6.1)
// is answered and its connection closed: a second request hidden after
// its chunked body is never read, let alone answered.
func TestSmuggledRequestIsNotAnswered(t *testing.T) {
	base, _, _, stop := start(t, map[string]string{})
	defer stop()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hidden := "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
	_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: "+strconv.Itoa(5+len(hidden))+
		"\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"+hidden)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second)) // a guard against a hang, not a bound under test
	raw, _ := io.ReadAll(conn)
	if n := strings.Count(string(raw), "HTTP/1.1 "); n != 1 || !strings.Contains(string(raw), "Connection: close") {
		t.Fatalf("%d answers on the connection, want 1 and the connection closed:\n%.600s", n, raw)
	}
}

// An RPC URL of another network stops the start, naming the variable.
func TestRPCOfAnotherChainStopsTheStart(t *testing.T) {
	f := scenario.NewFakes(t)
	f.Node.ChainID = 1 // Ethereum mainnet behind the Arbitrum variable
	rpcSrv := httptest.NewServer(f.Node)
	defer rpcSrv.Close()
	sgSrv := httptest.NewServer(f.Subgraph)
	defer sgSrv.Close()
	env := map[string]string{"CLAMM_CHAIN_42161_RPC_URL": rpcSrv.URL, "CLAMM_CHAIN_42161_SUBGRAPH_URL": sgSrv.URL}
	err := run(context.Background(), []string{"-listen", "127.0.0.1:0"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "CLAMM_CHAIN_42161_RPC_URL") || !strings.Contains(err.Error(), "chain 1,") {
		t.Fatalf("%v", err)
	}
}

// Answers net/http writes itself on the connection, before any handler
// exists, leave in the JSON error shape with net/http's status and a
// Content-Length that matches the body.
func TestNetHTTPOwnAnswersAreJSON(t *testing.T) {
	base, stdout, stderr, stop := start(t, map[string]string{})
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	addr := strings.TrimPrefix(base, "http://")
	for _, c := range []struct {
		name, request, status, code string
	}{
		{"garbage request line", "NOT A REQUEST\r\n\r\n", "400", "MALFORMED_REQUEST"},
		{"HTTP/9.9", "GET / HTTP/9.9\r\nHost: x\r\n\r\n", "505", "MALFORMED_REQUEST"},
		{"no Host on HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n", "400", "MALFORMED_REQUEST"},
		{"header fields over net/http's bound", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 80<<10) + "\r\n\r\n", "431", "HEADERS_TOO_LARGE"},
		{"Expect other than 100-continue", "GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n", "417", "MALFORMED_REQUEST"},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(conn, c.request)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			conn.Close()
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		conn.Close()
		var e struct {
			Error struct{ Code, Message string }
		}
		if got := strconv.Itoa(resp.StatusCode); got != c.status || resp.Header.Get("Content-Type") != "application/json" ||
			resp.ContentLength != int64(len(body)) || json.Unmarshal(body, &e) != nil || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s: %d %v %s", c.name, resp.StatusCode, resp.Header, body)
		}
	}
	// An ordinary answer passes untouched.
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	// Each refusal is counted and has its access-log line, like any request.
	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for code, n := range map[string]int{"400": 2, "505": 1, "431": 1, "417": 1} {
		want := `clamm_http_requests_total{route="unmatched",status="` + code + `"} ` + strconv.Itoa(n)
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
	stop()
	stopped = true
	logs := stdout.String() + stderr.String()
	for _, want := range []string{`"route":"unmatched","status":505`, `"route":"unmatched","status":431`, `"route":"unmatched","status":417`, `MALFORMED_REQUEST`, `HEADERS_TOO_LARGE`} {
		if !strings.Contains(logs, want) {
			t.Errorf("no access-log line with %s:\n%.2000s", want, logs)
		}
	}
}

// Only net/http's own signature is rewritten.
func TestRewriteRawErrorLeavesOtherWritesAlone(t *testing.T) {
	for _, p := range []string{
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nok",
		"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n{}",
		`{"error":{"code":"X"}}`,
		"",
	} {
		if _, ok := rewriteRawError([]byte(p)); ok {
			t.Errorf("rewrote %q", p)
		}
	}
}

// Two gateway processes' worth of run() on one password-protected Redis:
// an answer one fills is a HIT on the other with the same bytes and
// validators; the password is in no log line; with Redis stopped both
// keep answering and /readyz says degraded while staying ready.
func TestReplicasShareOneRedis(t *testing.T) {
	secret := "REDISPASSWORD987"
	rds := redistest.Start(t, "--requirepass", secret)
	// A generous command deadline: a loaded test machine must not make a
	// healthy Redis look failed (the fallback has tests of its own).
	env := map[string]string{"CLAMM_REDIS_URL": "redis://:" + secret + "@" + rds.Addr + "/0", "CLAMM_REDIS_TIMEOUT": "5s"}
	a, aOut, aErr, stopA := start(t, env)
	b, bOut, bErr, stopB := start(t, env)
	get := func(url string) *http.Response {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	path := "/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100"
	ra, rb := get(a+path), get(b+path)
	if ra.StatusCode != 200 || rb.StatusCode != 200 || ra.Header.Get("X-Cache") != "MISS" || rb.Header.Get("X-Cache") != "HIT" {
		t.Fatalf("a %d %s, b %d %s", ra.StatusCode, ra.Header.Get("X-Cache"), rb.StatusCode, rb.Header.Get("X-Cache"))
	}
	for _, h := range []string{"Etag", "X-Subgraph-Block", "Content-Length"} {
		if ra.Header.Get(h) != rb.Header.Get(h) {
			t.Errorf("%s: %q vs %q", h, ra.Header.Get(h), rb.Header.Get(h))
		}
	}
	if code, body := fetch(t, b+"/readyz"); code != 200 || !strings.Contains(body, `"sharedCache":{"status":"ok"}`) {
		t.Fatalf("/readyz %d %s", code, body)
	}
	rds.Stop()
	for _, r := range demo.Requests { // not yet cached on b: each a miss with Redis gone
		if resp := get(b + r.Path); resp.StatusCode != r.Status() {
			t.Fatalf("%s with Redis stopped: %d, want %d", r.Name, resp.StatusCode, r.Status())
		}
	}
	if code, body := fetch(t, b+"/readyz"); code != 200 || !strings.Contains(body, `"status":"degraded"`) {
		t.Fatalf("/readyz with Redis stopped: %d %s", code, body)
	}
	stopA()
	stopB()
	for name, text := range map[string]string{"a stdout": aOut.String(), "a stderr": aErr.String(), "b stdout": bOut.String(), "b stderr": bErr.String()} {
		if strings.Contains(text, secret) {
			t.Errorf("Redis password in %s:\n%s", name, text)
		}
	}
	if !strings.Contains(aErr.String(), `"msg":"shared cache tier"`) {
		t.Errorf("the tier is not logged at start:\n%s", aErr)
	}
}

// The start's examples are the demo's requests only while the demo chain
// is served from its recordings: live, they would ask for markets and
// users the chain does not hold, so the start names what any chain
// answers instead.
func TestBannerExamplesFitTheModes(t *testing.T) {
	demoPath := demo.Requests[0].Path
	var b strings.Builder
	printBanner(&b, "127.0.0.1:8080", map[uint64]string{42161: app.ModeDemo, 5000: app.ModeNotConfigured})
	if !strings.Contains(b.String(), demoPath) {
		t.Errorf("demo mode: the demo's requests not printed:\n%s", b.String())
	}
	b.Reset()
	printBanner(&b, "127.0.0.1:8080", map[uint64]string{42161: app.ModeIndexed, 5000: app.ModeLive, 146: app.ModeNotConfigured})
	out := b.String()
	if strings.Contains(out, demoPath) || !strings.Contains(out, "/clamm/option-markets?chainId=42161'") ||
		!strings.Contains(out, "/clamm/option-markets?chainId=5000'") || strings.Contains(out, "chainId=146'") || !strings.Contains(out, "/readyz'") {
		t.Errorf("live chains: the examples do not fit:\n%s", out)
	}
}

// -h is an answer, not an error, and names the record subcommand.
func TestHelpNamesRecord(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(errb.String(), "clamm-gateway record") {
		t.Errorf("-h does not name record:\n%s", errb.String())
	}
}

// The binary's release is the CHANGELOG's newest version section, under
// an [Unreleased] kept for what lands next (docs/development.md, "Cutting
// a release").
func TestReleaseIsTheChangelogsNewest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := regexp.MustCompile(`(?m)^## \[([^\]]+)\](.*)$`).FindAllStringSubmatch(string(raw), 2)
	if len(sections) < 2 || sections[0][1] != "Unreleased" {
		t.Fatalf("CHANGELOG.md's first sections are %v, want [Unreleased] then the release", sections)
	}
	if sections[1][1] != release || !regexp.MustCompile(`^ - \d{4}-\d{2}-\d{2}$`).MatchString(sections[1][2]) {
		t.Errorf("CHANGELOG.md's newest version section is %q%s, want [%s] - YYYY-MM-DD", sections[1][1], sections[1][2], release)
	}
}
