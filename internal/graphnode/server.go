package graphnode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Server answers Graph Node's HTTP query endpoint from a store: a POST of
// {query, variables, operationName}, answered with an HTTP 200 whose body
// holds data or errors, as Graph Node answers. It serves as an
// http.RoundTripper (in process: the demo's subgraph, the gateway's own
// reads of its index) and, through AnswerContext, behind the gateway's
// /subgraphs/<chainId> route, which owns the HTTP exchange (methods, body
// bounds, deadline) and its error shape.
type Server struct {
	Store Querier
	// MaxQueries bounds the queries it answers at once (0: no bound, as
	// for the gateway's own reads in process, which its fills already
	// bound). One more is refused at once, never queued (a queue only
	// holds the client's connection for the same refusal later): 503
	// OVERLOADED with Retry-After, so a burst of clients, or one client's
	// many connections, cannot hold every core and store connection.
	MaxQueries int

	once    sync.Once
	slots   chan struct{}
	refused atomic.Uint64
}

// Load is the queries being answered and those refused so far (its
// metrics).
func (s *Server) Load() (inFlight int, refused uint64) {
	s.init()
	return len(s.slots), s.refused.Load()
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.MaxQueries > 0 {
			s.slots = make(chan struct{}, s.MaxQueries)
		}
	})
}

// admit takes a slot for one query, or refuses it: release gives it back.
func (s *Server) admit() (release func(), err error) {
	s.init()
	if s.slots == nil {
		return func() {}, nil
	}
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
		s.refused.Add(1)
		return nil, &problem.Error{Code: problem.Overloaded, RetryAfter: time.Second,
			Message: fmt.Sprintf("the index's query API is answering its limit of %d queries at once (CLAMM_INDEX_MAX_QUERIES); retry shortly", s.MaxQueries)}
	}
}

// Querier answers a GraphQL request on ctx, whose end stops the query's
// work: the in-memory Store, or the embedded indexer's store on disk.
type Querier interface {
	QueryContext(ctx context.Context, req Request) Response
}

// Answer returns the body Graph Node would send for a request body, with
// no deadline of its own.
func (s *Server) Answer(body []byte) []byte {
	out, _ := s.AnswerContext(context.Background(), body)
	return out
}

// AnswerContext returns the body Graph Node would send for a request body,
// the query run on ctx. When ctx ends first the work stops (the store's
// reads and the executor watch it) and the error is ctx's: the partial
// failure the executor reports is not an answer, and the caller, which
// set the deadline or saw its client leave, says what happened. Past
// MaxQueries the error is a *problem.Error (503 OVERLOADED, Retry-After
// one second) and nothing is read.
func (s *Server) AnswerContext(ctx context.Context, body []byte) ([]byte, error) {
	release, err := s.admit()
	if err != nil {
		return nil, err
	}
	defer release()
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
		resp = s.Store.QueryContext(ctx, req)
		hideStoreErrors(resp.Errors)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := json.Marshal(resp)
	if err != nil {
		out, _ = json.Marshal(Response{Errors: []Error{{Message: err.Error()}}})
	}
	return append(out, '\n'), nil
}

// storeErrorText is what a client reads of a store that failed a read.
// SQLite's own words name the store's tables and indexes (and the
// compiled query's plan); they are kept for the operator in the index's
// status (/readyz), never sent to whoever asked.
const storeErrorText = "Store error: the index could not read its store (/readyz gives the cause)"

// hideStoreErrors replaces the text of each store failure with
// storeErrorText; Graph Node's prefix stays, so clients still tell a
// store failure from a query's own error.
func hideStoreErrors(errs []Error) {
	for i := range errs {
		if strings.HasPrefix(errs[i].Message, "Store error") {
			errs[i].Message = storeErrorText
		}
	}
}

// RoundTrip implements http.RoundTripper: the answer without a socket, the
// query run on the request's context (a caller that gives up stops it).
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
	out, err := s.AnswerContext(r.Context(), body)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       r,
	}, nil
}
