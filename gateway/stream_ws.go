package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// wsIn is a client's message on the WebSocket: subscribe to a route's
// answer (path and parameters as its GET takes them, and optionally the
// last event id seen), or unsubscribe. ID is the client's name for the
// subscription, echoed on every message about it.
type wsIn struct {
	Op          string            `json:"op"`
	ID          string            `json:"id"`
	Path        string            `json:"path,omitempty"`
	Params      map[string]string `json:"params,omitempty"`
	LastEventID string            `json:"lastEventId,omitempty"`
}

// wsOut is the gateway's message: an event of a subscription (op
// "answer", "reorg" or "error", with the event's id and data as its SSE
// form has them), or the answer to a subscribe or unsubscribe.
type wsOut struct {
	Op    string          `json:"op"`
	ID    string          `json:"id"`
	Event string          `json:"event,omitempty"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// wsMaxMessage bounds a client's message.
const wsMaxMessage = 8 << 10

// serveWS answers PathStream: one WebSocket carrying many subscriptions,
// each counted against the stream limits as an SSE stream is.
func (h *streamHub) serveWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, h.acceptOptions())
	if err != nil {
		return // Accept has answered the client
	}
	exchangeOf(w).cache = "STREAM"
	c.SetReadLimit(wsMaxMessage)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	conn := &wsConn{h: h, c: c, r: r, wake: make(chan struct{}, 1), subs: map[string]*wsSub{}}
	defer conn.closeAll()
	go conn.pump(ctx, cancel)
	reason := conn.read(ctx)
	_ = c.Close(websocket.StatusNormalClosure, reason)
}

// acceptOptions admit the browser origins CORS admits (any, with "*");
// without CORS origins only same-host pages may open the socket.
func (h *streamHub) acceptOptions() *websocket.AcceptOptions {
	o := &websocket.AcceptOptions{}
	for _, origin := range h.s.opts.CORSOrigins {
		if origin == "*" {
			o.InsecureSkipVerify = true
			return o
		}
		if u, err := url.Parse(origin); err == nil && u.Host != "" {
			o.OriginPatterns = append(o.OriginPatterns, u.Host)
		}
	}
	return o
}

// wsConn is one WebSocket's subscriptions.
type wsConn struct {
	h    *streamHub
	c    *websocket.Conn
	r    *http.Request
	wake chan struct{} // shared by every subscription's subscriber

	mu   sync.Mutex
	subs map[string]*wsSub
}

type wsSub struct {
	sb      *subscriber
	t       *topic
	release func()
}

// read handles the client's messages until it goes or errs; it returns
// the close reason.
func (c *wsConn) read(ctx context.Context) string {
	for {
		var m wsIn
		typ, b, err := c.c.Read(ctx)
		if err != nil {
			return ""
		}
		if typ != websocket.MessageText || json.Unmarshal(b, &m) != nil {
			return "messages are JSON text: {\"op\":\"subscribe\"|\"unsubscribe\",\"id\":...}"
		}
		switch m.Op {
		case "subscribe":
			c.subscribe(ctx, m)
		case "unsubscribe":
			c.unsubscribe(m.ID)
			c.send(ctx, wsOut{Op: "unsubscribed", ID: m.ID})
		default:
			c.fail(ctx, m.ID, problem.New(problem.InvalidParameter, "op %.40q is neither subscribe nor unsubscribe", m.Op).On("op"))
		}
	}
}

// subscribe opens m's stream as an SSE request for it would be.
func (c *wsConn) subscribe(ctx context.Context, m wsIn) {
	c.mu.Lock()
	_, taken := c.subs[m.ID]
	c.mu.Unlock()
	if taken || m.ID == "" || len(m.ID) > 64 {
		c.fail(ctx, m.ID, problem.New(problem.InvalidParameter, "a subscription needs an id of 1 to 64 characters not already in use on this socket").On("id"))
		return
	}
	open := c.h.s.streamOpeners[m.Path]
	if open == nil {
		c.fail(ctx, m.ID, problem.New(problem.RouteNotFound, "no streamed route %.80q: the streamed routes are listed in /openapi.json (x-stream)", m.Path).On("path"))
		return
	}
	q := url.Values{}
	for k, v := range m.Params {
		q.Set(k, v)
	}
	req := c.r.Clone(ctx)
	req.URL = &url.URL{Path: m.Path, RawQuery: q.Encode()}
	spec, release, err := c.h.openStream(req, open)
	if err != nil {
		c.fail(ctx, m.ID, err)
		return
	}
	sub := &wsSub{sb: newSubscriber(c.wake), release: release}
	c.mu.Lock()
	c.subs[m.ID] = sub
	c.mu.Unlock()
	c.send(ctx, wsOut{Op: "subscribed", ID: m.ID})
	if last, ok := parseEventID(m.LastEventID); ok {
		frames, upTo, ok := c.h.missed(ctx, spec, last)
		for _, f := range frames {
			c.frame(ctx, m.ID, f)
		}
		if ok {
			sub.sb.wrote(upTo)
		}
	}
	sub.t = c.h.join(spec, sub.sb)
}

// unsubscribe ends the subscription id, if any.
func (c *wsConn) unsubscribe(id string) {
	c.mu.Lock()
	sub := c.subs[id]
	delete(c.subs, id)
	c.mu.Unlock()
	if sub != nil {
		sub.end(c.h)
	}
}

func (s *wsSub) end(h *streamHub) {
	if s.t != nil {
		h.leave(s.t, s.sb)
	}
	s.release()
}

// closeAll ends every subscription of the socket.
func (c *wsConn) closeAll() {
	c.mu.Lock()
	subs := c.subs
	c.subs = map[string]*wsSub{}
	c.mu.Unlock()
	for _, s := range subs {
		s.end(c.h)
	}
}

// pump writes the subscriptions' frames as they come, with heartbeats
// (pings) in between, until ctx ends; a failed write ends the socket.
func (c *wsConn) pump(ctx context.Context, cancel func()) {
	defer cancel()
	beat := time.NewTimer(c.h.heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.h.ctx.Done():
			_ = c.c.Close(websocket.StatusGoingAway, "the gateway is shutting down; subscribe again with lastEventId")
			return
		case <-beat.C:
			pctx, stop := context.WithTimeout(ctx, streamWriteTimeout)
			err := c.c.Ping(pctx)
			stop()
			if err != nil {
				return
			}
		case <-c.wake:
			if !c.flush(ctx) {
				return
			}
		}
		beat.Reset(c.h.heartbeat)
	}
}

// flush writes every subscription's pending frames.
func (c *wsConn) flush(ctx context.Context) bool {
	c.mu.Lock()
	ids := make([]string, 0, len(c.subs))
	subs := make([]*wsSub, 0, len(c.subs))
	for id, s := range c.subs {
		ids, subs = append(ids, id), append(subs, s)
	}
	c.mu.Unlock()
	for i, s := range subs {
		for _, f := range s.sb.take() {
			if !c.frame(ctx, ids[i], f) {
				return false
			}
		}
	}
	return true
}

// frame writes one event of subscription id.
func (c *wsConn) frame(ctx context.Context, id string, f *frame) bool {
	if !c.send(ctx, wsOut{Op: f.kind, ID: id, Event: f.id(), Data: f.data}) {
		return false
	}
	c.h.sent.Add(1)
	c.h.lag.observe(time.Since(f.made))
	return true
}

// fail tells the client why a message was refused.
func (c *wsConn) fail(ctx context.Context, id string, err error) {
	c.send(ctx, wsOut{Op: "error", ID: id, Data: c.h.s.errorJSON("", err)})
}

// send writes one message under streamWriteTimeout.
func (c *wsConn) send(ctx context.Context, m wsOut) bool {
	b, err := json.Marshal(m)
	if err != nil {
		return false
	}
	wctx, stop := context.WithTimeout(ctx, streamWriteTimeout)
	defer stop()
	return c.c.Write(wctx, websocket.MessageText, b) == nil
}

// isWebSocket says the request asks to upgrade to a WebSocket.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// serveStreamSocket answers PathStream: a WebSocket upgrade, else 400.
func (s *Server) serveStreamSocket(w http.ResponseWriter, r *http.Request) {
	if !isWebSocket(r) {
		s.writeError(w, problem.New(problem.InvalidParameter, "%s is a WebSocket endpoint: open it with an Upgrade: websocket request", PathStream))
		return
	}
	s.streams.serveWS(w, r)
}
