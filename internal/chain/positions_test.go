package chain

import (
	"context"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// A page of 150 options (three aggregate3 calls), some with more legs than
// the first round reads, one never minted: two HTTP requests in all (the
// batch, then one batch for the longer options' other legs), and each
// option read as Position reads it alone.
func TestPositionsReadsAPageInOneRoundTrip(t *testing.T) {
	n := testNode(t)
	m := n.Markets[tMarket]
	m.Options = map[uint64]*chaintest.Option{}
	owner := common.HexToAddress("0xA11CE00000000000000000000000000000000001")
	var ids []*big.Int
	for id := uint64(1); id <= 150; id++ {
		o := &chaintest.Option{Owner: owner, IsCall: true, TickLower: -196400, TickUpper: -196390, Expiry: 1 << 40}
		for l := range 1 + int(id%7) { // 1 to 7 legs
			o.Legs = append(o.Legs, chaintest.Leg{Handler: common.HexToAddress("0x29BbF7EbB9C5146c98851e76A5529985E4052116"), Pool: tPool,
				TickLower: -196400 + 10*l, TickUpper: -196390 + 10*l, Liquidity: big.NewInt(int64(id*100 + uint64(l)))})
		}
		m.Options[id] = o
		ids = append(ids, new(big.Int).SetUint64(id))
	}
	ids = append(ids, big.NewInt(999)) // never minted
	r := testReader(t, n)
	before := n.Requests()
	got, err := r.Positions(context.Background(), tMarket, ids)
	if err != nil {
		t.Fatal(err)
	}
	if req := n.Requests() - before; req != 2 {
		t.Errorf("%d HTTP requests for %d options, want 2", req, len(ids))
	}
	for i, id := range ids {
		if id.Int64() == 999 {
			if problem.As(got[i].Err).Code != problem.OptionNotFound {
				t.Errorf("unminted: %v", got[i].Err)
			}
			continue
		}
		want, err := r.Position(context.Background(), tMarket, id)
		if err != nil || got[i].Err != nil {
			t.Fatalf("option %s: %v / %v", id, err, got[i].Err)
		}
		p := got[i].Position
		if len(p.Legs) != len(want.Legs) || p.Owner != want.Owner || p.Data.OpTickArrayLen != want.Data.OpTickArrayLen || p.Data.Expiry.Cmp(want.Data.Expiry) != 0 || p.Version != want.Version {
			t.Fatalf("option %s: %+v, alone %+v", id, p, want)
		}
		for l := range p.Legs {
			if p.Legs[l].LiquidityToUse.Cmp(want.Legs[l].LiquidityToUse) != 0 || p.Legs[l].TickLower != want.Legs[l].TickLower {
				t.Fatalf("option %s leg %d: %+v, alone %+v", id, l, p.Legs[l], want.Legs[l])
			}
		}
	}
}
