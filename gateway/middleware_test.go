package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

func TestPanicBecomesJSON500(t *testing.T) {
	t.Parallel()
	s, err := New(DefaultOptions(service.New(map[uint64]*vocab.Upstreams{1: {}})))
	if err != nil {
		t.Fatal(err)
	}
	h := s.middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	var body errorBody
	if rec.Code != http.StatusInternalServerError || json.Unmarshal(rec.Body.Bytes(), &body) != nil || body.Error.Code != "INTERNAL" {
		t.Fatalf("status %d body %s", rec.Code, rec.Body)
	}
	if body.Error.Message != "internal error" {
		t.Fatalf("panic text leaked: %q", body.Error.Message)
	}
}
