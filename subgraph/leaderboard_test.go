package subgraph_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// The leaderboard's events are refused (502 SUBGRAPH_ERROR) when the
// subgraph answers one of a market not asked, outside the window, without
// its amounts or at a price no pool has: the service values each by its market, so
// an unasked one would have none.
func TestBoardEventsAreOfTheMarketsAndWindowAsked(t *testing.T) {
	const market, other = "0x501b03bdb431154b8df17bf1c00756e3a8f21744", "0x00000000000000000000000000000000000000aa"
	purchase := func(m, ts, premium, price string) string {
		return fmt.Sprintf(`{"id":"p","market":"%s","buyer":"0xb0b0000000000000000000000000000000000002","isCall":true,"premium":%s,"protocolFees":"1","totalAssetWithdrawn":"5","sqrtPriceX96":%s,"timestamp":%s}`, m, premium, price, ts)
	}
	exercise := func(m, ts, toOwner string) string {
		return fmt.Sprintf(`{"id":"x","market":"%s","user":"0xb0b0000000000000000000000000000000000002","totalProfit":"9","profitToOwner":%s,"sqrtPriceX96":"79228162514264337593543950336","timestamp":%s,"option":{"isCall":false}}`, m, toOwner, ts)
	}
	const price = `"79228162514264337593543950336"`
	for _, c := range []struct {
		name, purchases, exercises string
		ok                         bool
	}{
		{"asked, in the window", purchase(market, `"150"`, `"2"`, price), exercise(market, `"199"`, `"9"`), true},
		{"no payment to the owner found", purchase(market, `"100"`, `"2"`, price), exercise(market, `"150"`, `null`), true},
		{"a purchase of a market not asked", purchase(other, `"150"`, `"2"`, price), exercise(market, `"150"`, `"9"`), false},
		{"an exercise of a market not asked", purchase(market, `"150"`, `"2"`, price), exercise(other, `"150"`, `"9"`), false},
		{"a purchase at the window's end", purchase(market, `"200"`, `"2"`, price), exercise(market, `"150"`, `"9"`), false},
		{"an exercise before the window", purchase(market, `"150"`, `"2"`, price), exercise(market, `"99"`, `"9"`), false},
		{"a purchase without its premium", purchase(market, `"150"`, `null`, price), exercise(market, `"150"`, `"9"`), false},
		{"a purchase at a price past 160 bits", purchase(market, `"150"`, `"2"`, `"`+"1"+strings.Repeat("0", 50)+`"`), exercise(market, `"150"`, `"9"`), false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			field, item := "purchases", c.purchases
			if q, _ := io.ReadAll(r.Body); strings.Contains(string(q), "LeaderboardExercises") {
				field, item = "exercises", c.exercises
			}
			fmt.Fprintf(w, `{"data":{"_meta":{"block":{"number":7,"hash":"0x%064x","timestamp":9000},"hasIndexingErrors":false},"%s":[%s]}}`, 7, field, item)
		}))
		cl := testenv.NewSubgraph(t, srv.URL, subgraph.Options{})
		q := subgraph.BoardQuery{Markets: []common.Address{common.HexToAddress(market)}, From: 100, To: 200, First: 10}
		ps, _, perr := cl.BoardPurchases(context.Background(), q)
		xs, _, xerr := cl.BoardExercises(context.Background(), q)
		switch {
		case c.ok && (perr != nil || xerr != nil || len(ps) != 1 || len(xs) != 1):
			t.Errorf("%s: %v, %v (%d, %d events)", c.name, perr, xerr, len(ps), len(xs))
		case !c.ok && problem.As(perr).Code != problem.SubgraphError && problem.As(xerr).Code != problem.SubgraphError:
			t.Errorf("%s: %v, %v; want SUBGRAPH_ERROR", c.name, perr, xerr)
		}
		srv.Close()
	}
}
