package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// wantsEventStream says the client asks for the stream of an answer
// rather than the answer: its Accept names text/event-stream (what
// EventSource sends).
func wantsEventStream(r *http.Request) bool {
	for _, v := range r.Header["Accept"] {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}

// clientOf names a request's client as the rate limiter does: the peer
// address, or the proxy's last X-Forwarded-For entry when trusted.
func (s *Server) clientOf(r *http.Request) string {
	return (&rateLimiter{trustXFF: s.opts.TrustForwardedFor}).client(r)
}

// openStream parses a stream's request and counts it against the limits;
// the error is the one a GET of the same request would get, or the
// limits'.
func (h *streamHub) openStream(r *http.Request, open func(*Server, *http.Request) (streamSpec, error)) (streamSpec, func(), error) {
	if r.URL.Query().Has("block") {
		return streamSpec{}, nil, problem.New(problem.InvalidParameter, "a stream follows the chain's head: it takes no block (reconnect with Last-Event-ID to resume after one)").On("block")
	}
	spec, err := open(h.s, r)
	if err != nil {
		return streamSpec{}, nil, err
	}
	release, err := h.admit(h.s.clientOf(r))
	return spec, release, err
}

// serveSSE answers a request for an answer's stream with Server-Sent
// Events: `event: answer` with `id: <number>:<hash>` and the whole
// answer as its data, once per block that changes it; `event: reorg`
// (its id the fork) before the new branch's answer; `event: error` when
// the answer at a block fails (the stream goes on); a comment every
// heartbeat of silence. The stream bypasses what a plain answer gets
// (header holding, the server's write timeout): each write has its own
// deadline, and a client that cannot take one within it is dropped.
func (h *streamHub) serveSSE(w http.ResponseWriter, r *http.Request, open func(*Server, *http.Request) (streamSpec, error)) {
	spec, release, err := h.openStream(r, open)
	if err != nil {
		h.s.writeError(w, err)
		return
	}
	defer release()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{}) // the stream ends when the client goes, not on the request's read deadline
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: pass each event on at once
	w.WriteHeader(http.StatusOK)
	exchangeOf(w).cache = "STREAM"
	out := &sseWriter{w: w, rc: rc, h: h}
	if out.flush() != nil {
		return
	}
	sb := newSubscriber(make(chan struct{}, 1))
	t := h.join(spec, sb)
	defer h.leave(t, sb)
	if last, ok := parseEventID(r.Header.Get("Last-Event-ID")); ok {
		frames, upTo, ok := h.missed(r.Context(), spec, last)
		for _, f := range frames {
			if out.frame(f) != nil {
				return
			}
		}
		if ok {
			sb.wrote(upTo) // the client is current to there: no older snapshot
		}
	}
	h.pump(r.Context(), sb, out)
}

// pump writes sb's frames as they come, and heartbeats in between, until
// the client goes, a write fails, or streams close.
func (h *streamHub) pump(ctx context.Context, sb *subscriber, out *sseWriter) {
	beat := time.NewTimer(h.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			_ = out.raw([]byte("event: close\ndata: {\"reason\":\"the gateway is shutting down; reconnect with Last-Event-ID\"}\n\n"))
			return
		case <-beat.C:
			if out.raw([]byte(": heartbeat\n\n")) != nil {
				return
			}
		case <-sb.wake:
			for _, f := range sb.take() {
				if out.frame(f) != nil {
					return
				}
			}
		}
		beat.Reset(h.heartbeat)
	}
}

// sseWriter writes events to one client, each under its own deadline.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	h  *streamHub
}

// frame writes f as one event.
func (o *sseWriter) frame(f *frame) error {
	if err := o.raw(f.event()); err != nil {
		return err
	}
	o.h.sent.Add(1)
	o.h.lag.observe(time.Since(f.made))
	return nil
}

// raw writes b and flushes it under streamWriteTimeout.
func (o *sseWriter) raw(b []byte) error {
	_ = o.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := o.w.Write(b); err != nil {
		return err
	}
	return o.flush()
}

func (o *sseWriter) flush() error {
	err := o.rc.Flush()
	if errors.Is(err, http.ErrNotSupported) {
		return nil // a recorder in tests: the bytes are there
	}
	return err
}
