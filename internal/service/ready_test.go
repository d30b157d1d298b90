package service_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// node is a chain whose head is head (0: it cannot say) and that serves
// chain id.
type node struct {
	vocab.Chain
	head, id uint64
	down     bool // eth_chainId fails too
}

func (n node) BlockNumber(context.Context) (uint64, error) {
	if n.head == 0 {
		return 0, problem.New(problem.RPCUnavailable, "down")
	}
	return n.head, nil
}

func (n node) CheckChainID(_ context.Context, want uint64) error {
	if n.down {
		return problem.New(problem.RPCUnavailable, "down")
	}
	if n.id != want {
		return problem.New(problem.RPCWrongChain, "chain %d", n.id)
	}
	return nil
}

// indexed is a subgraph that has indexed up to its block (0: it cannot
// say).
type indexed struct {
	vocab.Subgraph
	block uint64
}

func (i indexed) Meta(context.Context) (subgraph.Meta, error) {
	if i.block == 0 {
		return subgraph.Meta{}, problem.New(problem.SubgraphUnavailable, "down")
	}
	return subgraph.Meta{Block: i.block}, nil
}

// Readiness asks the chain's node its head and chain id and the subgraph
// its indexed block: a chain is ready only when all three answer, the node
// serves the configured chain and the subgraph is within the lag bound.
func TestReadinessAsksTheNodeAndTheSubgraph(t *testing.T) {
	cfg := config.Default()
	for _, c := range []struct {
		name  string
		node  node
		meta  uint64
		ready bool
	}{
		{"in step", node{head: 100, id: 42161}, 95, true},
		{"lagging", node{head: 1000, id: 42161}, 95, false},
		{"no head", node{id: 42161}, 95, false},
		{"no subgraph block", node{head: 100, id: 42161}, 0, false},
		{"another chain", node{head: 100, id: 1}, 95, false},
	} {
		up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: c.node, Subgraph: indexed{block: c.meta}}
		ready, chains := service.New(map[uint64]*vocab.Upstreams{42161: up}).Readiness(context.Background(), 500)
		if ready != c.ready || len(chains) != 1 || chains[0].Ready != c.ready {
			t.Errorf("%s: ready %v %+v, want %v", c.name, ready, chains, c.ready)
		}
	}
}

// A node that is down fails both reads readiness asks it (its chain id
// and its head) the same way: the chain's problems name RPC_UNAVAILABLE
// once, not once per read.
func TestReadinessNamesEachProblemOnce(t *testing.T) {
	cfg := config.Default()
	up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: node{down: true}, Subgraph: indexed{block: 95}}
	_, chains := service.New(map[uint64]*vocab.Upstreams{42161: up}).Readiness(context.Background(), 500)
	if len(chains) != 1 || !slices.Equal(chains[0].Problems, []string{"RPC_UNAVAILABLE"}) {
		t.Errorf("problems %+v, want RPC_UNAVAILABLE once", chains)
	}
}

// counting is a node that counts the heads readiness asks it.
type counting struct {
	node
	asked *atomic.Int64
}

func (c counting) BlockNumber(ctx context.Context) (uint64, error) {
	c.asked.Add(1)
	return c.node.BlockNumber(ctx)
}

// feeds are chains' head feeds as block.Pins has them.
type feeds map[uint64]*block.Heads

func (f feeds) Feeding(id uint64) bool       { return f[id] != nil }
func (f feeds) Heads(id uint64) *block.Heads { return f[id] }

// A chain the gateway indexes, with a head feed, takes its head from the
// feed (number, hash, age on the readiness clock) and does not ask the
// node's eth_blockNumber;
// the head follows the feed, and a feed silent past its stall bound makes
// the chain not ready naming HEAD_FEED_STALLED. A chain without a feed
// asks the node as before.
func TestReadinessFollowsTheHeadFeed(t *testing.T) {
	cfg := config.Default()
	asked := &atomic.Int64{}
	up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: counting{node{head: 5000, id: 42161}, asked}, Subgraph: indexed{block: 101},
		Indexing: func() vocab.Indexing { return vocab.Indexing{State: vocab.IndexingSynced, Block: 101, ChainHead: 101} }}
	svc := service.New(map[uint64]*vocab.Upstreams{42161: up})
	var heads block.Heads
	heads.Publish(block.Event{Kind: block.NewHead, Head: block.Ref{Number: 100, Hash: "0x64"}})
	_, at, _ := heads.Latest()
	now := at.Add(time.Second)
	bound := service.StallAfter(time.Second)
	svc.ReadHeads(feeds{42161: &heads}, func(uint64) time.Duration { return bound }, func() time.Time { return now })
	ready, chains := svc.Readiness(context.Background(), 500)
	if f := chains[0].HeadFeed; !ready || chains[0].ChainHead != 100 || f == nil || f.Hash != "0x64" || f.AgeMs != 1000 || f.Stalled {
		t.Fatalf("fed head 100: ready %v %+v %+v", ready, chains, f)
	}
	heads.Publish(block.Event{Kind: block.NewHead, Head: block.Ref{Number: 101, Hash: "0x65"}})
	_, at, _ = heads.Latest()
	now = at
	if ready, chains = svc.Readiness(context.Background(), 500); !ready || chains[0].ChainHead != 101 || chains[0].HeadFeed.Hash != "0x65" || chains[0].LagBlocks != 0 {
		t.Fatalf("fed head 101: ready %v %+v", ready, chains)
	}
	now = at.Add(bound + time.Millisecond)
	ready, chains = svc.Readiness(context.Background(), 500)
	if ready || !chains[0].HeadFeed.Stalled || !slices.Equal(chains[0].Problems, []string{"HEAD_FEED_STALLED"}) {
		t.Fatalf("stalled feed: ready %v %+v", ready, chains)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("the node was asked its head %d times with a feed running", n)
	}
	svc.ReadHeads(feeds{}, func(uint64) time.Duration { return bound }, nil)
	if ready, chains = svc.Readiness(context.Background(), 500); ready || chains[0].ChainHead != 5000 || chains[0].HeadFeed != nil || asked.Load() != 1 {
		t.Fatalf("no feed: ready %v %+v, node asked %d times", ready, chains, asked.Load())
	}
}

// On a Graph Node chain the head feed is the subgraph's _meta head: the
// node is still asked for the chain head, so a subgraph whose _meta keeps
// confirming a block far behind the node is lagging, not ready.
func TestReadinessOfAGraphNodeChainStillMeasuresTheLag(t *testing.T) {
	cfg := config.Default()
	asked := &atomic.Int64{}
	up := &vocab.Upstreams{Config: cfg.Chains[42161], Chain: counting{node{head: 5000, id: 42161}, asked}, Subgraph: indexed{block: 101}}
	svc := service.New(map[uint64]*vocab.Upstreams{42161: up})
	var heads block.Heads
	heads.Publish(block.Event{Kind: block.NewHead, Head: block.Ref{Number: 101, Hash: "0x65"}})
	_, at, _ := heads.Latest()
	svc.ReadHeads(feeds{42161: &heads}, func(uint64) time.Duration { return time.Minute }, func() time.Time { return at })
	ready, chains := svc.Readiness(context.Background(), 500)
	c := chains[0]
	if ready || c.ChainHead != 5000 || c.LagBlocks != 4899 || c.HeadFeed == nil || c.HeadFeed.Block != 101 ||
		!slices.Equal(c.Problems, []string{"SUBGRAPH_LAGGING"}) || asked.Load() != 1 {
		t.Fatalf("a subgraph 4,899 blocks behind the node behind a fed _meta head: ready %v %+v, node asked %d times", ready, c, asked.Load())
	}
}
