package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

func isPricingRead(to common.Address, data []byte) bool {
	return to == (common.Address{}) && bytes.HasPrefix(data, contracts.PricingRead.Bytecode)
}

// More rows x ttls than one PricingRead may return (EIP-170's 24 KiB) go
// as several reads in one JSON-RPC batch: still one round trip after the
// strikes chain's; a block arriving between them makes one more, pinned;
// an answer that does not decode is the RPC's fault, a 502.
func TestOptionsChainBatchesAndRetries(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	ctx := context.Background()
	sreq := market.StrikesRequest{ChainID: 42161, Market: sc.Market.Address, CallsReach: 1000, PutsReach: 1000}
	req := market.OptionsChainRequest{StrikesRequest: sreq, TTLs: []uint64{600, 1200, 3600, 7200, 14400, 28800, 43200, 86400}}

	svc, f := newService(t, sc)
	strikes, err := svc.StrikesChain(ctx, sreq)
	if err != nil {
		t.Fatal(err)
	}
	alone := f.Node.Requests()
	svc, f = newService(t, sc)
	oc, err := svc.OptionsChain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	rows := len(oc.Expiries[0].Options)
	if rows*len(req.TTLs) <= contracts.PricingReadMaxAsks || len(strikes.Entries) < rows {
		t.Fatalf("%d rows x %d ttls: not more than one read holds", rows, len(req.TTLs))
	}
	if got := f.Node.Requests(); got != alone+1 {
		t.Errorf("%d round trips, the strikes chain alone %d", got, alone)
	}
	for _, e := range oc.Expiries {
		set := sc.Market.Pricing.IVs[e.TTL] != 0
		for _, o := range e.Options {
			if (o.Premium != nil) != set || (o.Greeks != nil) != set {
				t.Fatalf("ttl %d (IV set: %v): %+v", e.TTL, set, o)
			}
		}
	}

	// The second read of the first batch sees the next block.
	svc, f = newService(t, sc)
	var reads atomic.Int64
	f.Node.Rewrite = func(to common.Address, data, ret []byte) []byte {
		if !isPricingRead(to, data) || reads.Add(1) != 2 {
			return ret
		}
		h, a, err := contracts.UnpackPricingRead(ret)
		if err != nil {
			t.Error(err)
			return ret
		}
		h.BlockNumber = new(big.Int).Add(h.BlockNumber, big.NewInt(1))
		out, _ := contracts.PackPricingReadOutput(h, a)
		return out
	}
	again, err := svc.OptionsChain(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Node.Requests(); got != alone+2 || again.Block != oc.Block {
		t.Errorf("after a block between reads: %d round trips (want %d), block %d (want %d)", got, alone+2, again.Block, oc.Block)
	}

	svc, f = newService(t, sc)
	f.Node.Rewrite = func(to common.Address, data, ret []byte) []byte {
		if isPricingRead(to, data) {
			return ret[:100]
		}
		return ret
	}
	_, err = svc.OptionsChain(ctx, req)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.RPCError {
		t.Errorf("a PricingRead answer that does not decode: %v", err)
	}
	q := trade.PurchaseRequest{ChainID: 42161, Market: sc.Market.Address, IsCall: true, Strike: 3004.9080590767317, TTL: 86400, Amount: big.NewInt(1e18)}
	if _, err = svc.PurchaseQuote(ctx, q); !errors.As(err, &pe) || pe.Code != problem.RPCError {
		t.Errorf("quote on the same answer: %v", err)
	}
}

// A quote reads the ranges of the strike it names and no other: the
// subgraph's answer holds only ranges struck at that tick (a call's upper
// tick, a put's lower), whatever else lies within reach of the price.
func TestQuoteReadsOnlyItsStrike(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	ctx := context.Background()
	for _, c := range []struct {
		isCall bool
		strike float64
		tick   int
		amount int64
	}{{true, 3004.9080590767317, -196240, 1e18}, {false, 2995.90729282992, -196270, 5e9}} {
		svc, f := newService(t, sc)
		var ranges []struct{ TickLower, TickUpper int }
		f.Subgraph.Rewrite = func(op string, body []byte) []byte {
			if op == "Strikes" {
				var ans struct {
					Data struct {
						Strikes []struct{ TickLower, TickUpper int }
					}
				}
				if err := json.Unmarshal(body, &ans); err != nil {
					t.Error(err)
				}
				ranges = append(ranges, ans.Data.Strikes...)
			}
			return body
		}
		q, err := svc.PurchaseQuote(ctx, trade.PurchaseRequest{ChainID: 42161, Market: sc.Market.Address, IsCall: c.isCall, Strike: c.strike, TTL: 3600, Amount: big.NewInt(c.amount)})
		if err != nil {
			t.Fatal(err)
		}
		if q.StrikeTick != c.tick || len(ranges) == 0 {
			t.Fatalf("strike tick %d (want %d), %d ranges read", q.StrikeTick, c.tick, len(ranges))
		}
		for _, r := range ranges {
			if at := r.TickLower; (c.isCall && r.TickUpper != c.tick) || (!c.isCall && at != c.tick) {
				t.Errorf("call %v at %d: the quote read the range [%d, %d]", c.isCall, c.tick, r.TickLower, r.TickUpper)
			}
		}
	}
}

// A pricing contract with neither getVolatility (OptionPricingV2 prices at
// the table's IV, another may skew: the gateway cannot tell) has its IV
// reported as unknown, not as the table entry: iv null and ivSource "none"
// in the quote; in the options chain iv and the Greeks null, the premium
// (the contract's own getOptionPrice) still there. Where it has the
// three-argument one (OptionPricingLinearV2), that one's answer.
func TestIVWithoutAVolatilityFunction(t *testing.T) {
	sc := loadScenario(t, "testdata/scenarios/arbitrum-weth-usdc.json")
	ctx := context.Background()
	for _, c := range []struct{ volatility, source string }{{"none", "none"}, {"3", "getVolatility3"}, {"", "getVolatility4"}} {
		pricing := *sc.Market.Pricing
		pricing.Volatility = c.volatility
		sc.Market.Pricing = &pricing
		svc, _ := newService(t, sc)
		q, err := svc.PurchaseQuote(ctx, trade.PurchaseRequest{ChainID: 42161, Market: sc.Market.Address, IsCall: true, Strike: 3004.9080590767317, TTL: 86400, Amount: big.NewInt(1e18)})
		if err != nil {
			t.Fatal(err)
		}
		if q.IVSource != c.source || (q.IV == nil) != (c.source == "none") || q.BaseIV != "40" || q.Premium == "0" {
			t.Errorf("volatility %q: iv %v from %q, base %s, premium %s", c.volatility, q.IV, q.IVSource, q.BaseIV, q.Premium)
		}
		oc, err := svc.OptionsChain(ctx, market.OptionsChainRequest{StrikesRequest: market.StrikesRequest{ChainID: 42161, Market: sc.Market.Address, CallsReach: 5, PutsReach: 5}, TTLs: []uint64{86400}})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range oc.Expiries[0].Options {
			if o.IVSource == nil || *o.IVSource != c.source || (o.IV == nil) != (c.source == "none") || (o.Greeks == nil) != (c.source == "none") || o.Premium == nil {
				t.Fatalf("volatility %q: options chain %+v", c.volatility, o)
			}
		}
	}
}
