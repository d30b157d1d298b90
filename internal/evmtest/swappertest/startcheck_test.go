package swappertest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// Issue 48's leftover: the configured swappers are checked at start. Of
// three uniswap-v3 swappers configured on the simulated chain, one is an
// address without code, one the real OneInchSwapper (it answers
// oneInchRouter(), not sr()), one the real SwapRouterSwapper. /readyz's
// contractChecks name exactly the first two, each once and saying what was
// found; the exercise prepare's auto goes through the good one only, the
// two others listed with the check's finding and no profit; direct (the
// first configured uniswap-v3 swapper by id, "bare" without the check)
// takes the good one; the answer, sent as built, pays what it said.
func TestStartCheckNamesBadSwappersAndAutoLeavesThemOut(t *testing.T) {
	s := calls(t, 2)
	p := s.p
	absent := common.HexToAddress("0x00000000000000000000000000000000005A0C0D")
	a := s.serveApp(t, 42161, func(ch *config.Chain) {
		ch.Swappers = map[string]*config.Swapper{
			"bare":        {Kind: config.SwapperUniswapV3, Address: absent},
			"inch-as-uni": {Kind: config.SwapperUniswapV3, Address: p.OneInchSwapper},
			"uni-v3":      {Kind: config.SwapperUniswapV3, Address: p.Swapper, Router: p.Router},
		}
		ch.Handlers = map[common.Address]config.Handler{p.Handler: {Name: "uniswap", Version: 2, Slot0: "uniswap-v3"}}
		ch.PoolDex = map[common.Address]string{p.Pool: "uniswap"}
		ch.Quoters = map[string]config.Quoter{"uniswap": {Kind: config.QuoterV2, Address: p.Quoter}}
	})
	var log bytes.Buffer
	a.Service.CheckContracts(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))

	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathReadyz, nil))
	var ready struct {
		Chains []service.ChainReadiness `json:"chains"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &ready); err != nil {
		t.Fatalf("/readyz %d %s", rec.Code, rec.Body)
	}
	var checks []service.ContractCheck
	for _, c := range ready.Chains {
		if c.ChainID == 42161 {
			checks = c.ContractChecks
		}
	}
	want := map[string]string{absent.Hex(): "no code", p.OneInchSwapper.Hex(): "oneInchRouter() = " + p.OneInchRouter.Hex()}
	if len(checks) != len(want) {
		t.Fatalf("contractChecks %+v, want the two bad swappers", checks)
	}
	for _, c := range checks {
		if found, ok := want[c.Contract]; !ok || !strings.Contains(c.Problem, found) || !strings.Contains(c.Kind, "uniswap-v3 swapper") {
			t.Errorf("check %+v, want %s named for %q", c, c.Contract, found)
		}
		delete(want, c.Contract)
	}
	if n := strings.Count(log.String(), "does not answer as its kind"); n != 2 {
		t.Errorf("%d log lines:\n%s", n, log.String())
	}

	got, _ := s.prepare(t, a.Server, 42161, s.ids[0], "auto", http.StatusOK)
	if got.SwapperID != "uni-v3" || got.Swappers[0] != p.Swapper.Hex() {
		t.Fatalf("auto went through %s (%v)", got.SwapperID, got.Swappers)
	}
	for _, c := range got.SwapperChoices {
		bad := c.ID != "uni-v3"
		if bad != (c.Profit == nil) || bad != strings.HasPrefix(c.Error, "left out of auto and direct: the start-up check found") {
			t.Errorf("auto's choice %s: profit %v, error %q", c.ID, c.Profit, c.Error)
		}
	}
	if paid := s.send(t, got); paid.String() != got.Profit || got.Profit == "0" {
		t.Fatalf("sent as built paid %s, the answer said %s", paid, got.Profit)
	}
	s.intoTheMoney(t)
	if got, _ := s.prepare(t, a.Server, 42161, s.ids[1], "direct", http.StatusOK); got.SwapperID != "uni-v3" {
		t.Fatalf("direct went through %s", got.SwapperID)
	}
}
