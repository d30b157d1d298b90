package systemtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
)

func do(h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestETagAndCacheControl(t *testing.T) {
	t.Parallel()
	srv, f := newFakeServer(t)
	first := get(t, srv, strikes)
	etag := first.Header().Get("ETag")
	if !strings.HasPrefix(etag, `"`) || len(etag) != 34 {
		t.Fatalf("ETag %q", etag)
	}
	if cc := first.Header().Get("Cache-Control"); cc != "public, max-age=15" {
		t.Fatalf("Cache-Control %q for a 15s TTL", cc)
	}
	before := f.Subgraph.Requests()
	for _, inm := range []string{etag, `"other", ` + etag, "W/" + etag, "*"} {
		rec := do(srv, http.MethodGet, strikes, map[string]string{"If-None-Match": inm})
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, %d body bytes", inm, rec.Code, rec.Body.Len())
		}
	}
	if rec := do(srv, http.MethodGet, strikes, map[string]string{"If-None-Match": `"stale"`}); rec.Code != http.StatusOK || rec.Body.String() != first.Body.String() {
		t.Errorf("another tag: %d", rec.Code)
	}
	if f.Subgraph.Requests() != before {
		t.Error("revalidation reached the subgraph")
	}
	// Errors are never stored by clients either.
	if rec := get(t, srv, gateway.PathStrikesChain+"?chainId=42161"); rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("error Cache-Control %q", rec.Header().Get("Cache-Control"))
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	srv, _ := newFakeServerWith(t, func(o *gateway.Options) { o.CORSOrigins = []string{"https://app.example"} })
	rec := do(srv, http.MethodGet, strikes, map[string]string{"Origin": "https://app.example"})
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(rec.Header().Get("Access-Control-Expose-Headers"), "X-Cache") {
		t.Fatalf("allowed origin: %d %v", rec.Code, rec.Header())
	}
	if rec := do(srv, http.MethodGet, strikes, map[string]string{"Origin": "https://evil.example"}); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("other origin allowed")
	}
	if rec := do(srv, http.MethodGet, strikes, map[string]string{"Origin": "HTTPS://App.Example"}); rec.Header().Get("Access-Control-Allow-Origin") != "HTTPS://App.Example" {
		t.Errorf("the origin in other ASCII case: %q", rec.Header().Get("Access-Control-Allow-Origin"))
	}
	// Unicode folding takes the long s for s: not an origin a browser
	// sends, and its bytes would be echoed back.
	if rec := do(srv, http.MethodGet, strikes, map[string]string{"Origin": "http\u017F://app.example"}); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a non-ASCII look-alike allowed: %q", rec.Header().Get("Access-Control-Allow-Origin"))
	}
	pre := do(srv, http.MethodOptions, strikes, map[string]string{"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
	if pre.Code != http.StatusNoContent || pre.Header().Get("Access-Control-Allow-Methods") != "GET, HEAD, POST" {
		t.Fatalf("preflight: %d %v", pre.Code, pre.Header())
	}
	plain, _ := newFakeServer(t)
	if rec := do(plain, http.MethodGet, strikes, map[string]string{"Origin": "https://app.example"}); rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS headers without configured origins")
	}
}
