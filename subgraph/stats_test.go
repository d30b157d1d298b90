package subgraph_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The demo market's day buyers and events, paged two at a time, come back
// each once, inside the range asked.
func TestStatsReadsPageWithinTheirRange(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	c := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}, PageSize: 2})
	ctx := context.Background()
	q := subgraph.StatsQuery{Market: scs[0].Market.Address, From: 1762905600, To: 1763683200}
	days, _, err := c.StatsDays(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	buyers, _, err := c.StatsDayBuyers(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[int64]int{}
	for _, b := range buyers {
		perDay[b.Start]++
	}
	purchases := 0
	for _, d := range days {
		purchases += d.Purchases
		if perDay[d.Start] != d.Buyers {
			t.Errorf("day %d: %d buyers counted, %d records", d.Start, d.Buyers, perDay[d.Start])
		}
	}
	if len(days) < 5 || purchases != 15 { // the scenario's options minted before 1763683200 (101 to 113, 115, 116)
		t.Fatalf("%d days holding %d purchases", len(days), purchases)
	}
	ps, _, err := c.StatsPurchases(ctx, subgraph.StatsQuery{Market: q.Market, From: 1763596800, To: 1763683200})
	if err != nil {
		t.Fatal(err)
	}
	xs, _, err := c.StatsExercises(ctx, subgraph.StatsQuery{Market: q.Market, From: 1763596800, To: 1763683200})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 5 || len(xs) != 2 { // tokens 109, 112, 110, 111, 113; exercises of 107 and 109
		t.Fatalf("%d purchases, %d exercises on 2025-11-20", len(ps), len(xs))
	}
}

// A subgraph answering records outside the range asked, or a day that does
// not start at midnight, is refused as SUBGRAPH_ERROR, not summed.
func TestStatsRefuseRecordsOutsideTheRange(t *testing.T) {
	meta := `"_meta":{"block":{"number":5,"timestamp":1763726400},"hasIndexingErrors":false}`
	day := func(id, start string) string {
		return `{"id":"` + id + `","start":` + start + `,"purchases":1,"exercises":0,"buyers":1,"callVolume":"1","putVolume":"0","callPremium":"0","putPremium":"0",` +
			`"callProtocolFees":"0","putProtocolFees":"0","callProfit":"0","putProfit":"0","callVolumeInPut":"0","callPremiumInPut":"0","callProtocolFeesInPut":"0","putProfitInPut":"0"}`
	}
	purchase := func(ts string) string {
		return `{"id":"a","buyer":"0x0000000000000000000000000000000000000001","isCall":true,"premium":"1","protocolFees":"0","totalAssetWithdrawn":"1","sqrtPriceX96":"1","timestamp":"` + ts + `"}`
	}
	q := subgraph.StatsQuery{Market: common.HexToAddress("0x501B03BdB431154b8Df17BF1c00756E3a8F21744"), From: 1763510400, To: 1763683200}
	for name, c := range map[string]struct {
		body string
		read func(*subgraph.Client) error
	}{
		"day before the range":   {`{"data":{` + meta + `,"marketDayDatas":[` + day("x-1763424000", "1763424000") + `]}}`, days(q)},
		"day not at midnight":    {`{"data":{` + meta + `,"marketDayDatas":[` + day("x-1763510401", "1763510401") + `]}}`, days(q)},
		"day without its fields": {`{"data":{` + meta + `,"marketDayDatas":[{"id":"x","start":1763510400,"purchases":1,"exercises":0,"buyers":1}]}}`, days(q)},
		"purchase at the end":    {`{"data":{` + meta + `,"purchases":[` + purchase("1763683200") + `]}}`, purchases(q)},
		"purchase before":        {`{"data":{` + meta + `,"purchases":[` + purchase("1763510399") + `]}}`, purchases(q)},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(c.body)) }))
		err := c.read(testenv.NewSubgraph(t, srv.URL, subgraph.Options{}))
		srv.Close()
		if problem.As(err).Code != problem.SubgraphError {
			t.Errorf("%s: %v, want SUBGRAPH_ERROR", name, err)
		}
	}
}

func days(q subgraph.StatsQuery) func(*subgraph.Client) error {
	return func(c *subgraph.Client) error { _, _, err := c.StatsDays(context.Background(), q); return err }
}

func purchases(q subgraph.StatsQuery) func(*subgraph.Client) error {
	return func(c *subgraph.Client) error { _, _, err := c.StatsPurchases(context.Background(), q); return err }
}
