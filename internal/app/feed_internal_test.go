package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
)

// bus is the shared tier's pub/sub between replicas in one process: a
// payload reaches every replica's handler (the sender's too, as Redis
// does). It stops delivering past limit messages, so a relay loop shows
// as a count instead of a test that never settles.
type bus struct {
	mu       sync.Mutex
	handlers []func(string)
	sent     int
	limit    int
}

func (b *bus) OnHeads(fn func(string)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.handlers = append(b.handlers, fn)
}

func (b *bus) PublishHead(_ context.Context, p []byte) error {
	b.mu.Lock()
	b.sent++
	if b.sent > b.limit {
		b.mu.Unlock()
		return nil
	}
	hs := append([]func(string){}, b.handlers...)
	b.mu.Unlock()
	for _, h := range hs {
		go h(string(p))
	}
	return nil
}

// oneChain is a replica's feed of one chain.
type oneChain struct{ h *block.Heads }

func (c oneChain) Chains() []uint64             { return []uint64{1} }
func (c oneChain) Heads(id uint64) *block.Heads { return c.h }

func ref(n uint64, branch byte) block.Ref {
	return block.Ref{Number: n, Hash: fmt.Sprintf("0x%062x%02x", n, branch), Timestamp: int64(n)}
}

// A head or a reorg one replica's feed finds crosses to the other once:
// the other applies it and does not send it back (a reorg used to bounce
// between two replicas for as long as they ran, each bounce a reorg event
// on every stream and an eviction pass over the cache).
func TestRelayedHeadsCrossTheFleetOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		b := &bus{limit: 50}
		var wg sync.WaitGroup
		a, other := &block.Heads{}, &block.Heads{}
		relayHeads(ctx, &wg, oneChain{a}, b)
		relayHeads(ctx, &wg, oneChain{other}, b)
		a.Publish(block.Event{Kind: block.NewHead, Head: ref(10, 0)})
		synctest.Wait()
		a.Publish(block.Event{Kind: block.Reorg, Head: ref(9, 1), Fork: ref(8, 0)})
		synctest.Wait()
		if got, _, _ := other.Latest(); got != ref(9, 1) {
			t.Errorf("the other replica's head %v, want the new branch's 9", got)
		}
		b.mu.Lock()
		sent := b.sent
		b.mu.Unlock()
		if sent != 2 {
			t.Errorf("%d messages on the bus for a head and a reorg, want 2", sent)
		}
		cancel()
		wg.Wait()
	})
}

// A chain whose poller cannot be made leaves nothing running: no newHeads
// follower dialling its WebSocket URL until shutdown. The probe is the
// wait group: with nothing started it is done at once; a follower started
// anyway keeps it open and dials the test server, whichever comes first.
func TestFailedFeedLeavesNothingDialling(t *testing.T) {
	dialled := make(chan struct{}, 1)
	var dials atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		dials.Add(1)
		select {
		case dialled <- struct{}{}:
		default:
		}
		http.Error(w, "no WebSocket here", http.StatusBadRequest)
	}))
	defer srv.Close()
	pins, err := block.New(nil, block.HeadAges{})
	if err != nil {
		t.Fatal(err)
	}
	const unserved = 5 // not among the pins: PollFeed fails
	a := &App{Pins: pins, wsURLs: map[uint64]string{unserved: "ws" + strings.TrimPrefix(srv.URL, "http")}}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	if err := a.startFeed(ctx, &wg, unserved); err == nil {
		t.Fatal("a feed started for a chain the pins do not serve")
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-dialled:
		t.Errorf("a failed feed left its newHeads follower dialling")
		cancel()
		<-done
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials after a failed feed, want 0", n)
	}
}
