package mapping

import (
	"context"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// S13: one address given twice (a configuration listing it with two start
// blocks) is watched once, from the earlier start, whichever comes first;
// given as another data source, it is refused.
func TestWatchTwiceKeepsTheEarliestStart(t *testing.T) {
	m, err := ForChain(42161)
	if err != nil {
		t.Fatal(err)
	}
	schema, err := graphnode.ParseSchema(subgraph.Schema)
	if err != nil {
		t.Fatal(err)
	}
	sg := NewSubgraph(m, Memory(graphnode.NewStore(schema)), nil)
	defer sg.Close()
	ctx := context.Background()
	addr := common.HexToAddress("0x00000000000000000000000000000000000a0001")
	for _, start := range []uint64{100, 200, 150} {
		if err := sg.Watch(ctx, Watched{Address: addr, Name: "HandlerV2", Start: start}); err != nil {
			t.Fatal(err)
		}
	}
	if w := sg.Watching(); len(w) != 1 || w[0].Start != 100 {
		t.Errorf("watching %+v, want the address once from block 100", w)
	}
	if err := sg.Watch(ctx, Watched{Address: addr, Name: "Pool", Start: 50}); err == nil || !strings.Contains(err.Error(), "indexed as HandlerV2 already") {
		t.Errorf("watched as another data source: %v", err)
	}
}
