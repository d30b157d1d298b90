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

// A fill reads at most what the whole budget holds from its upstreams in
// all: answers each under the body limit, together past the budget, fail
// the fill with ErrTooLarge (502: it could never be served) before
// anything more is taken; before, a statistics fill's pages spent the
// budget and the answer was 503 OVERLOADED. Reads outside a
// fill are bounded one by one.
func TestFillIsBoundedOverAllItsReads(t *testing.T) {
	t.Parallel()
	body := strings.Repeat("x", 40)
	budget := NewBudget(Amplification * 100) // 100 bytes read in all per fill
	for _, length := range []bool{true, false} {
		rt := limitTransport{max: 100, budget: budget, rt: roundTrip(func(r *http.Request) (*http.Response, error) {
			n := int64(-1)
			if length {
				n = int64(len(body))
			}
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body)), ContentLength: n}, nil
		})}
		read := func(r *http.Request) error {
			resp, err := rt.RoundTrip(r)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			return err
		}
		ctx, lease, err := NewAdmission(1).Admit(httptest.NewRequest(http.MethodGet, "http://up.invalid/", nil).Context())
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 { // 40, 80, then 120 bytes in all
			err := read(httptest.NewRequest(http.MethodGet, "http://up.invalid/", nil).WithContext(ctx))
			if tooBig := errors.Is(err, ErrBodyTooLarge); tooBig != (i == 2) || (i < 2 && err != nil) {
				t.Errorf("announced %v, read %d of the fill: %v", length, i+1, err)
			}
		}
		lease.Release()
		for i := range 3 {
			if err := read(httptest.NewRequest(http.MethodGet, "http://up.invalid/", nil)); err != nil {
				t.Errorf("announced %v, read %d outside a fill: %v", length, i+1, err)
			}
		}
		if budget.InUse() != 0 {
			t.Errorf("announced %v: %d bytes of the budget still held", length, budget.InUse())
		}
	}
}

// idlePool is a transport that counts the closings of its idle pool.
type idlePool struct {
	roundTrip
	closed int
}

func (p *idlePool) CloseIdleConnections() { p.closed++ }

// An upstream client's CloseIdleConnections reaches the pool under the
// wrappers (the indexer's Client.Close relies on it to let a node go).
func TestCloseIdleConnectionsReachesThePool(t *testing.T) {
	t.Parallel()
	for _, kind := range []Kind{RPC, Subgraph, Quote} {
		pool := &idlePool{}
		c := &http.Client{Transport: Transport(kind, pool, Options{MaxBody: 10})}
		c.CloseIdleConnections()
		if pool.closed != 1 {
			t.Errorf("%s: the pool's idle connections closed %d times, want 1", kind, pool.closed)
		}
	}
}
