package service_test

import (
	"context"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

type head uint64

func (h head) BlockNumber(context.Context) (uint64, error) { return uint64(h), nil }

type meta uint64

func (m meta) Meta(context.Context) (subgraph.Meta, error) {
	return subgraph.Meta{Block: uint64(m)}, nil
}

// Readiness asks the probes the upstreams declare; a configured chain
// that declares no head probe (or no subgraph probe) is not ready, rather
// than ready at head 0.
func TestReadinessNeedsDeclaredProbes(t *testing.T) {
	cfg := config.Default()
	for _, c := range []struct {
		name  string
		head  service.Prober
		meta  service.MetaReader
		ready bool
	}{
		{"both probes, in step", head(100), meta(95), true},
		{"both probes, lagging", head(1000), meta(95), false},
		{"no head probe", nil, meta(95), false},
		{"no subgraph probe", head(100), nil, false},
	} {
		up := &service.Upstreams{Config: cfg.Chains[42161], Chain: struct{ service.MarketReader }{}, Subgraph: struct{ service.Subgraph }{},
			Head: c.head, Meta: c.meta}
		ready, chains := service.New(map[uint64]*service.Upstreams{42161: up}).Readiness(context.Background(), 500)
		if ready != c.ready || len(chains) != 1 || chains[0].Ready != c.ready {
			t.Errorf("%s: ready %v %+v, want %v", c.name, ready, chains, c.ready)
		}
	}
}
