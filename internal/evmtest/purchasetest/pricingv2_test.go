package purchasetest

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"os"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// optionPricingV2Greeks is testdata/optionpricingv2_greeks.json: Greeks
// computed by an implementation that is not the gateway's (Python's math
// module, the script in the file) from the inputs it states.
type optionPricingV2Greeks struct {
	Inputs struct {
		IsCall    bool    `json:"isCall"`
		MarkRaw   string  `json:"markPriceRaw"`
		StrikeRaw string  `json:"strikePriceRaw"`
		PutDec    int     `json:"putDecimals"`
		TTL       uint64  `json:"ttl"`
		Years     float64 `json:"yearsToExpiry"`
		IV        string  `json:"iv"`
	} `json:"inputs"`
	Delta, Gamma, Theta, Vega float64
}

// Audit 5's M31: a market priced by OptionPricingV2 (the test protocol's
// stand-in answers as clamm's src/pricing/OptionPricingV2.sol: ttlToVol,
// volatilityCap, no volatility function) is priced at the ttl's table IV,
// so the quote's and the options chain's iv are ttlToVol(ttl), ivSource
// "ttlToVol", and the options chain gives Greeks: Black-Scholes at that IV,
// equal to a table computed independently from the same inputs.
func TestIVFromOptionPricingV2(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	lo := (tick/10)*10 + 100
	r := pt.Range{TickLower: lo, TickUpper: lo + 10}
	if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
		t.Fatal(err)
	}
	pr := p.DeployPricingV2(pt.PricingConfig{IVs: map[uint64]uint64{3600: 60}, FeePercentage: 340000}, 1000)
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	up := &vocab.Upstreams{Config: &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}}},
		Subgraph: &rangesSubgraph{p: p, ranges: []pt.Range{r}}, Chain: reader}
	svc := service.New(map[uint64]*vocab.Upstreams{chainID: up})
	s := &setup{p: p}
	ctx := context.Background()
	base := p.Chain.Call(pr.Pricing, pt.PricingV2.ABI, "ttlToVol", big.NewInt(3600))[0].(*big.Int).String()
	q, err := svc.PurchaseQuote(ctx, trade.PurchaseRequest{ChainID: chainID, Market: p.Market, IsCall: true, Strike: s.key(r.TickUpper), TTL: 3600, Amount: big.NewInt(1e15)})
	if err != nil {
		t.Fatal(err)
	}
	if base != "60" || q.IV == nil || *q.IV != base || q.IVSource != "ttlToVol" || q.BaseIV != base {
		t.Errorf("quote: iv %v from %q (base %s); ttlToVol(3600) is %s", q.IV, q.IVSource, q.BaseIV, base)
	}
	oc, err := svc.OptionsChain(ctx, market.OptionsChainRequest{StrikesRequest: market.StrikesRequest{ChainID: chainID, Market: p.Market, CallsReach: 20, PutsReach: 20}, TTLs: []uint64{3600}})
	if err != nil {
		t.Fatal(err)
	}
	var o *market.ChainOption
	for i := range oc.Expiries[0].Options {
		if x := &oc.Expiries[0].Options[i]; x.Type == "call" && x.StrikeTick == r.TickUpper {
			o = x
		}
	}
	if o == nil || o.IV == nil || *o.IV != base || o.IVSource == nil || *o.IVSource != "ttlToVol" || o.Greeks == nil {
		t.Fatalf("options chain: %+v; ttlToVol(3600) is %s", o, base)
	}
	raw, err := os.ReadFile("testdata/optionpricingv2_greeks.json")
	if err != nil {
		t.Fatal(err)
	}
	var want optionPricingV2Greeks
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	in := want.Inputs
	if !in.IsCall || in.MarkRaw != oc.MarkPriceRaw || in.StrikeRaw != q.StrikePrice || in.PutDec != 6 || in.TTL != 3600 || in.Years != oc.Expiries[0].YearsToExpiry || in.IV != base {
		t.Fatalf("the table's inputs %+v are not this market's: mark %s strike %s years %v iv %s", in, oc.MarkPriceRaw, q.StrikePrice, oc.Expiries[0].YearsToExpiry, base)
	}
	g := o.Greeks
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"delta", g.Delta, want.Delta}, {"gamma", g.Gamma, want.Gamma}, {"theta", g.Theta, want.Theta}, {"vega", g.Vega, want.Vega}} {
		if c.want == 0 || math.Abs(c.got-c.want) > 1e-9*math.Abs(c.want) {
			t.Errorf("%s: %v, the independent table says %v", c.name, c.got, c.want)
		}
	}
}
