// Package upstream is everything the gateway does to talk to its upstreams
// (Graph Node, the JSON-RPC node, the 1inch API) safely: how many fills may
// read at once, how much memory their answers may hold, how large one answer
// may be, how an upstream's refusal is honoured, how connections are kept.
// Whoever chases a 503 OVERLOADED, a 413-class UPSTREAM_TOO_LARGE or a
// Retry-After passed on from an upstream reads this package alone.
//
// The memory story, from a client's miss to the bytes read:
//
//  1. Admission. A cache miss starts a fill only through Admission.Admit:
//     at most MaxFills fills run at once, and a miss over that bound is
//     answered 503 OVERLOADED at once (no queue: a queue only delays the
//     same answer and holds the client's connection meanwhile). Admit
//     returns a Lease carried by the fill's context.
//  2. The body limit. Every answer is read through a size limit (MaxBody):
//     an announced Content-Length over it fails before a byte is read, an
//     unannounced one fails at the first byte past it. A fill is held to
//     the whole budget over all its reads together (every page, every
//     upstream; 48 MiB read by default): past it, 502 (the upstream's
//     error code), never 503 for a budget it could never fit in.
//  3. The budget. Every byte read is charged Amplification bytes to one
//     Budget shared by all chains and upstreams, on the account of the
//     lease the request's context carries (outside a fill, the body's own,
//     held until it is closed). The charge is held until the fill releases
//     its lease, because what was decoded from the bytes lives as long as
//     the fill. When the budget is spent the oldest holder waits for the
//     others and every other read fails with OVERLOADED, so one fill always
//     completes and none wait on each other (budget.go).
//
// Back-off: the subgraph's and the node's 429/503 with Retry-After become a
// problem.BackoffError carrying the wait, and no request reaches that
// upstream until the wait has run out (backoff.go). The 1inch client reads
// its own 429 (QUOTE_RATE_LIMITED), so quote transports have no back-off.
//
// Transport stacks these in one order, outermost first: body limit and
// budget, back-off, metrics, then the connection pool (or the transport a
// test, the recorder or the demo gives). Limits sit outermost so that even
// an answer the back-off reads to discard is bounded; metrics sit next to
// the wire so that every round trip is counted, refusals included, and a
// call the back-off answers without sending is not.
package upstream

import (
	"context"
	"net/http"

	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Kind names an upstream: its metrics label, and whether its refusals are
// honoured by back-off.
type Kind string

// The upstreams one chain has.
const (
	Subgraph Kind = "subgraph"
	RPC      Kind = "rpc"
	Quote    Kind = "quote" // the 1inch API
)

// Transports replace the network under one chain's upstream clients: fakes
// in tests, recorders in record mode, replays for the demo. A nil field
// means the network (a pooled transport of its own).
type Transports struct {
	Subgraph http.RoundTripper
	RPC      http.RoundTripper
	Quote    http.RoundTripper // the 1inch API
}

// Options are the bounds every upstream transport enforces. All are
// required (validated configuration supplies them); Metrics is optional.
type Options struct {
	// MaxBody bounds one upstream answer, in bytes.
	MaxBody int64
	// Budget bounds the memory all upstream answers hold at once; one is
	// shared by every chain.
	Budget *Budget
	// MaxConnsPerHost sizes the idle connection pool of each upstream
	// reached over the network: the bound on concurrent fills.
	MaxConnsPerHost int
	// Metrics, if set, counts and times every round trip by kind.
	Metrics *metrics.Metrics
}

// Transport returns base (nil: the network, pooled for MaxConnsPerHost)
// wrapped in the order the package comment gives: limit and budget, then
// back-off (not for Quote), then metrics.
func Transport(kind Kind, base http.RoundTripper, o Options) http.RoundTripper {
	rt := base
	if rt == nil {
		rt = pooledTransport(o.MaxConnsPerHost)
	}
	if o.Metrics != nil {
		rt = o.Metrics.Transport(string(kind), rt)
	}
	if kind != Quote {
		rt = &BackoffTransport{RT: rt}
	}
	return limitTransport{rt: rt, max: o.MaxBody, budget: o.Budget}
}

// For returns one chain's three transports over tr, each stacked by
// Transport.
func For(tr Transports, o Options) Transports {
	return Transports{
		Subgraph: Transport(Subgraph, tr.Subgraph, o),
		RPC:      Transport(RPC, tr.RPC, o),
		Quote:    Transport(Quote, tr.Quote, o),
	}
}

// pooledTransport is http.DefaultTransport with an idle pool that keeps as
// many connections to one upstream host as fills may run at once: the
// default keeps 2, so under miss load every fill past two would dial its
// own connection and close it (see BENCHMARKS.md).
func pooledTransport(perHost int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = perHost
	t.MaxIdleConns = max(t.MaxIdleConns, 4*perHost)
	return t
}

// Admission bounds the fills running at once (step 1 of the package
// comment).
type Admission struct {
	slots chan struct{}
}

// NewAdmission admits at most max fills at once; max must be positive.
func NewAdmission(max int) *Admission {
	return &Admission{slots: make(chan struct{}, max)}
}

// Admit starts a fill: it returns ctx carrying the fill's lease, on which
// every upstream answer read under ctx is charged, or 503 OVERLOADED when
// max fills are running. Release the lease when the fill is done with its
// answers: that gives back their budget and the fill's slot.
func (a *Admission) Admit(ctx context.Context) (context.Context, *Lease, error) {
	select {
	case a.slots <- struct{}{}:
	default:
		return ctx, nil, problem.New(problem.Overloaded, "the gateway is at its limit of %d concurrent upstream reads; retry shortly", cap(a.slots))
	}
	return a.leased(ctx)
}

// Wait is Admit for work no client is waiting on (a stream's answer at a
// new block): it waits for a slot until ctx ends rather than refusing,
// since a refusal would only skip that block's answer. Its caller bounds
// how many such fills run at once, so requests' fills keep slots of their own.
func (a *Admission) Wait(ctx context.Context) (context.Context, *Lease, error) {
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx, nil, ctx.Err()
	}
	return a.leased(ctx)
}

// leased is ctx carrying a new lease of the slot just taken.
func (a *Admission) leased(ctx context.Context) (context.Context, *Lease, error) {
	l := &Lease{slot: a.slots}
	return context.WithValue(ctx, leaseKey{}, l), l, nil
}
