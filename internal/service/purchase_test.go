package service_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
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
	sreq := service.StrikesRequest{ChainID: 42161, Market: sc.Market.Address, CallsReach: 1000, PutsReach: 1000}
	req := service.OptionsChainRequest{StrikesRequest: sreq, TTLs: []uint64{600, 1200, 3600, 7200, 14400, 28800, 43200, 86400}}

	svc, f := newService(t, sc)
	strikes, err := svc.StrikesChain(ctx, sreq)
	if err != nil {
		t.Fatal(err)
	}
	alone := f.Node.Requests()
	svc, f = newService(t, sc)
	oc, err := svc.OptionsChainOf(ctx, req)
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
	again, err := svc.OptionsChainOf(ctx, req)
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
	_, err = svc.OptionsChainOf(ctx, req)
	var pe *problem.Error
	if !errors.As(err, &pe) || pe.Code != problem.RPCError {
		t.Errorf("a PricingRead answer that does not decode: %v", err)
	}
	q := service.PurchaseRequest{ChainID: 42161, Market: sc.Market.Address, IsCall: true, Strike: "3004.9080590767317", TTL: 86400, Amount: big.NewInt(1e18)}
	if _, err = svc.QuotePurchase(ctx, q); !errors.As(err, &pe) || pe.Code != problem.RPCError {
		t.Errorf("quote on the same answer: %v", err)
	}
}
