package livetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// event is one stream event as a client saw it.
type event struct {
	kind   string // answer, reorg, error
	number uint64
	hash   string
	data   string
}

// stream collects one followed answer's events (SSE or WebSocket).
type stream struct {
	name string
	path string // the GET's path and query (without block)

	mu     sync.Mutex
	events []event
	wake   chan struct{}
}

func newStream(name, path string) *stream {
	return &stream{name: name, path: path, wake: make(chan struct{}, 1)}
}

func (s *stream) add(e event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *stream) snapshot() []event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]event(nil), s.events...)
}

// lastID is the id of the stream's last event ("" before one).
func (s *stream) lastID() string {
	ev := s.snapshot()
	if len(ev) == 0 {
		return ""
	}
	e := ev[len(ev)-1]
	return strconv.FormatUint(e.number, 10) + ":" + e.hash
}

func parseID(id string) (uint64, string) {
	n, h, _ := strings.Cut(id, ":")
	num, _ := strconv.ParseUint(n, 10, 64)
	return num, h
}

// followSSE reads path's event stream into s until ctx ends.
func followSSE(ctx context.Context, t *testing.T, base string, s *stream, lastID string) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+s.path, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	if resp.StatusCode != http.StatusOK {
		t.Errorf("%s: %d", s.name, resp.StatusCode)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "" && e.kind != "":
				s.add(e)
				e = event{}
			case strings.HasPrefix(line, "id: "):
				e.number, e.hash = parseID(line[4:])
			case strings.HasPrefix(line, "event: "):
				e.kind = line[7:]
			case strings.HasPrefix(line, "data: "):
				e.data += line[6:]
			}
		}
	}()
}

// followWS subscribes every stream on one WebSocket and reads its events
// into them until ctx ends.
func followWS(ctx context.Context, t *testing.T, base string, streams []*stream) {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+gateway.PathStream, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(1 << 24)
	byID := map[string]*stream{}
	for _, s := range streams {
		u, _ := url.Parse(s.path)
		params := map[string]string{}
		for k, v := range u.Query() {
			params[k] = v[0]
		}
		b, _ := json.Marshal(map[string]any{"op": "subscribe", "id": s.name, "path": u.Path, "params": params})
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		byID[s.name] = s
	}
	go func() {
		defer c.CloseNow()
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			var m struct {
				Op, ID, Event string
				Data          json.RawMessage
			}
			if json.Unmarshal(b, &m) != nil || byID[m.ID] == nil || (m.Op != "answer" && m.Op != "reorg" && m.Op != "error") {
				continue
			}
			n, h := parseID(m.Event)
			byID[m.ID].add(event{kind: m.Op, number: n, hash: h, data: string(m.Data)})
		}
	}()
}

// withoutAsOf drops an object answer's asOf (it names the block, which
// is no change of the answer).
func withoutAsOf(b string) string {
	if rest, ok := strings.CutPrefix(b, `{"asOf":{`); ok {
		if i := strings.IndexByte(rest, '}'); i >= 0 {
			return rest[i+1:]
		}
	}
	return b
}

// reference answers the GETs streams are checked against: another
// gateway, with its own cache, reading the same index through the first
// gateway's Graph Node face and the same node.
type reference struct {
	t    *testing.T
	p    *pt.Protocol
	h    http.Handler
	mu   sync.Mutex
	memo map[string]string
}

func (r *reference) at(path string, n uint64) string {
	key := path + "@" + strconv.FormatUint(n, 10) + ":" + canonical(r.t, r.p, n) // a reorg replaces what a number names
	r.mu.Lock()
	if b, ok := r.memo[key]; ok {
		r.mu.Unlock()
		return b
	}
	r.mu.Unlock()
	code, body := get(r.h, path+"&block="+strconv.FormatUint(n, 10))
	if code != http.StatusOK {
		r.t.Fatalf("reference GET %s at %d: %d %s", path, n, code, body)
	}
	r.mu.Lock()
	r.memo[key] = body
	r.mu.Unlock()
	return body
}

// canonical is block n's hash on the node now.
func canonical(t *testing.T, p *pt.Protocol, n uint64) string {
	h, err := p.Chain.Client().HeaderByNumber(context.Background(), new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatal(err)
	}
	return strings.ToLower(h.Hash().Hex())
}

// On the simulated EVM, mining a block every 100 ms for 50 blocks (swaps,
// purchases and empty blocks) then replacing the last 3 with a branch
// that swaps elsewhere: the strikes chain, a buyer's positions and the
// mark price, followed over SSE (the strikes chain's client reconnecting
// with Last-Event-ID halfway) and over one WebSocket, each
//   - sends answers equal, byte for byte, to a GET at the block their id
//     names (blocks still on the chain);
//   - loses nothing: at every block from the first to the head, the
//     latest answer at or before it is the GET's answer there, but where
//     the client had fallen behind and the hub skipped it to a newer
//     answer (counted as dropped; a loaded machine's writer may fall
//     behind a chain that changes the positions every block), and always
//     at the head;
//   - sends nothing for a block that changed nothing (no two answers in
//     a row alike, but the first after a reorg, or across a skip);
//   - sends a reorg event naming the fork (or a block below it still on
//     the chain, see check), then the new branch's answers.
func TestStreamsFollowTheChain(t *testing.T) {
	w := newWorld(t)
	w.history()
	p := w.p
	cfg := w.config("", t.TempDir())
	cfg.Streams = true
	g := w.openedWith(cfg)
	g.run()
	g.synced(t, p.Chain.BlockNumber())
	srv := httptest.NewServer(g.app.Server)
	t.Cleanup(srv.Close)
	t.Cleanup(g.app.Server.CloseStreams)
	refApp, err := app.New(app.Options{Config: w.config(srv.URL+gateway.PathSubgraphs+strconv.FormatUint(chainID, 10), t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	refApp.Pins.SetHeadAges(block.HeadAges{}) // no header remembered across the reorg
	ref := &reference{t: t, p: p, h: refApp.Server, memo: map[string]string{}}
	buyer := w.users[1]
	paths := map[string]string{
		"strikes":   fmt.Sprintf("%s?chainId=%d&optionMarket=%s&callsReach=20&putsReach=20", gateway.PathStrikesChain, chainID, p.Market.Hex()),
		"positions": fmt.Sprintf("%s?chainId=%d&user=%s&optionMarket=%s&first=100&skip=0", gateway.PathPurchasePositions, chainID, buyer.Addr.Hex(), p.Market.Hex()),
		"markprice": fmt.Sprintf("%s?chainId=%d&optionMarket=%s", gateway.PathMarkPrice, chainID, p.Market.Hex()),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sse, ws []*stream
	for _, name := range []string{"strikes", "positions", "markprice"} {
		s := newStream(name, paths[name])
		sse = append(sse, s)
		ws = append(ws, newStream(name, paths[name]))
	}
	strikesCtx, dropStrikes := context.WithCancel(ctx)
	followSSE(strikesCtx, t, srv.URL, sse[0], "")
	for _, s := range sse[1:] {
		followSSE(ctx, t, srv.URL, s, "")
	}
	followWS(ctx, t, srv.URL, ws)
	all := append(append([]*stream{}, sse...), ws...)
	first := p.Chain.BlockNumber()
	waitCurrent(t, ref, all, first, false)

	mine(t, w, 50, func(i int) {
		switch i {
		case 20:
			dropStrikes()
		case 28:
			followSSE(ctx, t, srv.URL, sse[0], sse[0].lastID())
		}
	})
	g.synced(t, p.Chain.BlockNumber())
	waitCurrent(t, ref, all, p.Chain.BlockNumber(), false)

	fork := p.Chain.BlockNumber() - 3
	orphaned := p.Chain.BlockNumber()
	forkHeader, err := p.Chain.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(fork))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Chain.Backend.Fork(forkHeader.Hash()); err != nil {
		t.Fatal(err)
	}
	_, tick := p.Slot0(p.Pool)
	if _, err := p.SwapToTick(w.users[2], p.Fee, tick-7*p.TickSpacing); err != nil {
		t.Fatal(err)
	}
	for p.Chain.BlockNumber() <= orphaned {
		p.Chain.Commit()
	}
	head := p.Chain.BlockNumber()
	g.synced(t, head)
	waitCurrent(t, ref, all, head, true)

	gaps := 0
	for _, s := range all {
		gaps += check(t, p, ref, s, first, head, fork)
	}
	// A loaded machine may keep a stream's writer from taking an answer
	// before the next: the client then skips to the newer one, as
	// documented, and the hub counts the one skipped. A change missed
	// without such a skip was lost by the hub.
	if dropped := g.app.Server.StreamCounts().Dropped; int64(gaps) > dropped {
		t.Errorf("%d changes missed (or answers repeated) across the streams, but only %d answers were skipped for clients behind: the hub lost a change", gaps, dropped)
	}
}

// mine mines n blocks, one every 100 ms: a swap every tenth (alternately
// a spacing up and down), a purchase by the buyer every tenth, empty
// blocks otherwise; hook(i) runs before block i.
func mine(t *testing.T, w *world, n int, hook func(i int)) {
	p := w.p
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	_, at := p.Slot0(p.Pool)
	for i := range n {
		<-tick.C
		hook(i)
		switch i % 10 {
		case 3:
			at += p.TickSpacing * (1 - 2*(i/10%2))
			if _, err := p.SwapToTick(w.users[2], p.Fee, at); err != nil {
				t.Fatal(err)
			}
		case 7:
			info := p.RangeInfo(w.rPut)
			free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
			if _, _, err := p.Buy(w.users[1], pt.Option{IsCall: false, TickLower: w.rPut.TickLower, TickUpper: w.rPut.TickUpper, TTL: 3600,
				Legs: []pt.Leg{{Range: w.rPut, Liquidity: free.Div(free, big.NewInt(20))}}}); err != nil {
				t.Fatal(err)
			}
		default:
			p.Chain.Commit()
		}
	}
}

// waitCurrent waits until every stream's last event is the answer at
// head as the reference gives it (after a reorg event, when reorg): the
// current answer is never skipped, so one that does not come within a
// generous deadline was lost.
func waitCurrent(t *testing.T, ref *reference, streams []*stream, head uint64, reorg bool) {
	t.Helper()
	const deadline = 2 * time.Minute
	for _, s := range streams {
		want := withoutAsOf(ref.at(s.path, head))
		timeout := time.NewTimer(deadline)
		defer timeout.Stop()
		for {
			ev := s.snapshot()
			seen := !reorg
			for _, e := range ev {
				seen = seen || e.kind == "reorg"
			}
			if n := len(ev); n > 0 && seen && ev[n-1].kind == "answer" && withoutAsOf(ev[n-1].data) == want {
				break
			}
			select {
			case <-s.wake:
			case <-timeout.C:
				t.Fatalf("%s: waited %s for the answer at the head %d: the current answer was lost", s.name, deadline, head)
			}
		}
	}
}

// check holds one stream's events to what a client is promised (the
// test's comment) over blocks first to head, with a reorg at fork. It
// returns the stream's gaps: the places where the client missed a change
// (between two answers it got, or after its last, some block's GET is not
// the answer it held) or got an answer equal to the one before (not the
// first after a reorg). A client is allowed them only where the hub skipped
// it to a newer answer because it had fallen behind (docs/api.md,
// Streams): each needs an answer the hub counted as dropped.
func check(t *testing.T, p *pt.Protocol, ref *reference, s *stream, first, head, fork uint64) (gaps int) {
	t.Helper()
	valid := map[uint64]string{}
	repeat := map[uint64]bool{} // answers equal to the one before
	prev, afterReorg, sawReorg := "", false, false
	var low uint64
	for _, e := range s.snapshot() {
		switch e.kind {
		case "error":
			t.Errorf("%s: error event at %d: %s", s.name, e.number, e.data)
		case "reorg":
			// The fork named is the newest block the index holds that is
			// still on the chain: the fork itself, or below it when the
			// index took the blocks up to the old head as one range (a
			// loaded machine) and holds none of those between.
			if e.number > fork || e.hash != canonical(t, p, e.number) {
				t.Errorf("%s: reorg at %d:%s, want a block still on the chain at or below the fork %d", s.name, e.number, e.hash, fork)
			}
			sawReorg, afterReorg = true, true
			for n := range valid {
				if n > e.number {
					delete(valid, n)
				}
			}
		case "answer":
			if e.hash == canonical(t, p, e.number) && e.data != ref.at(s.path, e.number) {
				t.Errorf("%s: the answer at %d differs from the GET there:\n%.300s\n%.300s", s.name, e.number, e.data, ref.at(s.path, e.number))
			}
			content := withoutAsOf(e.data)
			if !afterReorg && content == prev {
				repeat[e.number] = true
				gaps++
			}
			afterReorg, prev = false, content
			valid[e.number] = content
			if low == 0 {
				low = e.number
			}
		}
	}
	if !sawReorg {
		t.Errorf("%s: no reorg event", s.name)
	}
	if low == 0 || low > first {
		t.Fatalf("%s: first answer at %d, the head was %d", s.name, low, first)
	}
	changes, missed := 0, false
	var cur string
	for b := low; b <= head; b++ {
		if c, ok := valid[b]; ok {
			if missed && !repeat[b] {
				gaps++ // a change missed before this answer
			}
			cur, missed = c, false
			changes++
		}
		missed = missed || cur != withoutAsOf(ref.at(s.path, b))
	}
	if missed {
		gaps++
	}
	if cur != withoutAsOf(ref.at(s.path, head)) {
		t.Errorf("%s: at the head %d the client holds an answer that is not the GET's there (a change was lost)", s.name, head)
	}
	t.Logf("%s: %d answers over blocks %d to %d, %d gaps", s.name, changes, low, head, gaps)
	return gaps
}
