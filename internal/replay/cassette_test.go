package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

const secret = "SECRETKEY42"

// keyedUpstream answers a GraphQL POST with the operation it was sent, a GET
// with its query string, and /broken with a non-JSON 502; it refuses any
// request without the key header, as a keyed upstream does.
func keyedUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "noise")
		switch {
		case r.URL.Path == "/broken":
			w.WriteHeader(http.StatusBadGateway)
			fmt.Fprint(w, "upstream <down>")
		case r.Method == http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "{\"data\": {\"echo\": %s}}\n", body)
		default:
			fmt.Fprintf(w, "{\"q\":%q}\n", r.URL.RawQuery)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, rt http.RoundTripper, method, url, body string) (*http.Response, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b, nil
}

// recordGraphQL records the same queries, the first one several times and
// concurrently, and returns the cassette file's bytes.
func recordGraphQL(t *testing.T, srv *httptest.Server, path string) []byte {
	t.Helper()
	rec, err := GraphQLRecorder(path, http.DefaultTransport, "https://subgraph.invalid/1")
	if err != nil {
		t.Fatal(err)
	}
	url := srv.URL + "/api/" + secret
	if _, _, err := do(t, rec, http.MethodPost, url, `{"query":"q1","variables":{"a":1,"b":2}}`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, _, err := do(t, rec, http.MethodPost, url, `{"variables":{"b":2,"a":1},"query":"q1"}`); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, _, err := do(t, rec, http.MethodPost, url, `{"query":"q2"}`); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestGraphQLRecordThenReplay(t *testing.T) {
	t.Parallel()
	srv := keyedUpstream(t)
	dir := t.TempDir()
	raw := recordGraphQL(t, srv, filepath.Join(dir, "subgraph.json"))
	for _, leak := range []string{secret, srv.URL, "Authorization", "X-Request-Id", "noise"} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("cassette holds %q:\n%s", leak, raw)
		}
	}
	if n := bytes.Count(raw, []byte(`"request"`)); n != 2 {
		t.Errorf("%d interactions recorded, want 2 (one per distinct query):\n%s", n, raw)
	}

	rp, err := GraphQLReplayer(os.DirFS(dir), "subgraph.json")
	if err != nil {
		t.Fatal(err)
	}
	// Another URL, another key order, asked twice: the same answer each time.
	for range 2 {
		resp, body, err := do(t, rp, http.MethodPost, "http://elsewhere/x", `{"query":"q1","variables":{"b":2,"a":1}}`)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" ||
			string(body) != `{"data":{"echo":{"query":"q1","variables":{"a":1,"b":2}}}}` {
			t.Fatalf("replay: %d %v %s", resp.StatusCode, resp.Header, body)
		}
	}
	_, _, err = do(t, rp, http.MethodPost, srv.URL+"/api/"+secret, `{"query":"q3"}`)
	if !errors.Is(err, problem.ErrNotRecorded) || strings.Contains(err.Error(), secret) {
		t.Fatalf("unrecorded query: %v", err)
	}
	if _, _, err := do(t, rp, http.MethodGet, srv.URL, `{"query":"q1","variables":{"a":1,"b":2}}`); !errors.Is(err, problem.ErrNotRecorded) {
		t.Fatalf("recorded body, other method: %v", err)
	}

	x, err := Exchanges(os.DirFS(dir), "subgraph.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 2 || string(x[0].Request) != `{"query":"q1","variables":{"a":1,"b":2}}` || string(x[1].Request) != `{"query":"q2"}` {
		t.Fatalf("exchanges not in match-key order: %q", x)
	}
}

// The same answers make the same file, byte for byte, however many times
// and however concurrently each request was made.
func TestRecordingIsDeterministic(t *testing.T) {
	t.Parallel()
	srv := keyedUpstream(t)
	dir := t.TempDir()
	a := recordGraphQL(t, srv, filepath.Join(dir, "a.json"))
	b := recordGraphQL(t, srv, filepath.Join(dir, "b.json"))
	if !bytes.Equal(a, b) {
		t.Fatalf("two recordings differ:\n%s\n%s", a, b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temporary files left beside the cassettes: %v", entries)
	}
	// Answers arriving in the opposite order (concurrent legs' quotes do)
	// make the same file too.
	paths := map[string]string{}
	for name, order := range map[string][]string{"up": {"/swap?amount=1", "/swap?amount=2"}, "down": {"/swap?amount=2", "/swap?amount=1"}} {
		paths[name] = filepath.Join(dir, name+".json")
		rec, err := HTTPRecorder(paths[name], http.DefaultTransport)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range order {
			if _, _, err := do(t, rec, http.MethodGet, srv.URL+u, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := rec.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	up, _ := os.ReadFile(paths["up"])
	down, _ := os.ReadFile(paths["down"])
	if !bytes.Equal(up, down) {
		t.Fatalf("the order answers arrived in changed the cassette:\n%s\n%s", up, down)
	}
}

func TestHTTPRecordThenReplay(t *testing.T) {
	t.Parallel()
	srv := keyedUpstream(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "quote.json")
	rec, err := HTTPRecorder(path, http.DefaultTransport)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"/swap?amount=1", "/swap?amount=2", "/swap?amount=1", "/broken"} {
		if _, _, err := do(t, rec, http.MethodGet, srv.URL+u, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !bytes.Contains(raw, []byte(`"body": "upstream <down>"`)) {
		t.Errorf("non-JSON answer not kept as readable text:\n%s", raw)
	}
	for _, leak := range []string{secret, "Authorization", "noise"} {
		if bytes.Contains(raw, []byte(leak)) {
			t.Errorf("cassette holds %q:\n%s", leak, raw)
		}
	}

	rp, err := HTTPReplayer(os.DirFS(dir), "quote.json")
	if err != nil {
		t.Fatal(err)
	}
	_, body, err := do(t, rp, http.MethodGet, srv.URL+"/swap?amount=2", "")
	if err != nil || string(body) != `{"q":"amount=2"}` {
		t.Fatalf("replay: %s %v", body, err)
	}
	// A non-JSON answer is kept as text, status and all.
	resp, body, err := do(t, rp, http.MethodGet, srv.URL+"/broken", "")
	if err != nil || resp.StatusCode != http.StatusBadGateway || string(body) != "upstream <down>" {
		t.Fatalf("replay of a non-JSON answer: %v %q %v", resp, body, err)
	}
	if _, _, err := do(t, rp, http.MethodGet, srv.URL+"/swap?amount=3", ""); !errors.Is(err, problem.ErrNotRecorded) {
		t.Fatalf("unrecorded URL: %v", err)
	}

	// No cassette at all: nothing is replayed, and saying so is not an error
	// until a request asks.
	none, err := HTTPReplayer(os.DirFS(dir), "absent.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := do(t, none, http.MethodGet, srv.URL+"/swap?amount=1", ""); !errors.Is(err, problem.ErrNotRecorded) {
		t.Fatalf("missing cassette: %v", err)
	}
}

func TestLoadRejectsOtherFormats(t *testing.T) {
	t.Parallel()
	if _, err := LoadHTTPCassette([]byte(`{"format":"clamm-gateway/rpc-cassette/v1","interactions":[]}`)); err == nil {
		t.Fatal("an RPC cassette loaded as an HTTP one")
	}
}
