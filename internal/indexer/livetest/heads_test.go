package livetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
)

// The embedded indexer is its chain's head feed: each block it commits is
// a new head (with the node's hash), and a 3-block reorg is one reorg
// event naming the newest block still on the chain, then the new
// branch's heads; pins are told the chain is fed.
func TestIndexerFeedsTheChainsHeads(t *testing.T) {
	w := newWorld(t)
	g := w.opened(t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := g.app.Pins.Heads(chainID).Subscribe(ctx)
	if !g.app.Pins.Feeding(chainID) {
		t.Fatal("pins do not know the indexed chain is fed")
	}
	g.run()
	until := func(what string, ok func(block.Event) bool) block.Event {
		t.Helper()
		for ev := range events { // the test's own deadline bounds the wait
			if ok(ev) {
				return ev
			}
		}
		t.Fatalf("no event: %s", what)
		return block.Event{}
	}
	p := w.p
	fork, err := p.Chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	until("the head at the fork", func(ev block.Event) bool {
		return ev.Kind == block.NewHead && ev.Head.Number == fork.Number.Uint64()
	})
	for range 3 {
		p.Chain.Commit()
	}
	orphaned := p.Chain.BlockNumber()
	until("the head before the reorg", func(ev block.Event) bool { return ev.Head.Number == orphaned })
	if err := p.Chain.Backend.Fork(fork.Hash()); err != nil {
		t.Fatal(err)
	}
	p.Chain.AdjustTime(time.Second) // the new branch's blocks differ from the orphaned ones
	for p.Chain.BlockNumber() <= orphaned {
		p.Chain.Commit()
	}
	ev := until("the reorg", func(ev block.Event) bool { return ev.Kind == block.Reorg })
	if ev.Fork.Number != fork.Number.Uint64() || !strings.EqualFold(ev.Fork.Hash, fork.Hash().Hex()) {
		t.Fatalf("reorg at %+v, want the fork %d %s", ev.Fork, fork.Number, fork.Hash().Hex())
	}
	head, err := p.Chain.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	until("the new branch's head", func(ev block.Event) bool {
		return ev.Head.Number == head.Number.Uint64() && strings.EqualFold(ev.Head.Hash, head.Hash().Hex())
	})
}
