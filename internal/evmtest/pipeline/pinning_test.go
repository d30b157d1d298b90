package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// The chain moves, and the subgraph indexes it, between two requests:
// with the first answer's block the next page of a history continues the
// first exactly and the strikes chain is the first answer again, byte for
// byte (its ranges read from the subgraph, its pool price and handler
// facts from the simulated EVM, all at that block); without it each names
// the newer block and shows the new purchase.
func TestPagesContinueAtTheFirstAnswersBlock(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	var ranges []pt.Range
	liq := map[pt.Range]*big.Int{}
	for k := 1; k <= 3; k++ {
		for _, lo := range []int{base + k*p.TickSpacing, base - (k+1)*p.TickSpacing} {
			r := pt.Range{TickLower: lo, TickUpper: lo + p.TickSpacing}
			_, l, err := p.Deposit(lp, r, e18(1))
			if err != nil {
				t.Fatal(err)
			}
			ranges, liq[r] = append(ranges, r), l
		}
	}
	buy := func(r pt.Range) {
		t.Helper()
		if _, _, err := p.Buy(buyer, pt.Option{IsCall: r.TickLower > tick, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 7 * 3600,
			Legs: []pt.Leg{{Range: r, Liquidity: new(big.Int).Div(liq[r], big.NewInt(10))}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range ranges[:3] {
		buy(r)
	}
	ix.Sync()

	mc := p.DeployMulticall3()
	a, _ := liveGatewayWith(t, p, ix, func(cfg *config.Config) {
		ch := cfg.Chains[42161]
		ch.Multicall3 = mc
		ch.Handlers[p.Handler] = config.Handler{Name: "uniswap"}
		// Answers cached a nanosecond, and never served stale: the
		// request without block after the move is answered anew, not
		// from the first answer's entry.
		cfg.StrikesTTL, cfg.HistoryTTL = config.Duration(time.Nanosecond), config.Duration(time.Nanosecond)
		cfg.StaleGrace = config.Duration(time.Nanosecond)
	})
	ix.Sync()                            // the Multicall3 deployment's block
	a.Pins.SetHeadAges(block.HeadAges{}) // no clock moves here: every miss asks where the subgraph is
	first := p.Chain.BlockNumber()
	history := gateway.PathPurchaseHistory + "?chainId=42161&user=" + buyer.Addr.Hex() + "&optionMarket=" + p.Market.Hex()
	strikes := gateway.PathStrikesChain + "?chainId=42161&optionMarket=" + p.Market.Hex() + "&callsReach=5&putsReach=5"

	page1, n1 := read(t, a, history+"&first=2&skip=0")
	chain1, s1 := read(t, a, strikes)
	if n1 != first || s1 != first {
		t.Fatalf("first answers at %d and %d, the indexed block is %d", n1, s1, first)
	}

	// The chain moves: another purchase (the history shifts by one, a
	// range's free liquidity drops) and a swap into the first range above
	// the price (the pool's tick moves a spacing: read at the new head,
	// the strikes chain's window would move with it).
	buy(ranges[3])
	if _, err := p.SwapToTick(trader, p.Fee, base+p.TickSpacing+p.TickSpacing/2); err != nil {
		t.Fatal(err)
	}
	ix.Sync()
	moved := p.Chain.BlockNumber()
	if moved <= first {
		t.Fatalf("the chain did not move: %d", moved)
	}
	at := "&block=" + strconv.FormatUint(first, 10)

	page2, n2 := read(t, a, history+"&first=2&skip=2"+at)
	all, nAll := read(t, a, history+"&first=10&skip=0"+at)
	if n2 != first || nAll != first {
		t.Errorf("pages asked at %d answered at %d and %d", first, n2, nAll)
	}
	if got, want := ids(t, page1)+ids(t, page2), ids(t, all); got != want || len(decode(t, all)) != 3 {
		t.Errorf("pages at the first block: %s, the whole history there %s", got, want)
	}
	latest2, nLatest := read(t, a, history+"&first=2&skip=2")
	if nLatest != moved {
		t.Errorf("page 2 without block answered at %d, the indexed block is %d", nLatest, moved)
	}
	if len(decode(t, latest2)) != 2 || ids(t, latest2) == ids(t, page2) {
		t.Errorf("page 2 at the newer block %s, at the first %s: the new purchase should shift it", ids(t, latest2), ids(t, page2))
	}

	chain2, s2 := read(t, a, strikes+at)
	if s2 != first || chain2 != chain1 {
		t.Errorf("strikes chain at block %d (answered at %d) differs from the first answer:\n%s\n%s", first, s2, chain1, chain2)
	}
	chain3, s3 := read(t, a, strikes)
	if s3 != moved || chain3 == chain1 {
		t.Errorf("strikes chain without block answered at %d (indexed %d), same as the first: %v", s3, moved, chain3 == chain1)
	}
}

// read asks the gateway for path and returns the body and the block the
// answer names.
func read(t *testing.T, a *app.App, path string) (string, uint64) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
	}
	n, err := strconv.ParseUint(rec.Header().Get("X-Block-Number"), 10, 64)
	if err != nil || rec.Header().Get("X-Block-Hash") == "" {
		t.Fatalf("%s: X-Block-Number %q X-Block-Hash %q", path, rec.Header().Get("X-Block-Number"), rec.Header().Get("X-Block-Hash"))
	}
	return rec.Body.String(), n
}

func decode(t *testing.T, body string) []map[string]any {
	t.Helper()
	var list []map[string]any
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	return list
}

// ids are a page's option ids in order.
func ids(t *testing.T, body string) string {
	t.Helper()
	out := ""
	for _, r := range decode(t, body) {
		out += r["optionId"].(string) + ","
	}
	return out
}
