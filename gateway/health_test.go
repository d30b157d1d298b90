package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// liveNode serves chain 42161 at head 7 and answers eth_chainId and
// eth_blockNumber; readiness asks it nothing else (its other reads are
// vocab.Chain's nil). A Graph Node chain's head feed is the subgraph's, so
// readiness still asks the node its head.
type liveNode struct{ vocab.Chain }

func (liveNode) CheckChainID(context.Context, uint64) error  { return nil }
func (liveNode) BlockNumber(context.Context) (uint64, error) { return 7, nil }

// metaAt is a subgraph whose `_meta` names block n.
type metaAt struct {
	vocab.Subgraph
	n uint64
}

func (m metaAt) Meta(context.Context) (subgraph.Meta, error) {
	return subgraph.Meta{Block: m.n}, nil
}

// A chain whose head feed (the pins' heads, published by its feed) has
// gone silent past its stall bound is not ready: /readyz answers 503 and
// names HEAD_FEED_STALLED, with the feed's head and age; while the feed
// is current it answers 200 with the feed's head as the chain head.
func TestReadyzNamesAStalledHeadFeed(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	svc := service.New(map[uint64]*vocab.Upstreams{42161: {Config: cfg.Chains[42161], Chain: liveNode{}, Subgraph: metaAt{n: 7}}})
	o := gateway.DefaultOptions(svc)
	at := &indexedAt{r: block.Ref{Number: 7, Hash: "0x07", Timestamp: 1}}
	var err error
	if o.Pins, err = block.New(map[uint64]block.Sources{42161: {Indexed: at, Headers: at}}, block.HeadAges{}); err != nil {
		t.Fatal(err)
	}
	o.ReadyTTL = time.Nanosecond
	o.Pins.MarkFed(42161)
	heads := o.Pins.Heads(42161)
	heads.Publish(block.Event{Kind: block.NewHead, Head: at.r})
	_, fedAt, _ := heads.Latest()
	now := fedAt
	svc.ReadHeads(o.Pins, func(uint64) time.Duration { return service.MinStallAfter }, func() time.Time { return now })
	srv, err := gateway.New(o)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Chains []service.ChainReadiness `json:"chains"`
	}
	rec := get(t, srv, gateway.PathReadyz)
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusOK || err != nil || body.Chains[0].ChainHead != 7 {
		t.Fatalf("current feed: %d %s", rec.Code, rec.Body)
	}
	now = fedAt.Add(service.MinStallAfter + time.Second)
	time.Sleep(time.Millisecond) // past ReadyTTL: the next probe is a new one
	rec = get(t, srv, gateway.PathReadyz)
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusServiceUnavailable || err != nil ||
		!slices.Equal(body.Chains[0].Problems, []string{"HEAD_FEED_STALLED"}) || body.Chains[0].HeadFeed.Hash != "0x07" || !body.Chains[0].HeadFeed.Stalled {
		t.Fatalf("stalled feed: %d %s", rec.Code, rec.Body)
	}
}
