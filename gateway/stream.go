package gateway

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// Streams are the endpoint table's second face (docs/api.md, "Streams"):
// a read whose entry says `stream: streamed` is also served as a stream
// of its answers, one per block that changes it, over Server-Sent Events
// on its own path (content negotiation: `Accept: text/event-stream`) and
// over one WebSocket (PathStream) that multiplexes subscriptions.
//
// Every client following one answer (one cache key without its block) is
// fed by one topic: on each head of its chain's feed (block.Heads) the
// topic asks the response cache for the answer at that block, keyed as a
// GET with `block=N` is (the key holds the block's hash), so however many
// clients follow it the upstreams see one fill per key and block, and
// with a shared tier one per fleet. An answer whose bytes are those last
// sent is not sent again. Each subscriber holds at most one pending answer
// and one pending reorg: a client slower than the chain skips to the
// newest answer and never holds the topic back; one whose writes stall
// past streamWriteTimeout is closed.
//
// Skipping is allowed, losing is not. The topic answers every block (the
// blocks a feed moved past at once too, see between; but one whose header
// the node fails to give), so an answer is missed only by a subscriber
// that had not taken the one before when it came: "slower than the chain"
// includes its writer kept off the CPU on a loaded machine, against an
// answer that changes every block. What replaces it is always newer, the
// newest answer is always the one pending (a change is never lost while
// it is the current answer), and each skip is counted
// (clamm_stream_events_dropped_total). A client that must see every
// block's answer asks the GET with `block=` for the blocks between two
// event ids. A reorg's fork is the feed's: the newest block its source
// holds still on the chain, which for the embedded index may lie below
// the newest common block (it holds the blocks with events and the last
// of each range it indexed, and a range may span several blocks); answers
// above it are void either way.

// streamed says whether an entry's answers are streamed: a column of the
// endpoint table every entry states (TestEveryEndpointStatesItsStream).
type streamed uint8

const (
	unstatedStream streamed = iota
	// streams: the answer is a function of its block (reads).
	streams
	// notStreamed: the answer depends on more than its block (quotes and
	// prepared transactions read swap quotes and the clock), or is a
	// transaction to sign: a client asks for it when it means to act.
	notStreamed
)

// PathStream is the WebSocket endpoint of streams.
const PathStream = "/clamm/ws"

const (
	// streamWriteTimeout bounds one write to a stream's client: the
	// server's WriteTimeout (the request timeout plus 5 s) would end
	// every stream, so each write sets its own deadline.
	streamWriteTimeout = 10 * time.Second
	// maxReplay is the most blocks a reconnect with Last-Event-ID is
	// answered block by block; further behind, it gets a fresh snapshot.
	maxReplay = 256
	// blockKeyedTTL bounds how long an answer keyed by its block (and
	// that block's hash) is kept: it never goes stale, so this only
	// bounds memory (and the shared tier's records).
	blockKeyedTTL = time.Hour
)

// streamSpec is one stream as its endpoint parsed it: the answer's key
// without a block (its topic), its chain, and the fill of the answer at a
// block.
type streamSpec struct {
	topic string
	route string // the route's template: its error hints, the log
	chain uint64
	fill  func(ctx context.Context, at block.Ask) (entry, error)
}

// frame is one event of a topic, encoded once for every subscriber.
type frame struct {
	kind string    // "answer", "reorg" or "error"
	ref  block.Ref // answer: its block; reorg: the fork
	data []byte    // JSON: the answer, the reorg's blocks, or the error body
	made time.Time // when the head that caused it arrived (fan-out lag)

	// sse is the frame as an SSE event, built once for every subscriber
	sseOnce sync.Once
	sse     []byte
}

// event is f as a Server-Sent Event: id (the block), event (the kind),
// data (JSON has no raw newline outside strings, and strings escape
// theirs: one line, split anyway as the format asks).
func (f *frame) event() []byte {
	f.sseOnce.Do(func() {
		var b bytes.Buffer
		b.Grow(len(f.data) + 128)
		if id := f.id(); id != "" {
			b.WriteString("id: " + id + "\n")
		}
		b.WriteString("event: " + f.kind + "\n")
		for line := range bytes.SplitSeq(f.data, []byte{'\n'}) {
			b.WriteString("data: ")
			b.Write(line)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
		f.sse = b.Bytes()
	})
	return f.sse
}

// id is the event id: the block, as number:hash.
func (f *frame) id() string {
	if f.ref.Number == 0 {
		return ""
	}
	return strconv.FormatUint(f.ref.Number, 10) + ":" + f.ref.Hash
}

// parseEventID reads a Last-Event-ID (number:hash); ok is false for
// anything else.
func parseEventID(s string) (block.Ref, bool) {
	n, h, ok := strings.Cut(s, ":")
	num, err := strconv.ParseUint(n, 10, 64)
	r := block.Ref{Number: num, Hash: strings.ToLower(h)}
	return r, ok && err == nil && num > 0 && r.Check(0) == nil
}

// streamHub holds the topics and the limits of one server's streams.
type streamHub struct {
	s         *Server
	heartbeat time.Duration
	perClient int
	max       int
	ctx       context.Context // ended by CloseStreams
	stop      context.CancelFunc

	mu      sync.Mutex
	topics  map[string]*topic
	clients map[string]int
	total   int

	// slots bounds the answers topics compute at once: at a new head
	// every topic asks for its answer together, and without a queue of
	// their own all but the fill admission's few were refused (503
	// OVERLOADED sent as an error event: a thousand keys' streams lost
	// most blocks). Half the fill slots: requests' misses keep the rest.
	slots chan struct{}

	sent, dropped, fills, answered, changed atomic.Int64
	lag                                     lagHistogram
}

// StreamCounts are a server's stream figures at one moment, as /metrics
// reports them (benchmarks wait on them).
type StreamCounts struct {
	Subscribers int
	// Answered counts the answers at a block topics computed (sent,
	// unchanged or failed); Changed those sent because they changed.
	Answered, Changed int64
	Sent, Dropped     int64 // events written to subscribers, and skipped
	Fills             int64 // answers at a block filled (the rest were cached)
}

// StreamCounts reports the stream figures (zero with streams off).
func (s *Server) StreamCounts() StreamCounts {
	h := s.streams
	if h == nil {
		return StreamCounts{}
	}
	return StreamCounts{Subscribers: h.subscribers(), Answered: h.answered.Load(), Changed: h.changed.Load(),
		Sent: h.sent.Load(), Dropped: h.dropped.Load(), Fills: h.fills.Load()}
}

// newStreamHub builds the hub of a server with streams on.
func newStreamHub(s *Server) *streamHub {
	ctx, stop := context.WithCancel(context.Background())
	return &streamHub{s: s, heartbeat: s.opts.StreamHeartbeat, perClient: s.opts.StreamsPerClient, max: s.opts.StreamsMax,
		ctx: ctx, stop: stop, topics: map[string]*topic{}, clients: map[string]int{}, lag: newLagHistogram(),
		slots: make(chan struct{}, max(1, s.opts.MaxFills/2))}
}

// startStreams builds the hub when streams are on, with the streamed
// routes' parsers and its metrics.
func (s *Server) startStreams() error {
	if !s.opts.Streams {
		return nil
	}
	s.streams = newStreamHub(s)
	s.streamOpeners = map[string]func(*Server, *http.Request) (streamSpec, error){}
	for _, e := range s.endpoints {
		if e.open != nil {
			s.streamOpeners[e.path] = e.open
		}
	}
	if s.opts.Metrics != nil {
		for _, c := range s.streams.collectors() {
			if err := s.opts.Metrics.Register(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// CloseStreams ends every stream (each is told why): for the HTTP
// server's shutdown, which waits for connections to go idle and a stream
// never does.
func (s *Server) CloseStreams() {
	if s.streams != nil {
		s.streams.stop()
	}
}

// admit counts one more stream of client, or refuses it: past the
// client's bound 429 RATE_LIMITED, past the gateway's 503 OVERLOADED.
func (h *streamHub) admit(client string) (release func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.total >= h.max:
		return nil, problem.New(problem.Overloaded, "the gateway follows %d streams, its bound (CLAMM_STREAMS_MAX); retry later or poll", h.max)
	case h.clients[client] >= h.perClient:
		return nil, problem.New(problem.RateLimited, "this client follows %d streams, its bound (CLAMM_STREAMS_PER_CLIENT); close one, or follow several on one WebSocket", h.perClient)
	}
	h.total++
	h.clients[client]++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.total--
			if h.clients[client]--; h.clients[client] <= 0 {
				delete(h.clients, client)
			}
			h.mu.Unlock()
		})
	}, nil
}

// join adds sb to spec's topic, starting the topic when it is the first;
// sb is offered the topic's last answer (a fresh snapshot).
func (h *streamHub) join(spec streamSpec, sb *subscriber) *topic {
	h.mu.Lock()
	t := h.topics[spec.topic]
	if t == nil {
		ctx, cancel := context.WithCancel(h.ctx)
		t = &topic{hub: h, spec: spec, cancel: cancel, subs: map[*subscriber]struct{}{}}
		h.topics[spec.topic] = t
		go t.run(ctx)
	}
	// sb joins before h.mu is let go: in between, leave could take the
	// topic's last other subscriber, find it empty and stop it, and sb
	// would follow a topic that never answers again (only heartbeats, so
	// its client would never reconnect). leave takes h.mu then t.mu too.
	t.mu.Lock()
	t.subs[sb] = struct{}{}
	last := t.last
	t.mu.Unlock()
	h.mu.Unlock()
	if last != nil {
		sb.offer(last, h)
	}
	return t
}

// leave removes sb; the last subscriber to leave stops the topic.
func (h *streamHub) leave(t *topic, sb *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t.mu.Lock()
	delete(t.subs, sb)
	empty := len(t.subs) == 0
	t.mu.Unlock()
	if empty && h.topics[t.spec.topic] == t {
		delete(h.topics, t.spec.topic)
		t.cancel()
	}
}

// subscribers counts the streams followed now.
func (h *streamHub) subscribers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.total
}

// answerAt is spec's answer at ref through the response cache, keyed as a
// GET of the same answer with `block=ref.Number` is: one fill per key and
// block however many ask. It waits its turn among the hub's slots, and
// then for a fill slot, rather than being refused one: no client is
// waiting on it, and a refusal would only lose the block's answer.
func (h *streamHub) answerAt(ctx context.Context, spec streamSpec, ref block.Ref) (entry, error) {
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return entry{}, ctx.Err()
	}
	defer func() { <-h.slots }()
	s := h.s
	ctx, cancel := context.WithTimeout(ctx, s.opts.RequestTimeout)
	defer cancel()
	key := spec.topic + "|" + strconv.FormatUint(ref.Number, 10) + "|" + ref.Hash
	e, _, _, err := s.responses.Get(ctx, key, cache.Policy{TTL: blockKeyedTTL}, func(ctx context.Context) (entry, error) {
		ctx, lease, err := s.fills.Wait(ctx)
		if err != nil {
			return entry{}, err
		}
		defer lease.Release()
		h.fills.Add(1)
		return spec.fill(ctx, block.Ask{Chain: spec.chain, Want: ref.Number, At: ref})
	})
	return e, err
}

// topic feeds every subscriber of one answer.
type topic struct {
	hub    *streamHub
	spec   streamSpec
	cancel context.CancelFunc

	mu   sync.Mutex
	subs map[*subscriber]struct{}
	last *frame // the newest answer sent; nil before one, and after a reorg
	fail string // the last error sent, so a failing answer is not repeated
}

// run follows the chain's heads until the last subscriber leaves.
func (t *topic) run(ctx context.Context) {
	heads := t.hub.s.opts.Pins.Heads(t.spec.chain)
	if heads == nil {
		return
	}
	events := heads.Subscribe(ctx)
	var seen uint64 // the last block answered
	if r, _, ok := heads.Latest(); ok {
		t.at(ctx, r, time.Now())
		seen = r.Number
	}
	for ev := range events {
		now := time.Now()
		if ev.Kind == block.Reorg {
			t.reorg(ev, now)
			seen = min(seen, ev.Fork.Number)
		}
		t.between(ctx, seen, ev.Head.Number, now)
		t.at(ctx, ev.Head, now)
		seen = max(seen, ev.Head.Number)
	}
}

// between answers the blocks after seen and before head, which a feed
// that moved several blocks at once (a poll, an indexer's range) did not
// name: a change in one of them is sent too, at its own block, so a
// client sees every change, not only those at the heads the feed saw.
// Further than maxReplay behind, the topic goes straight to the head.
func (t *topic) between(ctx context.Context, seen, head uint64, made time.Time) {
	if seen == 0 || head <= seen+1 || head-seen > maxReplay {
		return
	}
	for n := seen + 1; n < head && ctx.Err() == nil; n++ {
		ref, err := t.hub.s.opts.Pins.BlockAt(ctx, t.spec.chain, n, t.hub.s.admitRead)
		if err != nil {
			return // the head's answer follows; this gap is skipped
		}
		t.at(ctx, ref, made)
	}
}

// reorg tells every subscriber that answers above the fork are void.
func (t *topic) reorg(ev block.Event, now time.Time) {
	data, _ := marshal(struct {
		Fork asOf `json:"fork"`
		Head asOf `json:"head"`
	}{asOf{ev.Fork.Number, ev.Fork.Hash, ev.Fork.Timestamp}, asOf{ev.Head.Number, ev.Head.Hash, ev.Head.Timestamp}})
	// BlockAt would name the orphaned blocks for a while (the gap above)
	t.hub.s.opts.Pins.ForgetAbove(t.spec.chain, ev.Fork.Number)
	t.mu.Lock()
	t.last = nil // the new branch's answer is sent, changed or not
	t.mu.Unlock()
	t.publish(&frame{kind: "reorg", ref: ev.Fork, data: data, made: now})
}

// at sends the answer at ref, unless it is the one last sent.
func (t *topic) at(ctx context.Context, ref block.Ref, made time.Time) {
	e, err := t.hub.answerAt(ctx, t.spec, ref)
	if ctx.Err() != nil {
		return
	}
	defer t.hub.answered.Add(1) // after what it sends is offered
	if err != nil {
		body := t.hub.s.errorJSON(t.spec.route, err)
		t.mu.Lock()
		same := t.fail == string(body)
		t.fail = string(body)
		t.mu.Unlock()
		if !same {
			// A GET's failure reaches the access log with its cause; a
			// stream's has no request line of its own, so it is logged
			// here (an internal error's cause is only in the log).
			t.hub.s.opts.Logger.Warn("stream answer failed", "route", t.spec.route, "block", ref.Number,
				"error", t.hub.s.opts.Secrets.Text(err.Error()))
			t.publish(&frame{kind: "error", data: body, made: made})
		}
		return
	}
	f := &frame{kind: "answer", ref: ref, data: e.body, made: made}
	t.mu.Lock()
	t.fail = ""
	if t.last != nil && (sameAnswer(t.last.data, f.data) || t.last.ref.Number >= f.ref.Number) {
		t.mu.Unlock()
		return // unchanged (or a late head): nothing to send
	}
	t.last = f
	t.mu.Unlock()
	t.hub.changed.Add(1)
	t.publish(f)
}

// publish offers f to every subscriber.
func (t *topic) publish(f *frame) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for sb := range t.subs {
		sb.offer(f, t.hub)
	}
}

// subscriber is one stream's client: at most one pending answer (or
// error) and one pending reorg, and a wake-up for its writer (shared by
// the subscriptions of one WebSocket).
type subscriber struct {
	wake chan struct{}

	mu    sync.Mutex
	reorg *frame
	next  *frame
	// sentTo is the block of the last answer written: an answer at or
	// below it (a snapshot older than a replay) is not written, unless a
	// reorg came between.
	sentTo uint64
}

func newSubscriber(wake chan struct{}) *subscriber { return &subscriber{wake: wake} }

// offer queues f, replacing what the subscriber has not taken (counted
// as dropped), and wakes its writer.
func (sb *subscriber) offer(f *frame, h *streamHub) {
	sb.mu.Lock()
	switch {
	case f.kind == "reorg":
		if sb.reorg == nil || f.ref.Number < sb.reorg.ref.Number {
			sb.reorg = f
		}
		if sb.next != nil {
			sb.next = nil // read above the fork, or replaced by the next
			h.dropped.Add(1)
		}
	default:
		if sb.next != nil {
			h.dropped.Add(1)
		}
		sb.next = f
	}
	sb.mu.Unlock()
	select {
	case sb.wake <- struct{}{}:
	default:
	}
}

// take returns the pending frames, in the order to write them.
func (sb *subscriber) take() []*frame {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	var out []*frame
	if sb.reorg != nil {
		out = append(out, sb.reorg)
		// the answer at the fork itself may follow (a feed that only
		// reverted names the fork as its head)
		sb.sentTo = sb.reorg.ref.Number - min(sb.reorg.ref.Number, 1)
		sb.reorg = nil
	}
	if f := sb.next; f != nil {
		sb.next = nil
		if f.kind != "answer" || f.ref.Number > sb.sentTo {
			out = append(out, f)
			if f.kind == "answer" {
				sb.sentTo = f.ref.Number
			}
		}
	}
	return out
}

// wrote records that an answer at n was written outside take (a replay).
func (sb *subscriber) wrote(n uint64) {
	sb.mu.Lock()
	sb.sentTo = max(sb.sentTo, n)
	sb.mu.Unlock()
}

// missed is what a client that last saw last (its Last-Event-ID) missed:
// the answers of the blocks after it that changed it, up to the head
// (upTo). ok is false, and the client gets the topic's snapshot instead,
// when its block is no longer on the chain, it is more than maxReplay
// blocks behind, or no head is known yet.
func (h *streamHub) missed(ctx context.Context, spec streamSpec, last block.Ref) (out []*frame, upTo uint64, ok bool) {
	heads := h.s.opts.Pins.Heads(spec.chain)
	if heads == nil {
		return nil, 0, false
	}
	head, _, known := heads.Latest()
	if !known || last.Number > head.Number || head.Number-last.Number > maxReplay {
		return nil, 0, false
	}
	now, err := h.s.opts.Pins.BlockAt(ctx, spec.chain, last.Number, h.s.admitRead)
	if err != nil || now.Hash != last.Hash {
		return nil, 0, false
	}
	prev, err := h.answerAt(ctx, spec, now)
	if err != nil {
		return nil, 0, false
	}
	for n := last.Number + 1; n <= head.Number; n++ {
		ref := head
		if n != head.Number {
			if ref, err = h.s.opts.Pins.BlockAt(ctx, spec.chain, n, h.s.admitRead); err != nil {
				return out, n - 1, true
			}
		}
		e, err := h.answerAt(ctx, spec, ref)
		if err != nil {
			return out, n - 1, true
		}
		if !sameAnswer(e.body, prev.body) {
			out = append(out, &frame{kind: "answer", ref: ref, data: e.body, made: time.Now()})
		}
		prev = e
	}
	return out, head.Number, true
}

// sameAnswer says two answers differ in nothing but the block they name:
// an object answer begins with its asOf (encodeAt), which moves every
// block and is no change of the answer.
func sameAnswer(a, b []byte) bool { return bytes.Equal(withoutAsOf(a), withoutAsOf(b)) }

// withoutAsOf is body after its asOf member (asOf holds no object, so
// its first closing brace ends it).
func withoutAsOf(body []byte) []byte {
	const prefix = `{"asOf":{`
	if !bytes.HasPrefix(body, []byte(prefix)) {
		return body
	}
	if i := bytes.IndexByte(body[len(prefix):], '}'); i >= 0 {
		return body[len(prefix)+i+1:]
	}
	return body
}
