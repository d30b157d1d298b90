package service

import (
	"slices"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// A chain the gateway indexes itself is ready only once its indexer has
// reached the head (however small the lag), and a failed indexer says so
// with its error; the readiness shows where indexing stands.
func TestReadinessFollowsTheIndexer(t *testing.T) {
	for _, c := range []struct {
		state string
		want  *problem.Code
	}{
		{vocab.IndexingStarting, problem.SubgraphLagging},
		{vocab.IndexingBehind, problem.SubgraphLagging},
		{vocab.IndexingFailed, problem.SubgraphIndexingError},
		{vocab.IndexingSynced, nil},
	} {
		st := vocab.Indexing{ChainID: 1, State: c.state, Block: 99, ChainHead: 100, Error: "block 7 log 0: HandlerV2.handleSwap: boom"}
		r := ChainReadiness{ChainID: 1, Configured: true}
		indexing(&r, &vocab.Upstreams{Indexing: func() vocab.Indexing { return st }})
		if r.Indexing == nil || *r.Indexing != st {
			t.Errorf("%s: indexing shown as %+v", c.state, r.Indexing)
		}
		if c.want == nil && len(r.Problems) != 0 || c.want != nil && !slices.Equal(r.Problems, []string{c.want.Name()}) {
			t.Errorf("%s: problems %v, want %v", c.state, r.Problems, c.want)
		}
	}
	// Attack 5: a synced index whose store fails reads (S15), which has
	// stalled on a failure, or whose node is behind it (S2) is not ready.
	for what, c := range map[string]struct {
		st   vocab.Indexing
		want *problem.Code
	}{
		"store error": {vocab.Indexing{State: vocab.IndexingSynced, Block: 100, ChainHead: 100, StoreError: "Store error: sqlite3: database disk image is malformed"}, problem.SubgraphError},
		"stalled":     {vocab.Indexing{State: vocab.IndexingSynced, Block: 100, ChainHead: 120, Stalled: true, Error: "eth_getLogs: 502"}, problem.SubgraphLagging},
		"node behind": {vocab.Indexing{State: vocab.IndexingSynced, Block: 30010, ChainHead: 50, Error: "the node has no block 30010 yet"}, problem.RPCUnavailable},
	} {
		r := ChainReadiness{ChainID: 1, Configured: true}
		indexing(&r, &vocab.Upstreams{Indexing: func() vocab.Indexing { return c.st }})
		if !slices.Equal(r.Problems, []string{c.want.Name()}) {
			t.Errorf("%s: problems %v, want %v", what, r.Problems, c.want)
		}
	}
	r := ChainReadiness{Problems: []string{problem.SubgraphLagging.Name()}}
	indexing(&r, &vocab.Upstreams{Indexing: func() vocab.Indexing { return vocab.Indexing{State: vocab.IndexingBehind} }})
	if len(r.Problems) != 1 {
		t.Errorf("a lag already named is named twice: %v", r.Problems)
	}
}
