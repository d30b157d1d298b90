package subgraph_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/queries"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The client remembers every indexed head it reads, stamped when it asked:
// `_meta` (readiness probes), the first page that resolves an answer's pin,
// the strikes document's unpinned `head`. A page asked at the pin's block
// by number takes the pin's hash and time, which Graph Node does not give.
func TestClientRemembersTheHeadsItReads(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	head := f.Subgraph.Store.Head()
	newClient := func(docs queries.Set) *subgraph.Client {
		return testenv.NewSubgraph(t, "http://sg", subgraph.Options{Docs: docs, HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}})
	}
	sawHead := func(what string, c *subgraph.Client, asked time.Time) {
		t.Helper()
		r, at, ok := c.Seen().Last()
		if !ok || r.Number != head.Number || r.Hash != head.Hash || r.Timestamp != int64(head.Timestamp) || at.Before(asked) {
			t.Errorf("%s: the client saw %+v at %v (%v), want %+v asked after %v", what, r, at, ok, head, asked)
		}
	}
	ctx := context.Background()

	c, asked := newClient(nil), time.Now()
	if _, err := c.Meta(ctx); err != nil {
		t.Fatal(err)
	}
	sawHead("Meta", c, asked)
	if r, err := c.IndexedHead(ctx); err != nil || r.Number != head.Number || r.Hash != head.Hash {
		t.Errorf("IndexedHead: %+v %v", r, err)
	}

	c, asked = newClient(nil), time.Now()
	pctx, pin := block.With(ctx, 0)
	if _, meta, err := c.OptionMarkets(pctx); err != nil || meta.Block != head.Number || meta.Hash != head.Hash {
		t.Fatalf("a first page at no block: %+v %v", meta, err)
	}
	if r, ok := pin.Resolved(); !ok || r.Number != head.Number {
		t.Errorf("the first page resolved the pin to %+v (%v), want the head", r, ok)
	}
	sawHead("the first page", c, asked)

	c, asked = newClient(nil), time.Now()
	pctx, pin = block.With(ctx, 0)
	pin.Resolve(block.Ref{Number: head.Number, Hash: "0xpinned", Timestamp: 5})
	q := subgraph.StrikesQuery{Pools: []common.Address{scs[0].Market.PrimePool}, TickLowerMin: -300000, TickLowerMax: 0}
	if _, _, meta, err := c.Strikes(pctx, q); err != nil || meta.Block != head.Number || meta.Hash != "0xpinned" || meta.Timestamp != 5 {
		t.Fatalf("strikes at the pin's block: %+v %v, want the pin's hash and time", meta, err)
	}
	sawHead("the strikes document's head", c, asked)
}

// A page read at another block than its answer's (a replacement document
// without $block reads the head) keeps the block it was read at, so the
// gateway can refuse the answer instead of naming a block its subgraph
// half is not at.
func TestPageAtAnotherBlockKeepsItsOwn(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	head := f.Subgraph.Store.Head()
	docs := queries.Embedded()
	d := docs[queries.OptionMarkets]
	d.Text = strings.NewReplacer(", $block: Block_height", "", "(block: $block)", "", "block: $block, ", "").Replace(d.Text)
	if strings.Contains(d.Text, "$block") {
		t.Fatal("the document still declares $block")
	}
	docs[queries.OptionMarkets] = d
	c := testenv.NewSubgraph(t, "http://sg", subgraph.Options{Docs: docs, HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}})
	ctx, pin := block.With(context.Background(), head.Number-1)
	pin.Resolve(block.Ref{Number: head.Number - 1, Hash: "0xasked"})
	if _, meta, err := c.OptionMarkets(ctx); err != nil || meta.Block != head.Number || meta.Hash == "0xasked" {
		t.Fatalf("%+v %v, want the head's block, not the pin's", meta, err)
	}
}
