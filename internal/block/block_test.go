package block

import (
	"context"
	"errors"
	"testing"
)

// One claimant per pin, and only of the kind the answer says resolves it;
// the first resolution stands; waiters get the block, the claimant's
// error, or their own context's end.
func TestPin(t *testing.T) {
	ctx, p := With(context.Background(), 0)
	if From(ctx) != p || From(context.Background()) != nil || From(Without(ctx)) != nil {
		t.Fatal("From does not find the pin it was given, or finds one where there is none")
	}
	p.ResolvedBy(Subgraph)
	if p.Claim(Anyone) {
		t.Error("a chain read claimed a pin the subgraph resolves")
	}
	if !p.Claim(Subgraph) || p.Claim(Subgraph) {
		t.Error("the subgraph's claim is not granted exactly once")
	}
	if _, ok := p.Resolved(); ok {
		t.Error("resolved before Resolve")
	}
	p.Resolve(Ref{Number: 7, Hash: "0x07", Timestamp: 70})
	p.Resolve(Ref{Number: 8})
	if r, err := p.Wait(ctx); err != nil || r.Number != 7 || r.Hash != "0x07" {
		t.Errorf("Wait: %+v %v, want block 7", r, err)
	}
	if Known(ctx, "latest") != "0x7" || Known(context.Background(), "latest") != "latest" {
		t.Errorf("Known: %s", Known(ctx, "latest"))
	}

	_, failed := With(context.Background(), 0)
	boom := errors.New("subgraph down")
	failed.Fail(boom)
	if _, err := failed.Wait(context.Background()); !errors.Is(err, boom) {
		t.Errorf("a failed pin's waiter got %v", err)
	}

	_, open := With(context.Background(), 0)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := open.Wait(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose context ended got %v", err)
	}

	asked, _ := With(context.Background(), 12)
	if Known(asked, "latest") != "0xc" {
		t.Errorf("a block asked for is known before any read: %s", Known(asked, "latest"))
	}
}
