// Package problem is the gateway's small error vocabulary. Every layer returns
// a *problem.Error (or wraps one) so the HTTP layer can map a kind to a status
// in exactly one place and clients always get the same JSON shape. Messages
// are written for clients: they never carry raw upstream text or URLs, which
// may hold secrets.
package problem

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
	"time"
)

// ErrNotRecorded is wrapped by the fixture replays when a request has no
// recorded answer: on the embedded demo that means "configure a live upstream".
var ErrNotRecorded = errors.New("no recorded answer for this upstream request")

// ErrOverloaded is wrapped when the gateway's bound on upstream answer
// bytes held at once is spent: the gateway's limit, not the upstream's.
var ErrOverloaded = errors.New("upstream answers in flight are at the gateway's memory bound")

// BackoffError is an upstream refusing (429/503) with a Retry-After, or a
// request not sent because that refusal has not run out yet.
type BackoffError struct {
	Status int           // the refusal's HTTP status
	Wait   time.Duration // until the upstream said to come back, from now
}

func (e *BackoffError) Error() string {
	return fmt.Sprintf("upstream refused (HTTP %d); back off for %s", e.Status, e.Wait)
}

// ErrTooLarge is wrapped when an upstream's answer is larger than the
// gateway reads (announced by Content-Length or found while reading): the
// upstream answered wrongly (502), it is not unreachable.
var ErrTooLarge = errors.New("upstream answer too large")

// Kind classifies an error; the gateway maps each kind to one HTTP status.
type Kind int

// The kinds, from the client's mistakes to the upstreams' failures.
const (
	Internal            Kind = iota // 500: a bug or an unclassified failure
	InvalidArgument                 // 400: a query parameter is missing or wrong
	NotFound                        // 404: no such route or entity
	MethodNotAllowed                // 405
	Unprocessable                   // 422: valid request the protocol cannot serve (expired option, ...)
	RateLimited                     // 429: the client is over its rate limit
	UpstreamError                   // 502: an upstream answered, but with an error or garbage
	UpstreamUnavailable             // 503: an upstream could not be reached, or is not configured
	UpstreamTimeout                 // 504: an upstream did not answer in time
	HeaderTooLarge                  // 431: the request's header fields are over the gateway's bound
)

// Error is what every layer returns. Code is a stable machine-readable name
// (INVALID_PARAMETER, SUBGRAPH_ERROR, ...); Param names the query parameter
// at fault, if any.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	Param   string
	// Err is the underlying cause, kept for logs and errors.Is; never shown to clients.
	Err error
	// RetryAfter, if set, is how long the client should wait (an
	// upstream's own Retry-After, passed on); otherwise the gateway's default.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := e.Code + ": " + e.Message
	if e.Param != "" {
		msg += " (param " + e.Param + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// InvalidParam is the 400 for a bad query parameter.
func InvalidParam(param, format string, args ...any) *Error {
	return &Error{Kind: InvalidArgument, Code: "INVALID_PARAMETER", Param: param, Message: fmt.Sprintf(format, args...)}
}

// New builds an error of the given kind and code.
func New(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// As returns the *Error inside err, or an Internal one wrapping it.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Code: "INTERNAL", Message: "internal error", Err: err}
}

// Upstream classifies a transport-level failure talking to an upstream
// ("subgraph", "rpc", "quote"): deadlines become UpstreamTimeout, failures to
// connect become UpstreamUnavailable, anything else UpstreamError. The code
// is prefixed with the upstream's name (SUBGRAPH_TIMEOUT, RPC_UNAVAILABLE, ...).
func Upstream(upstream string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	err = stripURL(err)
	name := map[string]string{"subgraph": "SUBGRAPH", "rpc": "RPC", "quote": "QUOTE"}[upstream]
	if name == "" {
		name = "UPSTREAM"
	}
	var backoff *BackoffError
	switch {
	case errors.Is(err, ErrNotRecorded):
		return &Error{Kind: UpstreamUnavailable, Code: "NOT_RECORDED", Err: err,
			Message: "the embedded demo has no recorded " + upstream + " answer for this request; to serve live data set " +
				"CLAMM_CHAIN_<chainId>_SUBGRAPH_URL and CLAMM_CHAIN_<chainId>_RPC_URL (see README, Configuration)"}
	case errors.As(err, &backoff):
		return &Error{Kind: UpstreamUnavailable, Code: name + "_UNAVAILABLE", Err: err, RetryAfter: backoff.Wait,
			Message: fmt.Sprintf("the %s refused the request; it asks to retry after %ds", upstream, int(backoff.Wait/time.Second))}
	case errors.Is(err, ErrOverloaded):
		return &Error{Kind: UpstreamUnavailable, Code: "OVERLOADED", Err: err,
			Message: "the gateway is at its bound on upstream answers held in memory; retry shortly"}
	case errors.Is(err, ErrTooLarge):
		return &Error{Kind: UpstreamError, Code: name + "_ERROR", Err: err,
			Message: "the " + upstream + " answered more than the gateway accepts"}
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return &Error{Kind: UpstreamTimeout, Code: name + "_TIMEOUT", Err: err,
			Message: "the " + upstream + " did not answer in time"}
	case errors.Is(err, context.Canceled):
		return &Error{Kind: UpstreamUnavailable, Code: name + "_UNAVAILABLE", Err: err,
			Message: "the request to the " + upstream + " was cancelled"}
	case isUnreachable(err):
		return &Error{Kind: UpstreamUnavailable, Code: name + "_UNAVAILABLE", Err: err,
			Message: "the " + upstream + " could not be reached"}
	default:
		return &Error{Kind: UpstreamError, Code: name + "_ERROR", Err: err,
			Message: "the " + upstream + " answered with an error"}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isUnreachable(err error) bool {
	var oe *net.OpError
	var dnsErr *net.DNSError
	var ue *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, syscall.ENETUNREACH), errors.As(err, &oe), errors.As(err, &dnsErr):
		return true
	case errors.As(err, &ue):
		return true
	}
	return false
}

// stripURL drops the request URL that net/http quotes in a *url.Error: an
// upstream URL may carry an API key in its path or query, and url.Error only
// masks the password. The cause chain stays intact for errors.Is and As.
func stripURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	return &strippedURLError{op: ue.Op, err: ue.Err, orig: ue}
}

type strippedURLError struct {
	op   string
	err  error
	orig *url.Error
}

func (e *strippedURLError) Error() string { return e.op + " <upstream url>: " + e.err.Error() }

// Unwrap keeps both the cause and the *url.Error (for Timeout()) reachable.
func (e *strippedURLError) Unwrap() []error { return []error{e.err, e.orig} }
