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
// recorded answer; Upstream turns it into NOT_RECORDED.
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
	KindInternal            Kind = iota // 500: a bug or an unclassified failure
	KindInvalidArgument                 // 400: a query parameter is missing or wrong
	KindNotFound                        // 404: no such route or entity
	KindMethodNotAllowed                // 405
	KindUnprocessable                   // 422: valid request the protocol cannot serve (expired option, ...)
	KindRateLimited                     // 429: the client is over its rate limit
	KindUpstreamError                   // 502: an upstream answered, but with an error or garbage
	KindUpstreamUnavailable             // 503: an upstream could not be reached, or is not configured
	KindUpstreamTimeout                 // 504: an upstream did not answer in time
	KindHeaderTooLarge                  // 431: the request's header fields are over the gateway's bound
	KindClientClosed                    // 499 in logs and metrics: the client went away; nothing is sent
	KindBodyTooLarge                    // 413: a request body over the route's bound
	KindGone                            // 410: an older route that was superseded
)

// Error is what every layer returns. Code is one of the catalogue's
// declarations (codes.go); Param names the query parameter at fault, if any.
type Error struct {
	Code    *Code
	Message string
	Param   string
	// Err is the underlying cause, kept for logs and errors.Is; never shown to clients.
	Err error
	// RetryAfter, if set, is how long the client should wait (an
	// upstream's own Retry-After, passed on); otherwise the gateway's default.
	RetryAfter time.Duration
}

// Kind is the code's kind; an Error without a code is Internal.
func (e *Error) Kind() Kind {
	if e.Code == nil {
		return KindInternal
	}
	return e.Code.kind
}

func (e *Error) Error() string {
	name := InternalError.name
	if e.Code != nil {
		name = e.Code.name
	}
	msg := name + ": " + e.Message
	if e.Param != "" {
		msg += " (param " + e.Param + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// New builds an error with the given code and a client-facing message.
func New(code *Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap is New keeping cause for logs and errors.Is (never shown to clients).
func Wrap(code *Code, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: cause}
}

// On names the query parameter at fault and returns e.
func (e *Error) On(param string) *Error {
	e.Param = param
	return e
}

// InvalidParam is the 400 for a bad query parameter.
func InvalidParam(param, format string, args ...any) *Error {
	return New(InvalidParameter, format, args...).On(param)
}

// As returns the *Error inside err, or an Internal one wrapping it. Unlike
// errors.As it never fails: anything unclassified is INTERNAL.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) && e.Code != nil {
		return e
	}
	return Wrap(InternalError, err, "internal error")
}

// Upstream classifies a transport-level failure talking to an upstream:
// deadlines become the source's timeout code, failures to connect its
// unavailable code, anything else its error code. An error that is already
// classified is returned as it is.
func Upstream(src Source, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	err = stripURL(err)
	var backoff *BackoffError
	switch {
	case errors.Is(err, ErrNotRecorded):
		return Wrap(NotRecorded, err, "the embedded demo has no recorded %s answer for this request", src.Name)
	case errors.As(err, &backoff):
		e := Wrap(src.Unavailable, err, "the %s refused the request; it asks to retry after %ds", src.Name, int(backoff.Wait/time.Second))
		e.RetryAfter = backoff.Wait
		return e
	case errors.Is(err, ErrOverloaded):
		return Wrap(Overloaded, err, "the gateway is at its bound on upstream answers held in memory; retry shortly")
	case errors.Is(err, ErrTooLarge):
		return Wrap(src.Error, err, "the %s answered more than the gateway accepts", src.Name)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return Wrap(src.Timeout, err, "the %s did not answer in time", src.Name)
	case errors.Is(err, context.Canceled):
		return Wrap(src.Unavailable, err, "the request to the %s was cancelled", src.Name)
	case isUnreachable(err):
		return Wrap(src.Unavailable, err, "the %s could not be reached", src.Name)
	default:
		return Wrap(src.Error, err, "the %s answered with an error", src.Name)
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
