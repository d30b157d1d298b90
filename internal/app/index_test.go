package app

import (
	"context"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
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
		got := indexingOf(statusIndex{in})()
		exp := vocab.Indexing{ChainID: 42161, State: want, StartBlock: 3, Block: 9, ChainHead: 12, Error: "block 7: no",
			Stalled: true, StoreError: "Store error: disk I/O error"}
		if got != exp {
			t.Errorf("state %q: got %+v, want %+v", state, got, exp)
		}
	}
}
