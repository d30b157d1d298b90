package upstream

import (
	"fmt"
	"io"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// ErrBodyTooLarge is returned while reading an upstream answer larger than
// the limit every upstream transport enforces.
var ErrBodyTooLarge = problem.ErrTooLarge

// limitTransport reads every response body through a size limit: a broken
// or hostile upstream cannot make the gateway buffer an unbounded answer.
// It is a production guard, wrapped around every upstream transport.
type limitTransport struct {
	rt  http.RoundTripper // nil: http.DefaultTransport
	max int64
	// budget, if set, is charged for every byte read (Budget): the
	// total that answers hold at once is bounded, not only each one.
	budget *Budget
}

// CloseIdleConnections closes the idle connections of the transport it
// wraps, so that http.Client.CloseIdleConnections reaches the pool.
func (l limitTransport) CloseIdleConnections() { closeIdle(l.rt) }

// closeIdle closes rt's idle connections when it keeps any (nil:
// http.DefaultTransport, shared by the process, is left alone).
func closeIdle(rt http.RoundTripper) {
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
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
	body := &limitedBody{rc: resp.Body, left: l.max, budget: l.budget}
	if l.budget != nil {
		body.lease = leaseFrom(r.Context())
		if body.lease == nil { // outside a fill: held until the body is closed
			body.lease, body.own = NewLease(), true
		} else {
			// A fill holds at most the whole budget from all its
			// upstreams together, over every page and read: reads past
			// it could never be served, whatever other fills hold (502,
			// not 503). Not one answer's limit: a maximal answer (the
			// body limit) and the fill's other reads must still fit.
			body.limit = l.budget.max
		}
		if resp.ContentLength > 0 { // announced: charged before a byte is read
			if err := body.lease.ChargeWithin(l.budget, Amplification*resp.ContentLength, body.limit); err != nil {
				body.Close()
				return nil, err
			}
			body.charged = resp.ContentLength
		}
	}
	resp.Body = body
	return resp, nil
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	// budget and lease account for the bytes read; charged counts bytes
	// already paid for (an announced Content-Length); own: the lease is
	// the body's, released on Close; limit bounds what a fill's lease may
	// hold (0: none, a body's own lease).
	budget  *Budget
	lease   *Lease
	charged int64
	own     bool
	limit   int64
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
	if b.budget != nil && n > 0 {
		if b.charged >= int64(n) {
			b.charged -= int64(n)
		} else {
			more := int64(n) - b.charged
			b.charged = 0
			if cerr := b.lease.ChargeWithin(b.budget, Amplification*more, b.limit); cerr != nil {
				return 0, cerr
			}
		}
	}
	return n, err
}

func (b *limitedBody) Close() error {
	if b.own {
		b.lease.Release()
	}
	return b.rc.Close()
}

// DefaultMaxBody bounds an upstream answer when nothing else is
// configured: a page of 1000 strikes is about 1 MiB.
const DefaultMaxBody = 32 << 20
