package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
)

// TestLPLifeV3 is the liquidity providers' life on a V3 handler, as
// Stryke's 2025 deployments have it: the handler whitelisted on a
// position manager V2 (a second static data source of the subgraph) with
// the pool in its whitelistedPools, options bought and exercised on the
// option market of that position manager. Deposits, the burn, the
// reservation and the reserved withdrawal are the gateway's prepared
// transactions sent as built (the last two through the position manager
// V2, the only caller the handler takes them from); every LP read equals
// the handler's getters; the exercise is indexed and served as the
// market's event says.
func TestLPLifeV3(t *testing.T) { runLPLife(t, 3) }

// exercise exercises option id of the life's market whole (the V3 one
// alone: the V1 and V2 pipelines exercise elsewhere) at the price the
// life left, then checks the indexed option, the range against the
// handler's getters and the gateway's exercise history against the
// market's LogExerciseOption.
func (l *lpLife) exercise(owner *pt.Account, id *big.Int) {
	l.t.Helper()
	if !l.v3 {
		return
	}
	p := *l.p // the same protocol, read on the V3 market
	p.Market = l.p.V3.Market
	var legs []pt.ExerciseLeg
	for _, leg := range p.OpTicks(id) {
		legs = append(legs, pt.ExerciseLeg{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(p.Fee, big.NewInt(0)), Liquidity: leg.Liquidity})
	}
	rc, err := p.ExerciseV3(owner, id, legs)
	if err != nil {
		l.t.Fatal(err)
	}
	ex := p.Find(rc, "LogExerciseOption")
	if ex == nil || ex.Args["totalProfit"].(*big.Int).Sign() <= 0 {
		l.t.Fatalf("the exercise paid nothing: %v", ex)
	}
	l.check("exercise")
	checkOption(l.t, &p, l.ix, id, "Exercised")
	info := l.info()
	s := l.ix.Store.Get("Strike", lower(l.r.Handler)+"-"+lower(l.r.Pool)+"-"+lower(l.r.Hook)+"-"+big.NewInt(int64(l.r.TickLower)).String()+"-"+big.NewInt(int64(l.r.TickUpper)).String())
	if s == nil || s["totalLiquidity"].Big.Cmp(info.TotalLiquidity) != 0 || s["usedLiquidity"].Big.Cmp(info.LiquidityUsed) != 0 ||
		s["reservedLiquidity"].Big.Cmp(info.ReservedLiquidity) != 0 {
		l.t.Errorf("V3 Strike %v, handler getters %+v", s, info)
	}
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathExerciseHistory+"?chainId=42161&first=10&skip=0&user="+owner.Addr.Hex()+"&optionMarket="+p.Market.Hex(), nil))
	var got []map[string]any
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &got) != nil || len(got) != 1 {
		l.t.Fatalf("exercise history: %d %s", rec.Code, rec.Body)
	}
	if str(got[0]["optionId"]) != id.String() || str(got[0]["profit"]) != ex.Args["totalProfit"].(*big.Int).String() ||
		str(got[0]["size"]) != ex.Args["totalAssetRelocked"].(*big.Int).String() {
		l.t.Errorf("exercise record %v, LogExerciseOption %v", got[0], ex.Args)
	}
}

// compoundRefused: a deposit into a V3 range holding swap fees the
// handler compounds (one token's owed fees above 1000 units, the other's
// below what 2 units of liquidity take) reverts, as the real
// UniswapV3SingleTickLiquidityHandlerV3 does: it re-adds the collected
// fees through its internal addLiquidity, whose Uniswap mint callback
// pulls them from its caller, the position manager V2, which has no
// allowance left for them (the V2 handler re-adds them through an
// external call to itself, paying from its own balance). Sent directly,
// the deposit reverts; the gateway refuses to prepare it with
// DEPOSIT_WOULD_REVERT and the handler's revert reason.
func (l *lpLife) compoundRefused(lp *pt.Account, liquidity *big.Int) {
	l.t.Helper()
	if _, _, err := l.p.Deposit(lp, l.r, liquidity); !pt.IsRevert(err, "ERC20: insufficient allowance") {
		l.t.Fatalf("a deposit compounding fees on the V3 handler: %v, want the allowance revert", err)
	}
	l.depositRefused(lp, liquidity, "DEPOSIT_WOULD_REVERT", "insufficient allowance")
}

// unlistedPoolRefused: with the pool off the V3 handler's
// whitelistedPools, a deposit sent directly reverts NotWhitelistedPool,
// and the gateway refuses it with POOL_NOT_WHITELISTED before any
// simulation; listed again, the life goes on.
func (l *lpLife) unlistedPoolRefused(lp *pt.Account) {
	l.t.Helper()
	if !l.v3 {
		return
	}
	l.p.WhitelistPool(l.r.Handler, l.r.Pool, false)
	if _, _, err := l.p.Deposit(lp, l.r, e18(1)); !pt.IsRevert(err, "NotWhitelistedPool") {
		l.t.Fatalf("a deposit into an unlisted pool: %v", err)
	}
	l.depositRefused(lp, e18(1), "POOL_NOT_WHITELISTED", "whitelistedPools")
	l.p.WhitelistPool(l.r.Handler, l.r.Pool, true)
}

// depositRefused: the deposit prepare answers 422 code, its message
// containing reason.
func (l *lpLife) depositRefused(lp *pt.Account, liquidity *big.Int, code, reason string) {
	l.t.Helper()
	l.ix.Sync()
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathDepositPrepare+"?"+l.depositQuery(lp, liquidity), nil))
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if rec.Code != http.StatusUnprocessableEntity || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code != code ||
		!strings.Contains(e.Error.Message, reason) {
		l.t.Fatalf("deposit prepare: %d %s, want %s (%s)", rec.Code, rec.Body, code, reason)
	}
}

// routed: a prepared reservation or reserved withdrawal goes to the V2
// handler itself, or to a V3 handler's position manager V2 (the answer
// naming the generation V3), never to the V3 handler.
func (l *lpLife) routed(w service.PreparedWithdrawal, tx *service.WithdrawTx) {
	l.t.Helper()
	want, version := l.r.Handler, "V2"
	if l.v3 {
		want, version = l.p.V3.PositionManager, "V3"
	}
	if !strings.EqualFold(tx.Tx.To, want.Hex()) || w.Handler.Version != version {
		l.t.Errorf("prepared %s to %s, handler version %s; want %s, %s", tx.Tx.Data[:10], tx.Tx.To, w.Handler.Version, want, version)
	}
}
