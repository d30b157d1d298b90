package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// headSource is an index that announces its heads (internal/indexer's
// OnHead): after each commit, and after a reorg's revert.
type headSource interface {
	OnHead(fn func(head graphnode.Block, reverted bool))
}

// feedIndexes makes each embedded index the head feed of its chain: what
// it commits is a new head, what it reverts to a reorg's fork.
func (w *wired) feedIndexes() {
	for id, idx := range w.indexes {
		src, ok := idx.(headSource)
		heads := w.pins.Heads(id)
		if !ok || heads == nil {
			continue
		}
		src.OnHead(func(b graphnode.Block, reverted bool) {
			r := block.Ref{Number: b.Number, Hash: b.Hash, Timestamp: int64(b.Timestamp)}
			if reverted {
				heads.Publish(block.Event{Kind: block.Reorg, Head: r, Fork: r})
				return
			}
			heads.Publish(block.Event{Kind: block.NewHead, Head: r})
		})
		w.pins.MarkFed(id)
	}
}

// readHeads makes readiness read each fed chain's head from its feed,
// stalled past service.StallAfter of the feed's period: the embedded
// indexer confirms its head every indexPoll, a Graph Node chain's poller
// every headPoll.
func (w *wired) readHeads(headPoll, indexPoll time.Duration) {
	modes := w.modes
	w.svc.ReadHeads(w.pins, func(id uint64) time.Duration {
		if modes[id] == ModeIndexed {
			return service.StallAfter(indexPoll)
		}
		return service.StallAfter(headPoll)
	}, nil)
}

// RunFeeds runs, with streams on, the head feed of each chain served by a
// Graph Node (a poller of its `_meta`, every CLAMM_HEAD_POLL), the
// gateway's reaction to reorgs, and, with a shared Redis, the relay that
// moves every replica's heads together. wait returns when all have
// stopped after ctx ends. With streams off it runs nothing: no upstream
// sees a read it would not see without streams.
func (a *App) RunFeeds(ctx context.Context) (wait func()) {
	var wg sync.WaitGroup
	if a.Server == nil || !a.streams {
		return wg.Wait
	}
	for _, id := range a.Pins.Chains() {
		if a.Modes[id] != ModeLive {
			continue // an indexed chain's index announces its own heads
		}
		_ = a.startFeed(ctx, &wg, id)
	}
	wg.Go(func() { a.Server.FollowHeads(ctx) })
	if a.Shared != nil {
		relayHeads(ctx, &wg, a.Pins, a.Shared)
	}
	return wg.Wait
}

// startFeed starts chainID's poller and, with a WebSocket RPC URL, the
// newHeads follower that wakes it: the follower only once the poller is
// made, so a chain whose feed fails leaves nothing dialling the socket
// until shutdown for a poller that will never read a wake.
func (a *App) startFeed(ctx context.Context, wg *sync.WaitGroup, chainID uint64) error {
	url := a.wsURLs[chainID]
	var wake chan struct{}
	if url != "" {
		wake = make(chan struct{}, 1)
	}
	feed, err := a.Pins.PollFeed(chainID, a.headPoll, wake)
	if err != nil {
		return err
	}
	if url != "" {
		wg.Go(func() { wakeOnNewHeads(ctx, url, wake) })
	}
	wg.Go(func() { _ = a.Pins.Follow(ctx, chainID, feed) })
	return nil
}

// wakeOnNewHeads follows the node's newHeads over its WebSocket RPC URL
// and wakes the chain's poller at each, dialling again (after a pause
// that doubles up to a minute) when the socket fails: meanwhile the
// poller's own period keeps the feed going.
func wakeOnNewHeads(ctx context.Context, url string, wake chan<- struct{}) {
	pause := time.Second
	for ctx.Err() == nil {
		began := time.Now()
		_ = chain.NewHeads(ctx, url, func(block.Ref) {
			select {
			case wake <- struct{}{}:
			default: // a round is already asked for
			}
		})
		if time.Since(began) > time.Minute {
			pause = time.Second // it ran a while: a fresh failure
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Minute)
	}
}

// headBus is the shared tier's pub/sub of heads (redistier.Tier).
type headBus interface {
	PublishHead(ctx context.Context, payload []byte) error
	OnHeads(fn func(payload string))
}

// wireHead is a head event as replicas exchange it over Redis.
type wireHead struct {
	From  string    `json:"from"` // the replica that saw it (its own are not applied twice)
	Chain uint64    `json:"chain"`
	Kind  string    `json:"kind"` // "head" or "reorg"
	Head  block.Ref `json:"head"`
	Fork  block.Ref `json:"fork"`
}

// chainHeads is each served chain's head feed (block.Pins).
type chainHeads interface {
	Chains() []uint64
	Heads(chainID uint64) *block.Heads
}

// relayHeads publishes each chain's heads to the other replicas and
// applies theirs here, so every replica's streams move at the first
// replica's head: the shared tier then gives one fill per key and block
// across the fleet. A head from Redis is checked as any upstream's is
// (Ref.Check); one that fails is dropped. What is applied from Redis is
// marked Relayed and not published again: only a replica's own feed's
// heads leave it.
func relayHeads(ctx context.Context, wg *sync.WaitGroup, pins chainHeads, bus headBus) {
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	self := hex.EncodeToString(idb[:])
	bus.OnHeads(func(p string) {
		var m wireHead
		if json.Unmarshal([]byte(p), &m) != nil || m.From == self || m.Head.Check(0) != nil {
			return
		}
		heads := pins.Heads(m.Chain)
		if heads == nil {
			return
		}
		ev := block.Event{Kind: block.NewHead, Head: m.Head, Relayed: true}
		if m.Kind == block.Reorg.String() {
			if m.Fork.Check(0) != nil && m.Fork.Number != 0 {
				return
			}
			ev = block.Event{Kind: block.Reorg, Head: m.Head, Fork: m.Fork, Relayed: true}
		}
		heads.Publish(ev)
	})
	for _, id := range pins.Chains() {
		events := pins.Heads(id).Subscribe(ctx)
		wg.Go(func() {
			for ev := range events {
				if ev.Relayed {
					continue
				}
				b, err := json.Marshal(wireHead{From: self, Chain: id, Kind: ev.Kind.String(), Head: ev.Head, Fork: ev.Fork})
				if err == nil {
					_ = bus.PublishHead(ctx, b)
				}
			}
		})
	}
}
