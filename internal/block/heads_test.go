package block

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func ref(n uint64) Ref { return Ref{Number: n, Hash: hashOf(n), Timestamp: 1_700_000_000 + int64(n)} }

// A subscriber that takes nothing while three heads and a reorg are
// published holds one event: the newest head, with the reorg folded in at
// its lowest fork; one that keeps up sees each.
func TestHeadsSlowSubscriberSkipsToNewestKeepingReorg(t *testing.T) {
	var h Heads
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := h.Subscribe(ctx)
	fast := h.Subscribe(ctx)
	var got []Event
	for _, ev := range []Event{{Kind: NewHead, Head: ref(10)}, {Kind: Reorg, Head: ref(9), Fork: ref(8)}, {Kind: NewHead, Head: ref(11)}, {Kind: Reorg, Head: ref(12), Fork: ref(9)}} {
		if !h.Publish(ev) {
			t.Fatalf("Publish(%+v) told no one", ev)
		}
		got = append(got, <-fast)
	}
	if len(got) != 4 || got[1].Kind != Reorg || got[2].Head.Number != 11 {
		t.Fatalf("the subscriber that kept up saw %+v", got)
	}
	ev := <-slow
	if ev.Kind != Reorg || ev.Head != ref(12) || ev.Fork != ref(8) {
		t.Fatalf("the slow subscriber got %+v, want a reorg at fork 8 with head 12", ev)
	}
	if r, _, ok := h.Latest(); !ok || r != ref(12) {
		t.Fatalf("Latest = %+v %v", r, ok)
	}
}

// A head already held confirms it (no event, Latest's time moves); an
// older one, or another hash at the same number, is ignored; a cancelled
// subscription's channel is closed and forgotten.
func TestHeadsIgnoresLateHeads(t *testing.T) {
	var h Heads
	ctx, cancel := context.WithCancel(context.Background())
	ch := h.Subscribe(ctx)
	h.Publish(Event{Kind: NewHead, Head: ref(5)})
	<-ch
	_, at1, _ := h.Latest()
	other := ref(5)
	other.Hash = hashOf(99)
	for _, ev := range []Event{{Kind: NewHead, Head: ref(5)}, {Kind: NewHead, Head: ref(4)}, {Kind: NewHead, Head: other}, {Kind: NewHead, Head: Ref{Number: 6}}} {
		if h.Publish(ev) {
			t.Errorf("Publish(%+v) told subscribers", ev)
		}
	}
	if _, at2, _ := h.Latest(); at2.Before(at1) {
		t.Error("confirming the head moved its time back")
	}
	select {
	case ev := <-ch:
		t.Fatalf("event %+v for a head already held", ev)
	default:
	}
	cancel()
	if _, open := <-ch; open {
		t.Fatal("the channel of a cancelled subscription is open")
	}
	if n := h.Subscribers(); n != 0 {
		t.Fatalf("%d subscribers after cancel", n)
	}
}

// chainNode is a node and subgraph whose chain can be replaced above a
// block (a reorg): `_meta` names head, HeaderAt the node's hashes.
type chainNode struct {
	mu     sync.Mutex
	head   uint64
	branch map[uint64]uint64 // block -> branch it was mined on
	fail   bool
	seen   Seen
}

func (c *chainNode) at(n uint64) Ref {
	r := ref(n)
	if b := c.branch[n]; b != 0 {
		r.Hash = hashOf(n + b<<32)
	}
	return r
}

func (c *chainNode) IndexedHead(context.Context) (Ref, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fail {
		return Ref{}, errors.New("down")
	}
	return c.at(c.head), nil
}
func (c *chainNode) Seen() *Seen { return &c.seen }
func (c *chainNode) Header(ctx context.Context, _ string) (Ref, error) {
	return c.IndexedHead(ctx)
}
func (c *chainNode) HeaderAt(_ context.Context, n uint64) (Ref, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at(n), nil
}

// The poller publishes each new head once, nothing for a head it has
// published or a failed read, and a reorg naming the newest block it
// published that the node still has.
func TestPollerPublishesHeadsAndReorgs(t *testing.T) {
	node := &chainNode{head: 10, branch: map[uint64]uint64{}}
	p := &Poller{Indexed: node, Headers: node}
	var h Heads
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := h.Subscribe(ctx)
	poll := func() { p.round(ctx, &h, time.Second) }
	next := func() (Event, bool) {
		select {
		case ev := <-ch:
			return ev, true
		default:
			return Event{}, false
		}
	}
	for n := uint64(10); n <= 13; n++ {
		node.head = n
		poll()
		if ev, ok := next(); !ok || ev.Kind != NewHead || ev.Head != ref(n) {
			t.Fatalf("head %d: %+v %v", n, ev, ok)
		}
	}
	poll()
	node.fail = true
	poll()
	node.fail = false
	if ev, ok := next(); ok {
		t.Fatalf("an unchanged head or a failed read published %+v", ev)
	}
	// blocks 11-13 replaced; the new branch's head is 14
	node.mu.Lock()
	for n := uint64(11); n <= 14; n++ {
		node.branch[n] = 1
	}
	node.head = 14
	node.mu.Unlock()
	poll()
	ev, ok := next()
	if !ok || ev.Kind != Reorg || ev.Fork != ref(10) || ev.Head != node.at(14) {
		t.Fatalf("after a 3-block reorg: %+v %v, want a reorg at fork 10 to the new 14", ev, ok)
	}
	node.head = 15
	node.branch[15] = 1
	poll()
	if ev, ok := next(); !ok || ev.Kind != NewHead || ev.Head != node.at(15) {
		t.Fatalf("the new branch's next head: %+v %v", ev, ok)
	}
}

// With a feed, an IndexedHead answer pins to the head it last published
// without asking `_meta`; once the feed stops, pins ask again.
func TestIndexedHeadPinsToTheFeed(t *testing.T) {
	g := &gatedIndexer{release: make(chan struct{}), answer: ref(3)}
	close(g.release)
	p := newPins(t, g, &headers{head: ref(9)}, HeadAges{Fresh: time.Hour, Strikes: time.Hour, Quotes: time.Hour})
	p.Heads(1).Publish(Event{Kind: NewHead, Head: ref(7)})
	if r := pinOnce(t, p, false); r != ref(3) {
		t.Fatalf("unfed chain pinned to %+v, want `_meta`'s 3", r)
	}
	p.MarkFed(1)
	before := g.count()
	if r := pinOnce(t, p, false); r != ref(7) || g.count() != before {
		t.Fatalf("fed chain pinned to %+v after %d `_meta` reads, want the feed's 7 and none", r, g.count()-before)
	}
}
