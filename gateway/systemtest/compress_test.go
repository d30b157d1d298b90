package systemtest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier"
	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
)

func getWith(t *testing.T, h http.Handler, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// An answer over the threshold is sent gzipped to a client that accepts
// gzip, as the same content with its own length and ETag, Vary:
// Accept-Encoding on both; the gzip bytes are made once, at the fill
// (one fill serves both encodings); If-None-Match is compared with the
// chosen encoding's ETag. A small answer, or a client that refuses gzip
// (q=0) or names none, gets identity bytes.
func TestCompressedAnswers(t *testing.T) {
	srv, _ := newFakeServer(t)
	plain := get(t, srv, strikes)
	gz := getWith(t, srv, strikes, map[string]string{"Accept-Encoding": "br;q=1.0, gzip;q=0.8"})
	if gz.Code != 200 || gz.Header().Get("Content-Encoding") != "gzip" || gz.Header().Get("Vary") != "Accept-Encoding" || plain.Header().Get("Vary") != "Accept-Encoding" {
		t.Fatalf("gzip: %d %v", gz.Code, gz.Header())
	}
	if gz.Header().Get("X-Cache") != "HIT" || srv.CacheFills() != 1 {
		t.Fatalf("the gzip answer is not the fill's: %s, %d fills", gz.Header().Get("X-Cache"), srv.CacheFills())
	}
	if !bytes.Equal(gunzip(t, gz.Body.Bytes()), plain.Body.Bytes()) || gz.Body.Len() >= plain.Body.Len() {
		t.Fatalf("gzip body of %d bytes does not decode to the %d-byte answer", gz.Body.Len(), plain.Body.Len())
	}
	if gz.Header().Get("Content-Length") != strconv.Itoa(gz.Body.Len()) {
		t.Errorf("Content-Length %s for %d bytes", gz.Header().Get("Content-Length"), gz.Body.Len())
	}
	tag, plainTag := gz.Header().Get("Etag"), plain.Header().Get("Etag")
	if tag == "" || tag == plainTag {
		t.Fatalf("ETags %s and %s: one per encoding", tag, plainTag)
	}
	if rec := getWith(t, srv, strikes, map[string]string{"Accept-Encoding": "gzip", "If-None-Match": tag}); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match with the gzip ETag: %d", rec.Code)
	}
	if rec := getWith(t, srv, strikes, map[string]string{"If-None-Match": tag}); rec.Code != http.StatusOK {
		t.Errorf("the gzip ETag for an identity request: %d", rec.Code)
	}
	for _, ae := range []string{"gzip;q=0", "identity", "GZIP; Q=0.000, deflate"} {
		if rec := getWith(t, srv, strikes, map[string]string{"Accept-Encoding": ae}); rec.Header().Get("Content-Encoding") != "" || rec.Body.String() != plain.Body.String() {
			t.Errorf("Accept-Encoding %q: %v", ae, rec.Header())
		}
	}
	for _, ae := range []string{"*", "x-gzip", "deflate, GZip"} {
		if rec := getWith(t, srv, strikes, map[string]string{"Accept-Encoding": ae}); rec.Header().Get("Content-Encoding") != "gzip" {
			t.Errorf("Accept-Encoding %q: %v", ae, rec.Header())
		}
	}
	small := gateway.PathExerciseHistory + "?" + query(historyParams, "first", "1", false)
	if rec := getWith(t, srv, small, map[string]string{"Accept-Encoding": "gzip"}); rec.Code != 200 || rec.Body.Len() >= 1400 || rec.Header().Get("Content-Encoding") != "" || rec.Header().Get("Vary") != "" {
		t.Errorf("a %d-byte answer: %v", rec.Body.Len(), rec.Header())
	}
	// A hit of the gzip answer allocates what an identity hit does.
	req := httptest.NewRequest(http.MethodGet, strikes, nil)
	req.Header.Set("Accept-Encoding", "gzip, deflate, br")
	w := &discard{h: http.Header{}}
	if allocs := testing.AllocsPerRun(200, func() { clear(w.h); srv.ServeHTTP(w, req) }); allocs > 1 || w.h.Get("Content-Encoding") != "gzip" {
		t.Errorf("%.1f allocations per gzip hit, want 1 (%v)", allocs, w.h)
	}
}

// The gzip bytes travel in the shared record: a replica that adopts the
// answer serves the same compressed bytes and ETag without compressing.
func TestCompressedAnswersAreShared(t *testing.T) {
	rds := redistest.Start(t)
	f := newFakesOnly(t)
	a := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
	b := newReplica(t, f, f.Subgraph, rds.URL(), redistier.Options{}, nil)
	ga := getWith(t, a.srv, strikes, map[string]string{"Accept-Encoding": "gzip"})
	gb := getWith(t, b.srv, strikes, map[string]string{"Accept-Encoding": "gzip"})
	if gb.Header().Get("X-Cache") != "HIT" || gb.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(ga.Body.Bytes(), gb.Body.Bytes()) || ga.Header().Get("Etag") != gb.Header().Get("Etag") {
		t.Fatalf("replica b: %v (%d bytes, a %d)", gb.Header(), gb.Body.Len(), ga.Body.Len())
	}
}
