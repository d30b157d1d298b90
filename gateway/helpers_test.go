package gateway_test

import (
	"net/http"
	"net/http/httptest"

	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

func transport(h http.Handler) http.RoundTripper { return replay.HandlerTransport{Handler: h} }

func httptestDo(h http.Handler, method, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}
