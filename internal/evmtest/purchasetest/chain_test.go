package purchasetest

import (
	"context"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// counting counts the RPC round trips a reader makes.
type counting struct {
	chain.Caller
	n atomic.Int64
}

func (c *counting) CallContext(ctx context.Context, result any, method string, args ...any) error {
	c.n.Add(1)
	return c.Caller.CallContext(ctx, result, method, args...)
}

// A cold options chain of 100 strikes x 3 ttls costs one RPC round trip
// more than the strikes chain's own reads; its premiums and IVs are the
// pricing contract's, an unset ttl's column has none.
func TestOptionsChainOneRoundTrip(t *testing.T) {
	s := deploy(t)
	p := s.p
	base := (s.tick / 10) * 10
	for k := 1; k <= 50; k++ {
		for _, r := range []pt.Range{{TickLower: base + 10*k, TickUpper: base + 10*k + 10}, {TickLower: base - 10*k, TickUpper: base - 10*k + 10}} {
			if r.TickLower == s.plain.TickLower || r.TickLower == s.put.TickLower {
				continue // deploy's ranges
			}
			if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
				t.Fatal(err)
			}
			s.g.ranges = append(s.g.ranges, r)
		}
	}
	mc := p.DeployMulticall3()
	fresh := func() (*service.Service, *counting) {
		c := &counting{Caller: p.Chain.RPC()}
		reader := testenv.NewReader(t, c, mc)
		up := *s.upstreams()
		up.Chain = reader
		return service.New(map[uint64]*vocab.Upstreams{chainID: &up}), c
	}
	ctx := context.Background()
	sreq := market.StrikesRequest{ChainID: chainID, Market: p.Market, CallsReach: 60, PutsReach: 60}
	svc, c := fresh()
	sc, err := svc.StrikesChain(ctx, sreq)
	if err != nil {
		t.Fatal(err)
	}
	strikesTrips := c.n.Load()
	svc, c = fresh()
	oc, err := svc.OptionsChain(ctx, market.OptionsChainRequest{StrikesRequest: sreq, TTLs: []uint64{3600, 86400, 7200}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.n.Load(); got != strikesTrips+1 {
		t.Errorf("options chain: %d round trips, strikes chain %d", got, strikesTrips)
	}
	if len(oc.Expiries) != 3 || len(oc.Expiries[0].Options) != 100 {
		t.Fatalf("%d expiries, %d options (strikes chain %d entries)", len(oc.Expiries), len(oc.Expiries[0].Options), len(sc.Entries))
	}
	last := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
	if oc.MarkPriceRaw != last.String() {
		t.Errorf("mark %s, market %s", oc.MarkPriceRaw, last)
	}
	for _, e := range oc.Expiries {
		for _, o := range e.Options {
			if e.TTL == 7200 {
				if o.Premium != nil || o.Greeks != nil {
					t.Fatalf("ttl 7200 has no IV, yet %+v", o)
				}
				continue
			}
			strike := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(o.StrikeTick)))[0].(*big.Int)
			want := p.Chain.Call(s.pr.Pricing, pt.OptionPricing.ABI, "getOptionPriceViaTTL", o.Type == "put", new(big.Int).SetUint64(e.TTL), strike, last)[0].(*big.Int)
			if o.PremiumRaw == nil || *o.PremiumRaw != want.String() || o.Greeks == nil {
				t.Fatalf("ttl %d %s %s: premium %v, pricing %s", e.TTL, o.Type, o.Strike, o.PremiumRaw, want)
			}
			if d := o.Greeks.Delta; (o.Type == "call" && (d < 0 || d > 1)) || (o.Type == "put" && (d > 0 || d < -1)) || o.Greeks.Gamma < 0 || o.Greeks.Vega < 0 || o.Greeks.Theta > 0 {
				t.Errorf("ttl %d %s %s: greeks %+v", e.TTL, o.Type, o.Strike, *o.Greeks)
			}
		}
	}
}

// BatchCallContext counts a JSON-RPC batch as one round trip.
func (c *counting) BatchCallContext(ctx context.Context, b []rpc.BatchElem) error {
	c.n.Add(1)
	return c.Caller.(interface {
		BatchCallContext(context.Context, []rpc.BatchElem) error
	}).BatchCallContext(ctx, b)
}
