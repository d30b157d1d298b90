package subgraph_test

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/sqlstore"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// A page pinned to a block older than the embedded index keeps (its
// retention) is BLOCK_PRUNED, naming the oldest block served.
func TestPinOlderThanKeptNamesTheOldestBlock(t *testing.T) {
	s, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := sqlstore.Open(filepath.Join(t.TempDir(), "s.sqlite"), s, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.SetHistory(sqlstore.MinHistory)
	ctx := context.Background()
	for _, n := range []uint64{1, 30_000} {
		if err := st.Advance(ctx, graphnode.Block{Number: n, Hash: "0x01"}); err != nil {
			t.Fatal(err)
		}
	}
	c := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: &http.Client{Transport: &graphnode.Server{Store: st}}})
	pctx, _ := block.With(ctx, 19_999)
	_, _, err = c.OptionMarkets(pctx)
	if p := problem.As(err); p == nil || p.Code != problem.BlockPruned || !strings.Contains(p.Error(), "block 20000 and later") {
		t.Errorf("a pin below the oldest block kept: %v", err)
	}
	kept, _ := block.With(ctx, 20_000)
	if _, _, err := c.OptionMarkets(kept); err != nil {
		t.Errorf("a pin at the oldest block kept: %v", err)
	}
}

// Graph Node's words without a number are not taken for a block: the
// message would name none ("block  and later").
func TestPrunedWordsWithoutANumber(t *testing.T) {
	if n, ok := subgraph.NumberAfter("only has data starting at block number ", "only has data starting at block number "); ok {
		t.Errorf("took %q for a block number", n)
	}
	if n, ok := subgraph.NumberAfter("only has data starting at block number 20000", "only has data starting at block number "); !ok || n != "20000" {
		t.Errorf("read %q, %v", n, ok)
	}
}
