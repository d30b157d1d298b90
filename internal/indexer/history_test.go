package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
	"github.com/clamm-gateway/clamm-gateway/internal/indexer"
)

// With History set, the store keeps the state of that many blocks below
// the head: it answers as the reference there and refuses an older pin,
// naming the oldest block it serves.
func TestHistoryKeepsTheLastBlocks(t *testing.T) {
	c, h := newChain(t, 40_000)
	history(t, c, h, 100, 39_000, 97)
	ix := open(t, c, filepath.Join(t.TempDir(), "42161.sqlite"), indexer.Options{History: sqlstore.MinHistory})
	defer ix.Close()
	runUntilSynced(t, ix, c)
	oldest, err := ix.Store().Earliest(context.Background())
	if err != nil || oldest < 40_000-sqlstore.MinHistory-sqlstore.MinHistory/16-1 || oldest > 40_000-sqlstore.MinHistory {
		t.Fatalf("the oldest block kept is %d (%v), want about %d", oldest, err, 40_000-sqlstore.MinHistory)
	}
	ref := reference(t, c)
	q := fmt.Sprintf(`{ strikes(first: 1000, orderBy: id, block: {number: %d}) { id totalLiquidity usedLiquidity } }`, oldest)
	got, _ := json.Marshal(ix.Query(graphnode.Request{Query: q}))
	want, _ := json.Marshal(ref.Query(graphnode.Request{Query: q}))
	if string(got) != string(want) || !strings.Contains(string(want), "totalLiquidity") {
		t.Errorf("at the oldest block kept:\n indexer   %.400s\n reference %.400s", got, want)
	}
	r := ix.Query(graphnode.Request{Query: fmt.Sprintf(`{ strikes(block: {number: %d}) { id } }`, oldest-1)})
	if len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, fmt.Sprintf("only has data starting at block number %d", oldest)) {
		t.Errorf("a pin below the oldest block kept: %+v", r)
	}
}
