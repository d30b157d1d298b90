package app

import (
	"context"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// statusIndex is an Index that only reports a status.
type statusIndex struct{ st graphnode.Indexing }

func (s statusIndex) QueryContext(context.Context, graphnode.Request) graphnode.Response {
	return graphnode.Response{}
}
func (s statusIndex) Status() graphnode.Indexing { return s.st }
func (s statusIndex) Run(context.Context) error  { return nil }
func (s statusIndex) Close() error               { return nil }

// The indexer's status reaches readiness field for field, each state named
// in the use cases' words (the strings /readyz has always shown).
func TestIndexingReachesTheUseCasesAsTheirOwnType(t *testing.T) {
	for state, want := range map[string]string{
		graphnode.IndexingStarting: "starting", graphnode.IndexingBehind: "indexing",
		graphnode.IndexingSynced: "synced", graphnode.IndexingFailed: "failed", "paused": "paused",
	} {
		in := graphnode.Indexing{ChainID: 42161, State: state, StartBlock: 3, Block: 9, ChainHead: 12, Error: "block 7: no",
			Stalled: true, StoreError: "Store error: disk I/O error"}
		got := indexingOf(statusIndex{in}, nil)()
		exp := vocab.Indexing{ChainID: 42161, State: want, StartBlock: 3, Block: 9, ChainHead: 12, Error: "block 7: no",
			Stalled: true, StoreError: "Store error: disk I/O error"}
		if got != exp {
			t.Errorf("state %q: got %+v, want %+v", state, got, exp)
		}
	}
}

// The indexing error /readyz shows goes through the configured secrets: a
// node's error quotes its URL, key included.
func TestIndexingErrorShowsNoSecret(t *testing.T) {
	const rpc = "https://arb.example/v2/K3yK3yK3y"
	in := graphnode.Indexing{State: graphnode.IndexingFailed, Error: `Post "` + rpc + `": EOF; key K3yK3yK3y`}
	got := indexingOf(statusIndex{in}, secret.NewRedactor(rpc))()
	if strings.Contains(got.Error, "K3yK3yK3y") || !strings.Contains(got.Error, "EOF") {
		t.Errorf("readiness shows %q", got.Error)
	}
}
