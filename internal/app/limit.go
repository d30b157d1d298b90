package app

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrBodyTooLarge is returned while reading an upstream answer larger than
// the limit every upstream transport enforces.
var ErrBodyTooLarge = errors.New("upstream answer too large")

// limitTransport reads every response body through a size limit: a broken
// or hostile upstream cannot make the gateway buffer an unbounded answer.
// It is a production guard, wrapped around every upstream transport.
type limitTransport struct {
	rt  http.RoundTripper // nil: http.DefaultTransport
	max int64
}

// RoundTrip implements http.RoundTripper.
func (l limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt := l.rt
	if rt == nil {
		rt = http.DefaultTransport
	}
	resp, err := rt.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > l.max {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: Content-Length %d > %d", ErrBodyTooLarge, resp.ContentLength, l.max)
	}
	resp.Body = &limitedBody{rc: resp.Body, left: l.max}
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly the limit from a longer one.
		var one [1]byte
		if n, _ := b.rc.Read(one[:]); n > 0 {
			return 0, ErrBodyTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
