package service_test

import (
	"context"
	"slices"
	"testing"

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
