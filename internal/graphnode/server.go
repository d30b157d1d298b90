package graphnode

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// Server answers Graph Node's HTTP query endpoint from a store: a POST of
// {query, variables, operationName}, answered with an HTTP 200 whose body
// holds data or errors, as Graph Node answers. It serves both as an
// http.Handler (a test server) and as an http.RoundTripper (in process,
// the demo's subgraph).
type Server struct {
	Store Querier
}

// Querier answers a GraphQL request: the in-memory Store, or the embedded
// indexer's store on disk.
type Querier interface {
	Query(Request) Response
}

// Answer returns the body Graph Node would send for a request body.
func (s *Server) Answer(body []byte) []byte {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var resp Response
	if err := dec.Decode(&req); err != nil || req.Query == "" {
		resp = Response{Errors: []Error{{Message: "The query is empty"}}}
		if err != nil {
			resp.Errors[0].Message = "invalid GraphQL request: " + err.Error()
		}
	} else {
		resp = s.Store.Query(req)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		out, _ = json.Marshal(Response{Errors: []Error{{Message: err.Error()}}})
	}
	return append(out, '\n')
}

// ServeHTTP implements http.Handler: a POST of the request's JSON, or, as
// Graph Node also takes, a GET with `query`, `variables` (JSON) and
// `operationName` parameters.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := requestBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := s.Answer(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	_, _ = w.Write(out)
}

func requestBody(r *http.Request) ([]byte, error) {
	if r.Method != http.MethodGet {
		return io.ReadAll(r.Body)
	}
	q := r.URL.Query()
	req := map[string]any{"query": q.Get("query")}
	if v := q.Get("variables"); v != "" {
		req["variables"] = json.RawMessage(v)
	}
	if v := q.Get("operationName"); v != "" {
		req["operationName"] = v
	}
	return json.Marshal(req)
}

// RoundTrip implements http.RoundTripper: the answer without a socket.
func (s *Server) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	out := s.Answer(body)
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       r,
	}, nil
}
