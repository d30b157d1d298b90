package subgraph_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Paging by id with a small page size returns every strike exactly once.
func TestStrikesPagesUntilShortPage(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	q := subgraph.StrikesQuery{Pools: []common.Address{scs[0].Market.PrimePool}, TickLowerMin: -300000, TickLowerMax: 0}
	all, _, meta, err := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}, PageSize: 1000}).Strikes(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	before := f.Subgraph.Requests()
	paged, _, _, err := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}, PageSize: 3}).Strikes(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 16 || len(paged) != len(all) {
		t.Fatalf("%d strikes in one page, %d paged; scenario has 16 with liquidity", len(all), len(paged))
	}
	if pages := f.Subgraph.Requests() - before; pages != 6 { // 3+3+3+3+3+1
		t.Fatalf("%d pages, want 6", pages)
	}
	seen := map[string]bool{}
	for _, s := range paged {
		if seen[s.ID] {
			t.Fatalf("strike %s twice", s.ID)
		}
		seen[s.ID] = true
	}
	if meta.Block != 402123456 || meta.Timestamp != 1763726400 {
		t.Fatalf("meta %+v", meta)
	}
}

// However many pages a subgraph keeps answering, one strikes answer is
// bounded by MaxBytes in total, not by page: a subgraph paging without end
// cannot grow one request's memory past what one answer may hold.
func TestStrikesPagesAreBoundedInTotal(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	q := subgraph.StrikesQuery{Pools: []common.Address{scs[0].Market.PrimePool}, TickLowerMin: -300000, TickLowerMax: 0}
	httpc := &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}
	one, _, _, err := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: httpc, PageSize: 1000}).Strikes(context.Background(), q)
	if err != nil || len(one) == 0 {
		t.Fatal(err)
	}
	// Pages of 3 strikes are ~1.5 KB each; 4 KB in total is two pages.
	_, _, _, err = testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: httpc, PageSize: 3, MaxBytes: 4 << 10}).Strikes(context.Background(), q)
	if p := problem.As(err); p.Code != problem.SubgraphError {
		t.Fatalf("%v", err)
	}
}
