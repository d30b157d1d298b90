package upstream

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Every upstream answer is read through the body limit, whether or not it
// announces its length.
func TestLimitTransport(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 100)
	for _, c := range []struct {
		name   string
		max    int64
		length bool // Content-Length announced
		tooBig bool
	}{
		{"at the limit", 100, true, false},
		{"at the limit, chunked", 100, false, false},
		{"over, announced", 99, true, true},
		{"over, chunked", 99, false, true},
	} {
		rt := limitTransport{max: c.max, rt: roundTrip(func(r *http.Request) (*http.Response, error) {
			n := int64(-1)
			if c.length {
				n = int64(len(body))
			}
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body)), ContentLength: n}, nil
		})}
		resp, err := rt.RoundTrip(httptest.NewRequest(http.MethodGet, "http://up.invalid/", nil))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
		}
		if got := errors.Is(err, ErrBodyTooLarge); got != c.tooBig {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
