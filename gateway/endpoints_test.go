package gateway_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
)

// undocumented lists what the OpenAPI document does not say of ops: a
// path it lacks, another operationId, other query parameters, or a
// parameter it marks required when the table says it may be left out, or
// the other way round.
func undocumented(t *testing.T, ops []gateway.Operation) []string {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(gateway.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, op := range ops {
		item := doc.Paths.Find(op.Path)
		var docOp *openapi3.Operation
		if item != nil {
			docOp = item.GetOperation(op.Method)
		}
		if docOp == nil {
			out = append(out, op.Path+": no "+op.Method+" operation in the document")
			continue
		}
		if docOp.OperationID != op.ID {
			out = append(out, fmt.Sprintf("%s: operationId %q, the table says %q", op.Path, docOp.OperationID, op.ID))
		}
		var names []string
		for _, p := range docOp.Parameters {
			if p.Value.In == "query" {
				names = append(names, p.Value.Name)
				if optional := slices.Contains(op.Optional, p.Value.Name); p.Value.Required == optional {
					out = append(out, fmt.Sprintf("%s: %s is required in the document: %v, optional in the table: %v", op.Path, p.Value.Name, p.Value.Required, optional))
				}
			}
		}
		if !slices.Equal(sortedCopy(names), sortedCopy(op.Params)) {
			out = append(out, fmt.Sprintf("%s: the document's parameters %v, the table's %v", op.Path, names, op.Params))
		}
	}
	return out
}

func sortedCopy(s []string) []string { c := slices.Clone(s); slices.Sort(c); return c }

// Every endpoint of the table is an operation of the OpenAPI document with
// the same operationId and the same required query parameters.
func TestEveryEndpointIsDocumented(t *testing.T) {
	t.Parallel()
	srv := demoServer(t, nil)
	if len(srv.Operations()) < 6 {
		t.Fatalf("%d operations", len(srv.Operations()))
	}
	for _, problem := range undocumented(t, srv.Operations()) {
		t.Error(problem)
	}
}

// An operation is one table entry and one service method: the tests' own
// example, added with no other edit, is routed, parses its parameters
// strictly, is served from the cache on its second request (the hit path),
// has its own route metrics, and is picked up by the contract check (which
// finds it missing from the document).
func TestOneEntryMakesAnEndpoint(t *testing.T) {
	m := metrics.New()
	srv := demoServer(t, func(o *gateway.Options) { o.Metrics = m; gateway.WithExampleEndpoint(o) })
	first := get(t, srv, gateway.PathExample+"?chainId=42161")
	second := get(t, srv, gateway.PathExample+"?chainId=42161")
	if first.Code != http.StatusOK || first.Header().Get("X-Cache") != "MISS" || second.Header().Get("X-Cache") != "HIT" ||
		first.Body.String() != `["1inch","uni-v3"]` || second.Body.String() != first.Body.String() {
		t.Fatalf("first %d %s %s, second %s %s", first.Code, first.Header().Get("X-Cache"), first.Body, second.Header().Get("X-Cache"), second.Body)
	}
	if rec := get(t, srv, gateway.PathExample+"?chainId=42161&foo=1"); rec.Code != http.StatusBadRequest {
		t.Errorf("an unknown parameter: %d", rec.Code)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, gateway.PathExample+"?chainId=42161", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", rec.Code)
	}
	scrape := httptest.NewRecorder()
	m.Handler().ServeHTTP(scrape, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(scrape.Body.String(), `route="`+gateway.PathExample+`"`) {
		t.Error("no metrics under the example's route")
	}
	var missing bool
	for _, p := range undocumented(t, srv.Operations()) {
		missing = missing || strings.HasPrefix(p, gateway.PathExample+":")
	}
	if !missing {
		t.Error("the contract check did not see the example operation")
	}
	allocs := testing.AllocsPerRun(200, func() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathExample+"?chainId=42161", nil))
	})
	if base := testing.AllocsPerRun(200, func() {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathOptionMarkets+"?chainId=42161", nil))
	}); allocs > base {
		t.Errorf("%.1f allocations per example hit, %.1f per option-markets hit", allocs, base)
	}
}

// Every status an operation can answer is one of its responses in the
// OpenAPI document: its success, 304 to a matching
// If-None-Match (unless its answers are never cached), 413 for a write's
// body over the bound, each
// error kind's status (package problem: any route can be asked with a bad
// parameter, an unknown chain or market, the wrong method, over the rate
// limit or with oversized headers, and any upstream can fail or time out),
// and 422 for every route that takes `block` (a block not indexed yet,
// pruned or unknown to the node), whatever else it refuses.
func TestEveryStatusIsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(gateway.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	every := []int{http.StatusOK, http.StatusNotModified, http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed,
		http.StatusTooManyRequests, http.StatusRequestHeaderFieldsTooLarge, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}
	for _, op := range demoServer(t, nil).Operations() {
		item := doc.Paths.Find(op.Path)
		var docOp *openapi3.Operation
		if item != nil {
			docOp = item.GetOperation(op.Method)
		}
		if docOp == nil {
			t.Errorf("%s %s: not in the document", op.Method, op.Path)
			continue
		}
		want := slices.Clone(every)
		if slices.Contains(op.Params, "block") {
			want = append(want, http.StatusUnprocessableEntity)
		}
		if op.Uncached {
			want = slices.DeleteFunc(want, func(s int) bool { return s == http.StatusNotModified })
		}
		if op.Method == http.MethodPost {
			want = append(want, http.StatusRequestEntityTooLarge)
		}
		for _, status := range want {
			if docOp.Responses.Status(status) == nil {
				t.Errorf("%s: answers %d, which its OpenAPI responses do not list", op.Path, status)
			}
		}
	}
}

// The order book's routes are the table's: without a book they answer
// 404 naming why; a write takes POST only (405 naming it otherwise).
func TestOrderRoutesWithoutABook(t *testing.T) {
	t.Parallel()
	srv := demoServer(t, func(o *gateway.Options) { o.Orders = nil })
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodGet, gateway.PathOrders + "?chainId=42161", http.StatusNotFound, ""},
		{http.MethodPost, gateway.PathOrders, http.StatusNotFound, ""},
		{http.MethodGet, gateway.PathOrdersFillable + "?chainId=42161&swapperId=uni-v3", http.StatusNotFound, ""},
		{http.MethodGet, gateway.PathOrdersCreate, http.StatusMethodNotAllowed, "POST"},
		{http.MethodPut, gateway.PathOrders, http.StatusMethodNotAllowed, "GET, HEAD, POST"},
	} {
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader("{}")))
		if rec.Code != c.status || (c.status == http.StatusNotFound && !strings.Contains(rec.Body.String(), "keeps no order book")) ||
			rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %q %s", c.method, c.path, rec.Code, rec.Header().Get("Allow"), rec.Body)
		}
	}
}
