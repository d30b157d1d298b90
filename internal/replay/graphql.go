package replay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	"gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// graphQLMatcher matches on method and the JSON body compared as values.
// The URL is left out on purpose: one cassette serves one chain's subgraph,
// and record mode replaces URLs (which may hold API keys) with a placeholder.
func graphQLMatcher(r *http.Request, i cassette.Request) bool {
	if r.Method != i.Method {
		return false
	}
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return false
		}
		body = b
		r.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	a, errA := canonical(body)
	b, errB := canonical(json.RawMessage(i.Body))
	return errA == nil && errB == nil && a == b
}

// cassetteFS adapts a read-only fs.FS (embed.FS) to go-vcr's FS.
type cassetteFS struct{ fsys fs.FS }

func (c cassetteFS) ReadFile(name string) ([]byte, error) { return fs.ReadFile(c.fsys, name) }
func (c cassetteFS) WriteFile(string, []byte) error {
	return errors.New("replay: read-only cassette store")
}
func (c cassetteFS) IsFileExists(name string) bool {
	_, err := fs.Stat(c.fsys, name)
	return err == nil
}

// GraphQLReplayer replays the go-vcr cassette name (without ".yaml") from
// fsys, replay-only: a request with no recording fails with ErrNotRecorded.
func GraphQLReplayer(fsys fs.FS, name string) (http.RoundTripper, error) {
	rec, err := recorder.New(name,
		recorder.WithMode(recorder.ModeReplayOnly),
		recorder.WithFS(cassetteFS{fsys}),
		recorder.WithMatcher(graphQLMatcher),
		recorder.WithReplayableInteractions(true),
		recorder.WithSkipRequestLatency(true),
	)
	if err != nil {
		return nil, fmt.Errorf("graphql cassette %s: %w", name, err)
	}
	return notRecorded{rec}, nil
}

type notRecorded struct{ rt http.RoundTripper }

func (n notRecorded) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := n.rt.RoundTrip(req)
	if errors.Is(err, cassette.ErrInteractionNotFound) {
		return nil, fmt.Errorf("replay: %w", problem.ErrNotRecorded)
	}
	return resp, err
}

// getMatcher matches a GET by method and full URL: the 1inch API's answer
// depends on its query string alone (the key travels in a header).
func getMatcher(r *http.Request, i cassette.Request) bool {
	return r.Method == i.Method && r.URL.String() == i.URL
}

// HTTPReplayer replays the go-vcr cassette name (GET requests matched by
// URL) from fsys, replay-only. A missing cassette replays nothing: every
// request fails with ErrNotRecorded.
func HTTPReplayer(fsys fs.FS, name string) (http.RoundTripper, error) {
	if _, err := fs.Stat(fsys, name+".yaml"); err != nil {
		return notRecorded{nothing{}}, nil
	}
	rec, err := recorder.New(name,
		recorder.WithMode(recorder.ModeReplayOnly),
		recorder.WithFS(cassetteFS{fsys}),
		recorder.WithMatcher(getMatcher),
		recorder.WithReplayableInteractions(true),
		recorder.WithSkipRequestLatency(true),
	)
	if err != nil {
		return nil, fmt.Errorf("http cassette %s: %w", name, err)
	}
	return notRecorded{rec}, nil
}

type nothing struct{}

func (nothing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, cassette.ErrInteractionNotFound
}

// GraphQLRecorder records every request through real into the cassette file
// path (without ".yaml"), replacing the URL (which may hold a key) by
// placeholderURL. See record.
func GraphQLRecorder(path string, real http.RoundTripper, placeholderURL string) (*recorder.Recorder, error) {
	return record(path, real, graphQLMatcher, func(i *cassette.Interaction) { i.Request.URL = placeholderURL })
}

// HTTPRecorder records GET requests through real into path, keeping URLs:
// for the 1inch API they hold no secret (the key is a header, dropped).
func HTTPRecorder(path string, real http.RoundTripper) (*recorder.Recorder, error) {
	return record(path, real, getMatcher, func(*cassette.Interaction) {})
}

// record makes a record-only recorder whose cassettes carry no secrets and
// no noise: request headers are dropped (Authorization among them), timings
// and response headers other than the content type are zeroed, so a
// recording of the same answers is byte-identical. Call Stop to save.
func record(path string, real http.RoundTripper, match recorder.MatcherFunc, rewrite func(*cassette.Interaction)) (*recorder.Recorder, error) {
	scrub := func(i *cassette.Interaction) error {
		i.Request.Headers = nil
		i.Request.Host = ""
		i.Request.Form = nil
		i.Response.Duration = 0
		i.Response.Headers = http.Header{"Content-Type": {"application/json"}}
		rewrite(i)
		return nil
	}
	return recorder.New(path,
		recorder.WithMode(recorder.ModeRecordOnly),
		recorder.WithRealTransport(real),
		recorder.WithMatcher(match),
		recorder.WithReplayableInteractions(true),
		recorder.WithHook(scrub, recorder.AfterCaptureHook),
	)
}

// Exchange is one recorded request body and its answer's body.
type Exchange struct {
	Request, Response []byte
}

// Exchanges reads the go-vcr cassette name (without ".yaml") from fsys:
// the bodies of its interactions, in recorded order (for replays that
// answer from what the recordings hold rather than request by request).
func Exchanges(fsys fs.FS, name string) ([]Exchange, error) {
	c, err := cassette.LoadWithFS(name, cassetteFS{fsys})
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", name, err)
	}
	out := make([]Exchange, len(c.Interactions))
	for i, in := range c.Interactions {
		out[i] = Exchange{Request: []byte(in.Request.Body), Response: []byte(in.Response.Body)}
	}
	return out, nil
}
