package systemtest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
)

const (
	streamStrikes = gateway.PathStrikesChain + "?chainId=42161&optionMarket=" + wethUSDC + "&callsReach=5&putsReach=5"
	streamMark    = gateway.PathMarkPrice + "?chainId=42161&optionMarket=" + wethUSDC
)

// streamApp is the gateway over the demo scenario's fakes with streams
// on; its chain's heads are published by the test (a fake feed).
func streamApp(t *testing.T, perClient int, heartbeat time.Duration) (*app.App, *scenario.Fakes, *httptest.Server) {
	t.Helper()
	return streamAppWith(t, func(cfg *config.Config) {
		cfg.StreamsPerClient = perClient
		if heartbeat > 0 {
			cfg.StreamHeartbeat = config.Duration(heartbeat)
		}
	})
}

// streamAppWith is streamApp with the configuration adjust makes.
func streamAppWith(t *testing.T, adjust func(*config.Config)) (*app.App, *scenario.Fakes, *httptest.Server) {
	t.Helper()
	f := newFakesOnly(t)
	cfg := arbitrumOnly()
	cfg.Streams = true
	adjust(cfg)
	a, err := app.New(app.Options{Config: cfg, Transports: onFakes(f)})
	if err != nil {
		t.Fatal(err)
	}
	a.Pins.SetHeadAges(block.HeadAges{})
	srv := httptest.NewServer(a.Server)
	t.Cleanup(func() { a.Server.CloseStreams(); srv.Close() })
	return a, f, srv
}

// headAt is block n as the fake node has it.
func headAt(t testing.TB, a *app.App, n uint64) block.Ref {
	t.Helper()
	r, err := a.Pins.BlockAt(context.Background(), 42161, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// sseEvent is one Server-Sent Event (or a comment).
type sseEvent struct{ id, event, data, comment string }

// follow opens path's event stream (lastID, if set, as Last-Event-ID)
// and returns its events as they come, and the response.
func follow(t *testing.T, srv *httptest.Server, path, lastID string) (<-chan sseEvent, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<22)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				out <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ev.comment = line
			case strings.HasPrefix(line, "id: "):
				ev.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[6:]
			}
		}
	}()
	return out, resp
}

// plainAt is the GET of path at block n: its body.
func plainAt(t *testing.T, a *app.App, path string, n uint64) string {
	t.Helper()
	rec := httptestDo(a.Server, http.MethodGet, path+"&block="+strconv.FormatUint(n, 10))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s at %d: %d %s", path, n, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func idOf(r block.Ref) string { return strconv.FormatUint(r.Number, 10) + ":" + r.Hash }

// next is the next event that is not a comment.
func next(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	for ev := range events {
		if ev.comment == "" {
			return ev
		}
	}
	t.Fatal("the stream ended")
	return sseEvent{}
}

// A stream sends the answer at the head, equal to the GET at the block
// its id names; nothing for a block that changed nothing; on a reorg a
// reorg event naming the fork, then the new branch's answers from the
// block after the fork (a block the feed skipped is answered too); a reconnect
// with Last-Event-ID is not sent again what it holds, and one whose
// block is not on the chain gets a fresh snapshot.
func TestStreamFollowsTheHead(t *testing.T) {
	a, f, srv := streamApp(t, 64, 0)
	top := f.Node.BlockNumber
	heads := a.Pins.Heads(42161)
	heads.Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top-2)})
	for _, path := range []string{streamStrikes, streamMark} {
		events, resp := follow(t, srv, path, "")
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		first := next(t, events)
		if first.event != "answer" || first.id != idOf(headAt(t, a, top-2)) || first.data != plainAt(t, a, path, top-2) {
			t.Fatalf("%s: first event %s %s, want the answer at %d as its GET gives it:\n%.300s\n%.300s", path, first.event, first.id, top-2, first.data, plainAt(t, a, path, top-2))
		}
		t.Cleanup(func() { resp.Body.Close() })
		defer func(events <-chan sseEvent, path string) {
			// after the reorg below: the reorg, then the new branch's answer
			ev := next(t, events)
			if ev.event != "reorg" || ev.id != idOf(headAt(t, a, top-2)) {
				t.Errorf("%s: after a block that changed nothing and a reorg, got %s %s, want the reorg at %d", path, ev.event, ev.id, top-2)
			}
			// the new branch from the block after the fork (sent though
			// unchanged: the client dropped what was above the fork)
			ev = next(t, events)
			if ev.event != "answer" || ev.id != idOf(headAt(t, a, top-1)) || ev.data != plainAt(t, a, path, top-1) {
				t.Errorf("%s: after the reorg %s %s, want the answer at %d", path, ev.event, ev.id, top-1)
			}
		}(events, path)
	}
	heads.Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top-1)}) // changes nothing
	heads.Publish(block.Event{Kind: block.Reorg, Head: headAt(t, a, top), Fork: headAt(t, a, top-2)})
}

// A reconnect naming the block it last saw is sent only what changed
// since (nothing here: a heartbeat comes first); one naming a block that
// is not on the chain gets the answer at the head.
func TestStreamResumesFromLastEventID(t *testing.T) {
	a, f, srv := streamApp(t, 64, time.Millisecond)
	top := f.Node.BlockNumber
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top)})
	events, _ := follow(t, srv, streamStrikes, idOf(headAt(t, a, top-3)))
	// Five heartbeats and nothing else: a snapshot wrongly queued for the
	// client is ready before the first heartbeat's timer is, and the
	// stream's select takes a ready frame at latest within a few beats.
	for range 5 {
		if ev := <-events; ev.comment == "" {
			t.Fatalf("a client current but for blocks that changed nothing was sent %s %s", ev.event, ev.id)
		}
	}
	gone := strconv.FormatUint(top-1, 10) + ":0x" + strings.Repeat("ab", 32)
	events, _ = follow(t, srv, streamStrikes, gone)
	if ev := next(t, events); ev.event != "answer" || ev.id != idOf(headAt(t, a, top)) {
		t.Fatalf("a client whose block left the chain got %s %s, want the snapshot at %d", ev.event, ev.id, top)
	}
}

// Past a client's bound a stream is 429 RATE_LIMITED, in the JSON error
// shape; a stream asked at a block is 400.
func TestStreamLimits(t *testing.T) {
	a, f, srv := streamApp(t, 1, 0)
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, f.Node.BlockNumber)})
	events, _ := follow(t, srv, streamMark, "")
	next(t, events)
	_, resp := follow(t, srv, streamStrikes, "")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), `"RATE_LIMITED"`) {
		t.Fatalf("a second stream of a client bound to one: %d %s", resp.StatusCode, body)
	}
	_, resp = follow(t, srv, streamMark+"&block=5", "")
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"block"`) {
		t.Fatalf("a stream at a block: %d %s", resp.StatusCode, body)
	}
}

// With streams off an event-stream request gets today's JSON answer, and
// the WebSocket path does not exist.
func TestStreamsOffChangeNothing(t *testing.T) {
	f := newFakesOnly(t)
	srv := newApp(t, app.Options{Transports: onFakes(f)})
	req := httptest.NewRequest(http.MethodGet, streamMark, nil)
	req.Header.Set("Accept", "text/event-stream")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("streams off: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
	if rec := httptestDo(srv, http.MethodGet, gateway.PathStream); rec.Code != http.StatusNotFound {
		t.Fatalf("streams off: %s answered %d", gateway.PathStream, rec.Code)
	}
}

// One WebSocket carries several subscriptions: each answer names its
// subscription and block, equal to the GET at that block; unsubscribe
// ends one; an unknown route is an error message, not a closed socket.
func TestStreamWebSocketMultiplexes(t *testing.T) {
	a, f, srv := streamApp(t, 64, 0)
	top := f.Node.BlockNumber
	a.Pins.Heads(42161).Publish(block.Event{Kind: block.NewHead, Head: headAt(t, a, top)})
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+gateway.PathStream, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// what the socket carries, both ways, is as the OpenAPI document's
	// schemas say
	conforms := wsSchemas(t)
	send := func(m map[string]any) {
		b, _ := json.Marshal(m)
		conforms("StreamRequest", b)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	params := map[string]string{"chainId": "42161", "optionMarket": wethUSDC}
	send(map[string]any{"op": "subscribe", "id": "mark", "path": gateway.PathMarkPrice, "params": params})
	send(map[string]any{"op": "subscribe", "id": "strikes", "path": gateway.PathStrikesChain,
		"params": map[string]string{"chainId": "42161", "optionMarket": wethUSDC, "callsReach": "5", "putsReach": "5"}})
	send(map[string]any{"op": "subscribe", "id": "nope", "path": "/clamm/nope", "params": params})
	want := map[string]string{"mark": plainAt(t, a, streamMark, top), "strikes": plainAt(t, a, streamStrikes, top)}
	got := map[string]bool{}
	var refused bool
	for len(got) < 2 || !refused {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conforms("StreamMessage", b)
		var m struct {
			Op, ID, Event string
			Data          json.RawMessage
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Op == "answer":
			if m.Event != idOf(headAt(t, a, top)) || string(m.Data) != want[m.ID] {
				t.Fatalf("%s: answer %s differs from the GET at %d", m.ID, m.Event, top)
			}
			got[m.ID] = true
		case m.Op == "error" && m.ID == "nope":
			refused = strings.Contains(string(m.Data), "NOT_FOUND")
		}
	}
	send(map[string]any{"op": "unsubscribe", "id": "mark"})
	for {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"unsubscribed"`) {
			break
		}
	}
}

// wsSchemas checks a WebSocket message against the OpenAPI document's
// schema of its name.
func wsSchemas(t *testing.T) func(schema string, msg []byte) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(gateway.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	return func(schema string, msg []byte) {
		t.Helper()
		ref := doc.Components.Schemas[schema]
		if ref == nil {
			t.Fatalf("the OpenAPI document has no schema %s", schema)
		}
		var v any
		if err := json.Unmarshal(msg, &v); err != nil {
			t.Fatal(err)
		}
		if err := ref.Value.VisitJSON(v); err != nil {
			t.Errorf("%s %s: %v", schema, msg, err)
		}
	}
}
