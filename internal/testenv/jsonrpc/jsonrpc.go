// Package jsonrpc is the HTTP framing of the tests' JSON-RPC nodes: a call
// or a batch of calls in, each answered by a function, the answers out in
// the same shape. The simulated EVM's forwarding handler
// (internal/evmtest/pipeline) and the embedded indexer's synthetic chain
// (internal/indexer/indexertest) answer through it.
package jsonrpc

import (
	"encoding/json"
	"io"
	"net/http"
)

// Request is one call.
type Request struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

// Error is a call's error object.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// Response is one call's answer: a result (null when nil) or an error.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Answer builds the response to q from a result or an error.
func Answer(q Request, result any, e *Error) Response {
	r := Response{JSONRPC: "2.0", ID: q.ID, Result: result, Error: e}
	if e == nil && result == nil {
		r.Result = json.RawMessage("null")
	}
	return r
}

// Handler serves calls and batches over HTTP, each call answered by one.
func Handler(one func(r *http.Request, q Request) Response) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if len(body) > 0 && body[0] == '[' {
			var qs []Request
			if err := json.Unmarshal(body, &qs); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			out := make([]Response, len(qs))
			for i, q := range qs {
				out[i] = one(r, q)
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var q Request
		if err := json.Unmarshal(body, &q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(one(r, q))
	})
}
