package subgraph_test

import (
	"context"
	"fmt"
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

// The demo pool's candle records, paged two at a time, come back each once,
// oldest first, inside the window, with the last record before it.
func TestCandlesPageWithinTheirWindow(t *testing.T) {
	scs, err := scenario.Load(filepath.Join("..", "testdata/scenarios/arbitrum-weth-usdc.json"))
	if err != nil {
		t.Fatal(err)
	}
	f := scenario.NewFakes(t, scs...)
	c := testenv.NewSubgraph(t, "http://sg", subgraph.Options{HTTPClient: &http.Client{Transport: scenario.HandlerTransport{Handler: f.Subgraph}}, PageSize: 2})
	q := subgraph.CandleQuery{Pool: scs[0].Market.PrimePool, Interval: 14400, From: 1763553600, To: 1763704800}
	list, prev, _, err := c.Candles(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) < 5 || prev == nil || prev.Start >= q.From {
		t.Fatalf("%d candles, previous %+v", len(list), prev)
	}
	for i := 1; i < len(list); i++ {
		if list[i].Start <= list[i-1].Start {
			t.Errorf("candle %d starts at %d, after %d", i, list[i].Start, list[i-1].Start)
		}
	}
}

// A record outside the window, or one whose close is above its high, is
// the subgraph's garbage: 502 SUBGRAPH_ERROR, not a candle.
func TestCandlesRefuseGarbage(t *testing.T) {
	const pool = "0xc6962004f452be9203591991d15f6b388e09e8d0"
	for name, rec := range map[string]string{
		"outside": fmt.Sprintf(`{"id":"%s-3600-0000003600","start":3600,"open":"5","high":"9","low":"4","close":"6","closeTick":1,"volume0":"1","volume1":"1","swaps":1}`, pool),
		"above":   fmt.Sprintf(`{"id":"%s-3600-0000007200","start":7200,"open":"5","high":"9","low":"4","close":"10","closeTick":1,"volume0":"1","volume1":"1","swaps":1}`, pool),
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"data":{"_meta":{"block":{"number":7,"hash":"0x%064x","timestamp":9000},"hasIndexingErrors":false},"previous":[],"candles":[%s]}}`, 7, rec)
		}))
		c := testenv.NewSubgraph(t, srv.URL, subgraph.Options{})
		_, _, _, err := c.Candles(context.Background(), subgraph.CandleQuery{Pool: common.HexToAddress(pool), Interval: 3600, From: 7200, To: 10800})
		if problem.As(err).Code != problem.SubgraphError {
			t.Errorf("%s: %v, want SUBGRAPH_ERROR", name, err)
		}
		srv.Close()
	}
}

// A subgraph that answers a window's records out of time order (S11: the
// first and last swapped) still gives them oldest first, every one kept:
// callers walk them as a series.
func TestCandlesSortedWhateverTheAnswersOrder(t *testing.T) {
	const pool = "0xc6962004f452be9203591991d15f6b388e09e8d0"
	rec := func(start int64) string {
		return fmt.Sprintf(`{"id":"%s-60-%010d","start":%d,"open":"5","high":"9","low":"4","close":"6","closeTick":1,"volume0":"1","volume1":"1","swaps":%d}`, pool, start, start, start/60)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"data":{"_meta":{"block":{"number":7,"hash":"0x%064x","timestamp":9000},"hasIndexingErrors":false},"previous":[],"candles":[%s,%s,%s,%s]}}`,
			7, rec(360), rec(180), rec(240), rec(120))
	}))
	defer srv.Close()
	c := testenv.NewSubgraph(t, srv.URL, subgraph.Options{})
	list, _, _, err := c.Candles(context.Background(), subgraph.CandleQuery{Pool: common.HexToAddress(pool), Interval: 60, From: 120, To: 420})
	if err != nil {
		t.Fatal(err)
	}
	var starts []int64
	for _, k := range list {
		starts = append(starts, k.Start)
	}
	if fmt.Sprint(starts) != "[120 180 240 360]" {
		t.Errorf("starts %v, want [120 180 240 360]", starts)
	}
}
