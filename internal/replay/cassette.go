package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// HTTPFormat names the HTTP cassette format (GraphQL and the 1inch API).
const HTTPFormat = "clamm-gateway/http-cassette/v1"

// HTTPCassette is a recorded set of HTTP exchanges. It holds only what a
// replay matches on and answers with: no request headers (API keys travel
// there), no host, no response headers, no timings.
type HTTPCassette struct {
	Format       string            `json:"format"`
	Interactions []HTTPInteraction `json:"interactions"`
}

// HTTPInteraction is one request and its answer.
type HTTPInteraction struct {
	Request  HTTPRequest  `json:"request"`
	Response HTTPResponse `json:"response"`
}

// HTTPRequest is what a replay matches a request on.
type HTTPRequest struct {
	Method string `json:"method"`
	URL    string `json:"url"`
	Body   Body   `json:"body,omitempty"`
}

// HTTPResponse is a recorded answer; replays serve it as application/json.
type HTTPResponse struct {
	Status int  `json:"status"`
	Body   Body `json:"body,omitempty"`
}

// Body is a request or response body. A JSON object or array is written
// as JSON, so a cassette reads (and diffs) like the answers it holds;
// anything else is written as a JSON string (so as text: the upstreams
// recorded answer JSON). JSON whitespace is not kept: a replay serves the
// compact encoding, which every JSON reader takes as the same value.
type Body []byte

// MarshalJSON implements json.Marshaler.
func (b Body) MarshalJSON() ([]byte, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		var out bytes.Buffer
		if err := json.Compact(&out, t); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // as in Save: "<" stays "<"
	if err := enc.Encode(string(b)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *Body) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return err
		}
		*b = Body(s)
	case bytes.Equal(raw, []byte("null")):
		*b = nil
	default:
		var out bytes.Buffer
		if err := json.Compact(&out, raw); err != nil {
			return err
		}
		*b = out.Bytes()
	}
	return nil
}

// matchKey names what a replay matches a request on; recorders keep one
// interaction per key.
type matchKey func(method, url string, body []byte) (string, bool)

// graphQLKey matches on method and the JSON body compared as values. The
// URL is left out on purpose: one cassette serves one chain's subgraph, and
// recording replaces URLs (which may hold API keys) with a placeholder.
func graphQLKey(method, _ string, body []byte) (string, bool) {
	c, err := canonical(body)
	if err != nil {
		return "", false
	}
	return method + " " + c, true
}

// getKey matches by method and full URL: the 1inch API's answer depends on
// its query string alone (the key travels in a header).
func getKey(method, url string, _ []byte) (string, bool) {
	return method + " " + url, true
}

// LoadHTTPCassette reads a cassette from raw JSON.
func LoadHTTPCassette(raw []byte) (*HTTPCassette, error) {
	var c HTTPCassette
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Format != HTTPFormat {
		return nil, fmt.Errorf("http cassette format %q, want %q", c.Format, HTTPFormat)
	}
	return &c, nil
}

func readCassette(fsys fs.FS, name string) (*HTTPCassette, error) {
	raw, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	c, err := LoadHTTPCassette(raw)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	return c, nil
}

// Replayer answers requests from a cassette, any number of times each; a
// request the cassette does not hold fails with ErrNotRecorded. It never
// dials anything.
type Replayer struct {
	key     matchKey
	answers map[string]HTTPResponse
}

func newReplayer(c *HTTPCassette, key matchKey) *Replayer {
	r := &Replayer{key: key, answers: map[string]HTTPResponse{}}
	for _, in := range c.Interactions {
		k, ok := key(in.Request.Method, in.Request.URL, in.Request.Body)
		if _, dup := r.answers[k]; ok && !dup {
			r.answers[k] = in.Response
		}
	}
	return r
}

// RoundTrip implements http.RoundTripper.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	k, ok := r.key(req.Method, req.URL.String(), body)
	answer, found := r.answers[k]
	if !ok || !found {
		// No URL in the error: a subgraph's may hold a key in its path.
		return nil, fmt.Errorf("replay: %s: %w", req.Method, problem.ErrNotRecorded)
	}
	return &http.Response{
		StatusCode: answer.Status, Status: fmt.Sprintf("%d %s", answer.Status, http.StatusText(answer.Status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(answer.Body)),
		ContentLength: int64(len(answer.Body)),
		Request:       req,
	}, nil
}

// readBody reads and closes req's body, leaving a fresh reader of the same
// bytes in its place for whoever reads it next.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// GraphQLReplayer replays the cassette file name in fsys, matching method
// and JSON body (the URL is ignored).
func GraphQLReplayer(fsys fs.FS, name string) (http.RoundTripper, error) {
	c, err := readCassette(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("graphql %w", err)
	}
	return newReplayer(c, graphQLKey), nil
}

// HTTPReplayer replays the cassette file name in fsys, matching method and
// full URL. A missing cassette replays nothing: every request fails with
// ErrNotRecorded (a chain whose demo asks no 1inch quote records none).
func HTTPReplayer(fsys fs.FS, name string) (http.RoundTripper, error) {
	c, err := readCassette(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		c = &HTTPCassette{Format: HTTPFormat}
	} else if err != nil {
		return nil, fmt.Errorf("http %w", err)
	}
	return newReplayer(c, getKey), nil
}

// Recorder forwards requests to a real transport and keeps one interaction
// per match key (the first answer) for Stop to write, ordered by match key:
// the gateway asks some upstreams concurrently (a prepare quotes its legs
// at once), so the order answers arrive in is not the same from one
// recording to the next, and a cassette must be. It is safe for concurrent use: the gateway calls an upstream
// from several goroutines at once.
type Recorder struct {
	real http.RoundTripper
	path string
	key  matchKey
	url  func(string) string // what the cassette says for a request's URL

	mu    sync.Mutex
	byKey map[string]HTTPInteraction
}

// GraphQLRecorder records every request through real into the cassette
// file path, writing placeholderURL for every request's URL (the real one
// may hold a key). Call Stop to write it.
func GraphQLRecorder(path string, real http.RoundTripper, placeholderURL string) (*Recorder, error) {
	return newRecorder(path, real, graphQLKey, func(string) string { return placeholderURL }), nil
}

// HTTPRecorder records requests through real into path, keeping URLs: for
// the 1inch API they hold no secret (the key is a header, never written).
func HTTPRecorder(path string, real http.RoundTripper) (*Recorder, error) {
	return newRecorder(path, real, getKey, func(u string) string { return u }), nil
}

func newRecorder(path string, real http.RoundTripper, key matchKey, url func(string) string) *Recorder {
	return &Recorder{real: real, path: path, key: key, url: url, byKey: map[string]HTTPInteraction{}}
}

// RoundTrip forwards req and records its answer. A transport error is
// passed on and not recorded: there is no answer to replay.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	resp, err := r.real.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	u := req.URL.String()
	k, ok := r.key(req.Method, u, body)
	if !ok {
		return resp, nil // a replay could never match it
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, seen := r.byKey[k]; !seen {
		r.byKey[k] = HTTPInteraction{
			Request:  HTTPRequest{Method: req.Method, URL: r.url(u), Body: body},
			Response: HTTPResponse{Status: resp.StatusCode, Body: respBody},
		}
	}
	return resp, nil
}

// Cassette returns what was recorded so far, ordered by match key.
func (r *Recorder) Cassette() HTTPCassette {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.byKey))
	for k := range r.byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := HTTPCassette{Format: HTTPFormat, Interactions: make([]HTTPInteraction, len(keys))}
	for i, k := range keys {
		c.Interactions[i] = r.byKey[k]
	}
	return c
}

// Stop writes the cassette to the recorder's path (see Save).
func (r *Recorder) Stop() error { return r.Save(r.path) }

// Save writes the cassette to path as indented JSON, atomically: a reader
// (or a failed recording) never sees half a file.
func (r *Recorder) Save(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the file is read by people, not browsers
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.Cassette()); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// writeAtomic writes b to a temporary file beside path and renames it over
// path.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// Exchange is one recorded request body and its answer's body.
type Exchange struct {
	Request, Response []byte
}

// Exchanges reads the cassette file name in fsys: the bodies of its
// interactions, in the cassette's order (for replays that answer from what the
// recordings hold rather than request by request).
func Exchanges(fsys fs.FS, name string) ([]Exchange, error) {
	c, err := readCassette(fsys, name)
	if err != nil {
		return nil, err
	}
	out := make([]Exchange, len(c.Interactions))
	for i, in := range c.Interactions {
		out[i] = Exchange{Request: in.Request.Body, Response: in.Response.Body}
	}
	return out, nil
}
