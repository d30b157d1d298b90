// Package replay records and replays upstream traffic, for tests and for the
// embedded demo. Both cassette formats are this package's own JSON, because
// the served binary links the replay (the demo) and the recorders (record
// mode), and a general recording library would bring test packages with it.
// GraphQL and the 1inch API use the HTTP cassette (cassette.go): a Graph Node
// request body is stable, so method and body identify it; a 1inch GET is
// identified by its URL. JSON-RPC has its own cassette: go-ethereum numbers
// requests with a counter, so a request is keyed by (method, params) and the
// replay echoes whatever id the caller sent.
//
// A request with no recorded answer fails with an error wrapping
// problem.ErrNotRecorded, which the gateway turns into a clear 503.
package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// RPCFormat names the JSON-RPC cassette format.
const RPCFormat = "clamm-gateway/rpc-cassette/v1"

// RPCCassette is a recorded set of JSON-RPC answers.
type RPCCassette struct {
	Format       string           `json:"format"`
	Interactions []RPCInteraction `json:"interactions"`
}

// RPCInteraction is one answered call.
type RPCInteraction struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// canonical re-encodes JSON with sorted object keys, so two encodings of the
// same params compare equal.
func canonical(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "[]", nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func key(method string, params json.RawMessage) (string, error) {
	c, err := canonical(params)
	return method + " " + c, err
}

// Key is the key a cassette answers a request by: its method and its
// parameters in canonical JSON. A replay that holds the cassette's answers
// its own way (the demo's node, as bytes) keys them alike.
func Key(method string, params json.RawMessage) (string, error) { return key(method, params) }

// parseRPC accepts a single request or a batch.
func parseRPC(body []byte) ([]rpcMessage, bool, error) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []rpcMessage
		err := json.Unmarshal(body, &batch)
		return batch, true, err
	}
	var one rpcMessage
	err := json.Unmarshal(body, &one)
	return []rpcMessage{one}, false, err
}

// RPCReplayer answers JSON-RPC over HTTP from a cassette. Use it as the
// Transport of the http.Client the rpc client dials with.
type RPCReplayer struct {
	answers map[string]RPCInteraction
}

// LoadRPCCassette reads a cassette from raw JSON.
func LoadRPCCassette(raw []byte) (*RPCReplayer, error) {
	var c RPCCassette
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Format != RPCFormat {
		return nil, fmt.Errorf("rpc cassette format %q, want %q", c.Format, RPCFormat)
	}
	r := &RPCReplayer{answers: map[string]RPCInteraction{}}
	for _, in := range c.Interactions {
		k, err := key(in.Method, in.Params)
		if err != nil {
			return nil, err
		}
		r.answers[k] = in
	}
	return r, nil
}

// RoundTrip implements http.RoundTripper.
func (r *RPCReplayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	msgs, batch, err := parseRPC(body)
	if err != nil {
		return nil, fmt.Errorf("replay: bad JSON-RPC request: %w", err)
	}
	out := make([]rpcMessage, len(msgs))
	for i, m := range msgs {
		k, err := key(m.Method, m.Params)
		if err != nil {
			return nil, err
		}
		in, ok := r.answers[k]
		if !ok {
			return nil, fmt.Errorf("replay: %s: %w", m.Method, problem.ErrNotRecorded)
		}
		out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: in.Result, Error: in.Error}
	}
	if batch {
		return JSONAnswer(req, out)
	}
	return JSONAnswer(req, out[0])
}

// JSONAnswer is an HTTP 200 answering req with v as JSON: how every
// replay (and the demo's engines) answers.
func JSONAnswer(req *http.Request, v any) (*http.Response, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// RPCRecorder forwards JSON-RPC to a real transport and keeps every answered
// element, keyed like the replayer, for Save.
type RPCRecorder struct {
	Real http.RoundTripper

	mu      sync.Mutex
	answers map[string]RPCInteraction
}

// RoundTrip forwards req and records the answers.
func (r *RPCRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := r.Real.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if resp.StatusCode != http.StatusOK {
		return resp, nil // not an answer worth replaying
	}
	reqs, _, err := parseRPC(body)
	if err != nil {
		return resp, nil
	}
	answers, _, err := parseRPC(respBody)
	if err != nil {
		return resp, nil
	}
	byID := map[string]rpcMessage{}
	for _, a := range answers {
		byID[string(a.ID)] = a
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answers == nil {
		r.answers = map[string]RPCInteraction{}
	}
	for _, q := range reqs {
		a, ok := byID[string(q.ID)]
		if !ok {
			continue
		}
		k, err := key(q.Method, q.Params)
		if err != nil {
			continue
		}
		c, _ := canonical(q.Params)
		r.answers[k] = RPCInteraction{Method: q.Method, Params: json.RawMessage(c), Result: a.Result, Error: a.Error}
	}
	return resp, nil
}

// Cassette returns what was recorded, sorted for stable files.
func (r *RPCRecorder) Cassette() RPCCassette {
	r.mu.Lock()
	defer r.mu.Unlock()
	keys := make([]string, 0, len(r.answers))
	for k := range r.answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := RPCCassette{Format: RPCFormat, Interactions: make([]RPCInteraction, 0, len(keys))}
	for _, k := range keys {
		c.Interactions = append(c.Interactions, r.answers[k])
	}
	return c
}

// Save writes the cassette as indented JSON, atomically (see Recorder.Save).
func (r *RPCRecorder) Save(path string) error {
	b, err := json.MarshalIndent(r.Cassette(), "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}
