package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// PathSubgraphs is where each chain the gateway indexes itself serves its
// store's Graph Node query API: POST /subgraphs/<chainId> with a GraphQL
// body (or GET with `query`, `variables`, `operationName`), answered as
// Graph Node answers /subgraphs/name/<name>. GraphQL clients, and other
// replicas (their CLAMM_CHAIN_<id>_SUBGRAPH_URL), read the index there.
const PathSubgraphs = "/subgraphs/"

// maxQueryBody bounds a GraphQL request's body: the gateway's own
// documents are a few KiB.
const maxQueryBody = 1 << 20

// QueryAPI is one indexed chain's Graph Node query endpoint
// (graphnode.Server): the answer to a request body, run on ctx, or ctx's
// error when it ended first (the work then stopped).
type QueryAPI interface {
	AnswerContext(ctx context.Context, body []byte) ([]byte, error)
}

// subgraphRoutes adds each indexed chain's query API to the router: one
// route template for all, so metrics and the access log carry no id a
// client chose. The route owns the HTTP exchange, as every other route
// does: the methods it takes (other methods are the router's 405), the
// body's bound and the request's deadline, each failure in the JSON error
// shape. What the query itself gets wrong is Graph Node's answer: an HTTP
// 200 with `errors`, its cost bounds included (graphnode.Limits).
func (s *Server) subgraphRoutes(r *mux.Router) {
	if len(s.opts.Subgraphs) == 0 {
		return
	}
	template := PathSubgraphs + "{chainId}"
	m := s.opts.Metrics.Route(template)
	for id, api := range s.opts.Subgraphs {
		rt := route{path: template, metrics: m, handler: func(w http.ResponseWriter, r *http.Request) {
			s.serveQuery(w, r, api)
		}}
		r.Handle(PathSubgraphs+strconv.FormatUint(id, 10), s.tagged(rt)).Methods(http.MethodPost, http.MethodGet)
	}
}

// serveQuery answers one query: read within maxQueryBody, then answered
// within the request timeout. A client that hangs up, or the deadline,
// stops the query's work (the store's reads and the executor watch the
// context): it never runs on after its answer can no longer be sent.
func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request, api QueryAPI) {
	w.Header().Set("Cache-Control", "no-store")
	body, err := queryBody(w, r)
	if err != nil {
		s.writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	out, err := api.AnswerContext(ctx, body)
	var refused *problem.Error
	switch {
	case errors.As(err, &refused): // the API's bound on queries at once: 503 with Retry-After
		s.writeError(w, err)
	case err != nil && r.Context().Err() != nil:
		s.clientClosed(w, err)
	case err != nil:
		s.writeError(w, problem.Wrap(problem.Timeout, err, "the query did not complete within the gateway's deadline (%s, CLAMM_REQUEST_TIMEOUT); its work was stopped", s.opts.RequestTimeout))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		_, _ = w.Write(out)
	}
}

// queryBody is the request's GraphQL request as a POST body: a GET's
// parameters, or a POST's body read within maxQueryBody. A body past the
// bound is 413; one that ends before its length (a client gone, or cut
// at the server's read timeout) is a malformed request.
func queryBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.Method == http.MethodGet {
		return getBody(r.URL.Query()), nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxQueryBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, problem.New(problem.BodyTooLarge, "the query's body is over %d bytes (1 MiB)", maxQueryBody)
	case err != nil:
		return nil, problem.Wrap(problem.MalformedRequest, err, "the query's body could not be read whole (it ended before its length)")
	}
	return body, nil
}

// getBody is a GET request's query as the body a POST would carry: Graph
// Node takes `query`, `variables` (JSON) and `operationName` parameters.
// Variables that are not JSON are passed as a string, which the query API
// refuses as it refuses any malformed request (a GraphQL error).
func getBody(q url.Values) []byte {
	req := map[string]any{"query": q.Get("query")}
	if v := q.Get("variables"); v != "" {
		req["variables"] = v
		if json.Valid([]byte(v)) {
			req["variables"] = json.RawMessage(v)
		}
	}
	if v := q.Get("operationName"); v != "" {
		req["operationName"] = v
	}
	out, _ := json.Marshal(req)
	return out
}
