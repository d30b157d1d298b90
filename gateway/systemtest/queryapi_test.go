package systemtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

const queryAPIPath = gateway.PathSubgraphs + "42161"

// queryAPIServer is the gateway over the demo scenario's fakes with chain
// 42161's query API served from the fake subgraph's store, as an indexing
// gateway serves its index.
func queryAPIServer(t *testing.T, api gateway.QueryAPI, timeout time.Duration) http.Handler {
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) {
		o.Subgraphs = map[uint64]gateway.QueryAPI{42161: api}
		if timeout > 0 {
			o.RequestTimeout = timeout
		}
	})
	return srv
}

// shortBody is a body that ends before its length: some bytes, then the
// connection's end.
type shortBody struct{ sent bool }

func (b *shortBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, io.ErrUnexpectedEOF
	}
	b.sent = true
	return copy(p, `{"query":`), nil
}

// The query API's HTTP surface answers as every route does (attack 5,
// S14): a method it does not take is 405 with an Allow header and a
// message naming the ones it takes (GET and POST; it said GET and HEAD,
// which it refuses), as the API's routes name theirs; a body past 1 MiB is
// 413 and one that ends before its length 400, both in the JSON error
// shape (they were text/plain). Queries still answer as Graph Node does.
func TestQueryAPIHTTPSurface(t *testing.T) {
	t.Parallel()
	_, f := newFakeServer(t)
	srv := queryAPIServer(t, &graphnode.Server{Store: f.Subgraph.Store}, 0)
	for _, c := range []struct {
		method, path, allow string
	}{
		{http.MethodHead, queryAPIPath, "GET, POST"},
		{http.MethodPut, queryAPIPath, "GET, POST"},
		{http.MethodDelete, queryAPIPath, "GET, POST"},
		{http.MethodPut, gateway.PathStrikesChain, "GET, HEAD"},
		{http.MethodPost, gateway.PathHealthz, "GET, HEAD"},
	} {
		rec := httptestDo(srv, c.method, c.path)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d Allow %q, want 405 Allow %q", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.allow)
			continue
		}
		if c.method == http.MethodHead {
			continue
		}
		e := decodeError(t, rec)
		want := c.method + " is not supported here: this route takes " + strings.ReplaceAll(c.allow, ", ", " and ")
		if e.Code != "METHOD_NOT_ALLOWED" || e.Message != want {
			t.Errorf("%s %s: %+v, want METHOD_NOT_ALLOWED %q", c.method, c.path, e, want)
		}
	}

	big := `{"query":"{ _meta { block { number } } }","variables":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, queryAPIPath, strings.NewReader(big)))
	if e := decodeError(t, rec); rec.Code != http.StatusRequestEntityTooLarge || e.Code != "BODY_TOO_LARGE" {
		t.Errorf("a 2 MiB body: %d %+v, want 413 BODY_TOO_LARGE", rec.Code, e)
	}
	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, queryAPIPath, &shortBody{})
	req.ContentLength = 1000
	srv.ServeHTTP(rec, req)
	if e := decodeError(t, rec); rec.Code != http.StatusBadRequest || e.Code != "MALFORMED_REQUEST" {
		t.Errorf("a body cut short: %d %+v, want 400 MALFORMED_REQUEST", rec.Code, e)
	}

	const q = `{"query":"{ _meta { block { number } } }"}`
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, queryAPIPath, strings.NewReader(q)))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"data":{"_meta":{"block":{"number":`) {
		t.Errorf("a query: %d %s", rec.Code, rec.Body)
	}
	rec = httptestDo(srv, http.MethodGet, queryAPIPath+"?query=%7B+_meta+%7B+block+%7B+number+%7D+%7D+%7D")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"data":{"_meta":{"block":{"number":`) {
		t.Errorf("a GET query: %d %s", rec.Code, rec.Body)
	}
}

// blocking is a query API whose query runs until its context ends, and
// reports that end: the store's work as the executor and the store's reads
// see it.
type blocking struct {
	started chan struct{}
	ended   chan error
}

func (b *blocking) AnswerContext(ctx context.Context, body []byte) ([]byte, error) {
	close(b.started)
	<-ctx.Done()
	b.ended <- ctx.Err()
	return nil, ctx.Err()
}

// A query's work ends with its request: the client's hang-up cancels it
// (nothing is sent; the access log's 499), and the request deadline
// (CLAMM_REQUEST_TIMEOUT) ends it with 504 TIMEOUT in the JSON error shape
// (attack 5, S3: the store read on context.Background(), and a query ran
// on ~25 s after its client had gone). What is asserted is that the work
// sees its context end, not how long anything took.
func TestQueryAPIWorkEndsWithItsRequest(t *testing.T) {
	t.Parallel()
	t.Run("client hangs up", func(t *testing.T) {
		api := &blocking{started: make(chan struct{}), ended: make(chan error, 1)}
		srv := queryAPIServer(t, api, time.Hour)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-api.started; cancel() }()
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, queryAPIPath, strings.NewReader(`{"query":"{ pools { id } }"}`)).WithContext(ctx))
		if err := <-api.ended; !errors.Is(err, context.Canceled) {
			t.Errorf("the query's context ended with %v, want Canceled", err)
		}
		if rec.Body.Len() != 0 {
			t.Errorf("answered %d %s to a client that had gone", rec.Code, rec.Body)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		api := &blocking{started: make(chan struct{}), ended: make(chan error, 1)}
		srv := queryAPIServer(t, api, 20*time.Millisecond)
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, queryAPIPath, bytes.NewReader([]byte(`{"query":"{ pools { id } }"}`))))
		if err := <-api.ended; !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the query's context ended with %v, want DeadlineExceeded", err)
		}
		if e := decodeError(t, rec); rec.Code != http.StatusGatewayTimeout || e.Code != "TIMEOUT" || !strings.Contains(e.Message, "CLAMM_REQUEST_TIMEOUT") {
			t.Errorf("%d %+v, want 504 TIMEOUT naming CLAMM_REQUEST_TIMEOUT", rec.Code, e)
		}
	})
}

// held is a store whose queries wait for release, each saying it started.
type held struct {
	started chan struct{}
	release chan struct{}
}

func (h *held) QueryContext(ctx context.Context, req graphnode.Request) graphnode.Response {
	h.started <- struct{}{}
	<-h.release
	return graphnode.Response{Data: &graphnode.Object{}}
}

// The query API answers at most MaxQueries (CLAMM_INDEX_MAX_QUERIES)
// queries at once: one more is refused at once, 503 OVERLOADED with
// Retry-After: 1 naming the setting, counted for the metric, and nothing
// is read for it; once a query ends the next one is answered. (It had no
// bound: a burst of clients held every core and store connection.)
func TestQueryAPIRefusesPastItsBound(t *testing.T) {
	t.Parallel()
	store := &held{started: make(chan struct{}), release: make(chan struct{})}
	api := &graphnode.Server{Store: store, MaxQueries: 2}
	srv := queryAPIServer(t, api, time.Hour)
	query := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, queryAPIPath, strings.NewReader(`{"query":"{ pools { id } }"}`)))
		return rec
	}
	done := make(chan *httptest.ResponseRecorder, 2)
	for range 2 {
		go func() { done <- query() }()
		<-store.started
	}
	rec := query()
	if e := decodeError(t, rec); rec.Code != http.StatusServiceUnavailable || e.Code != "OVERLOADED" ||
		rec.Header().Get("Retry-After") != "1" || !strings.Contains(e.Message, "CLAMM_INDEX_MAX_QUERIES") {
		t.Errorf("a third query at once: %d Retry-After %q %+v, want 503 OVERLOADED, Retry-After 1, naming CLAMM_INDEX_MAX_QUERIES",
			rec.Code, rec.Header().Get("Retry-After"), e)
	}
	if n, refused := api.Load(); n != 2 || refused != 1 {
		t.Errorf("load %d in flight, %d refused; want 2, 1", n, refused)
	}
	close(store.release)
	for range 2 {
		if rec := <-done; rec.Code != http.StatusOK {
			t.Errorf("an admitted query: %d %s", rec.Code, rec.Body)
		}
	}
	go func() { <-store.started }()
	if rec := query(); rec.Code != http.StatusOK {
		t.Errorf("a query after the others ended: %d %s", rec.Code, rec.Body)
	}
	if n, refused := api.Load(); n != 0 || refused != 1 {
		t.Errorf("load %d in flight, %d refused; want 0, 1", n, refused)
	}
}
