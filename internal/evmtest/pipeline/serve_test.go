package pipeline

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode"
)

// The emulator serves what the mappings wrote block by block: a query
// pinned to the block of a mint reads the option as it was then, the head
// reads it exercised, and _meta names the indexed blocks with their hashes
// and times from the chain.
func TestServedStoreKeepsEveryBlock(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	lp, buyer := p.Users[0], p.Users[1]
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing + 10*p.TickSpacing
	r := pt.Range{TickLower: base, TickUpper: base + p.TickSpacing}
	_, l, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
	if err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	minted := p.Chain.BlockNumber()
	if _, err := p.SwapToTick(p.Users[2], p.Fee, tick+300); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exercise(buyer, id, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: l}}); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	head := p.Chain.BlockNumber()
	srv := ix.Serve()
	ask := func(q string) string {
		t.Helper()
		resp := srv.Store.Query(graphnode.Request{Query: q})
		b, _ := json.Marshal(resp)
		if len(resp.Errors) > 0 {
			t.Fatalf("%s: %s", q, b)
		}
		return string(b)
	}
	optionAt := `{ options(%s where: {tokenId: "%s"}) { state exerciseCount exercises { id } } }`
	if got := ask(fmt.Sprintf(optionAt, fmt.Sprintf("block: {number: %d},", minted), id)); got != `{"data":{"options":[{"state":"Open","exerciseCount":0,"exercises":[]}]}}` {
		t.Errorf("option at its mint block: %s", got)
	}
	if got := ask(fmt.Sprintf(optionAt, "", id)); !strings.Contains(got, `"state":"Exercised","exerciseCount":1,"exercises":[{"id"`) {
		t.Errorf("option at the head: %s", got)
	}
	h, err := p.Chain.Client().HeaderByNumber(t.Context(), new(big.Int).SetUint64(head))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf(`{"data":{"_meta":{"block":{"number":%d,"hash":"%s","timestamp":%d}}}}`, head, h.Hash().Hex(), h.Time)
	if got := ask(`{ _meta { block { number hash timestamp } } }`); got != want {
		t.Errorf("_meta %s, want %s", got, want)
	}
	changed := ask(fmt.Sprintf(`{ strikes(where: {_change_block: {number_gte: %d}}) { id } }`, minted+1))
	if !strings.Contains(changed, `"strikes":[{"id"`) {
		t.Errorf("the exercise's range changed after the mint, not listed: %s", changed)
	}
}
