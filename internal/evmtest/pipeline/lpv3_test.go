package pipeline

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
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
	l.ix.Sync()
	var positions []trade.PositionRecord
	l.getJSON(gateway.PathPurchasePositions+"?chainId=42161&optionMarket="+p.Market.Hex()+"&user="+owner.Addr.Hex()+"&first=100&skip=0", &positions)
	if len(positions) != 1 || positions[0].OptionID != id.String() || !positions[0].Exercisable || len(positions[0].Legs) != len(legs) ||
		!strings.EqualFold(positions[0].Legs[0].Handler, l.r.Handler.Hex()) {
		l.t.Fatalf("positions on the V3 market: %+v, want option %s exercisable on the V3 handler", positions, id)
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
	if d := l.ix.Store.Get("Deployment", lower(l.r.Handler)); d == nil || d["kind"].Str != "HandlerV3" {
		l.t.Errorf("the V3 handler's Deployment %v", d)
	}
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
func (l *lpLife) routed(w liquidity.PreparedWithdrawal, tx *liquidity.WithdrawTx) {
	l.t.Helper()
	want, version := l.r.Handler, "V2"
	if l.v3 {
		want, version = l.p.V3.PositionManager, "V3"
	}
	if !strings.EqualFold(tx.Tx.To, want.Hex()) || w.Handler.Version != version {
		l.t.Errorf("prepared %s to %s, handler version %s; want %s, %s", tx.Tx.Data[:10], tx.Tx.To, w.Handler.Version, want, version)
	}
}

// buyPrepared buys a call of about half the V3 range's free collateral
// through the gateway: the strikes chain of the V3 market lists the range
// with the handler's getters' liquidity, the quote's legs are the V3
// handler's, and the prepared mintOption, sent as built, withdraws the
// quoted size from the range and takes the quoted cost from the buyer.
func (l *lpLife) buyPrepared(buyer *pt.Account) (*big.Int, *types.Receipt) {
	l.t.Helper()
	l.ix.Sync()
	v3Market := l.p.V3.Market
	var entries []map[string]market.Strike
	l.getJSON(gateway.PathStrikesChain+"?chainId=42161&optionMarket="+v3Market.Hex()+"&callsReach=50&putsReach=50", &entries)
	info := l.info()
	var key string
	var avail *big.Int
	for _, e := range entries {
		for k, s := range e {
			if !strings.EqualFold(s.Handler.Handler.Address, l.r.Handler.Hex()) || s.Meta.TickLower != l.r.TickLower {
				continue
			}
			free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
			if s.Type != "call" || s.Meta.TotalLiquidity != info.TotalLiquidity.String() || s.Meta.AvailableLiquidity != free.String() {
				l.t.Fatalf("V3 strike %+v, handler getters %+v", s, info)
			}
			key, avail = k, new(big.Int)
			avail.SetString(s.Meta.AvailableTokenLiquidity, 10)
		}
	}
	if key == "" {
		l.t.Fatalf("the V3 range is not in the V3 market's strikes chain: %v", entries)
	}
	q := fmt.Sprintf("?chainId=42161&optionMarket=%s&user=%s&type=call&strike=%s&ttl=3600&amount=%s", v3Market.Hex(), buyer.Addr.Hex(), key, new(big.Int).Div(avail, big.NewInt(2)))
	var prep trade.PreparedPurchase
	l.getJSON(gateway.PathPurchasePrepare+q+"&slippage=1", &prep)
	for _, leg := range prep.Quote.Legs {
		if !strings.EqualFold(leg.Handler, l.r.Handler.Hex()) {
			l.t.Fatalf("quote leg %+v is not the V3 handler's", leg)
		}
	}
	token := common.HexToAddress(prep.Quote.Token.Address)
	before := l.p.Balance(token, buyer.Addr)
	rc, err := l.p.Chain.SendRaw(buyer, common.HexToAddress(prep.Tx.To), hexutil.MustDecode(prep.Tx.Data), "prepared mintOption")
	if err != nil {
		l.t.Fatal(err)
	}
	ev := l.p.Find(rc, "LogMintOption")
	paid := new(big.Int).Sub(before, l.p.Balance(token, buyer.Addr))
	if !prep.Simulated || ev == nil || ev.Args["totalAssetWithdrawn"].(*big.Int).String() != prep.Quote.Size || paid.String() != prep.Quote.Cost {
		l.t.Fatalf("prepared purchase (simulated %v) withdrew %v and took %s; the answer said size %s, cost %s", prep.Simulated, ev, paid, prep.Quote.Size, prep.Quote.Cost)
	}
	return ev.Args["tokenId"].(*big.Int), rc
}

// getJSON asks the gateway for a 200 answer decoded into out.
func (l *lpLife) getJSON(url string, out any) {
	l.t.Helper()
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), out) != nil {
		l.t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
}

// v3Pricing gives the V3 market the pricing stack of a 2025 market
// (pricing contract, fee strategy at Arbitrum's 34% of the premium, a
// feeTo), an IV for the life's one-hour options: the gateway quotes and
// prepares only markets that price through optionPricing.
func v3Pricing(p *pt.Protocol) {
	on := *p // the same protocol, priced on the V3 market
	on.Market = p.V3.Market
	on.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{3600: 60}, FeePercentage: 340000})
}

// A chain whose position manager V2 is the January 2025 one (its
// withdrawReserveLiquidity reserves instead): the withdraw prepare of a
// matured reservation, for a holder who still holds shares, offers the
// burn and refuses the reserved withdrawal, saying why; sent anyway, the
// transaction takes shares and pays out no reserved liquidity.
func TestV3Jan2025ReservedWithdrawalRefused(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	mc := p.DeployMulticall3()
	p.DeployV3Jan2025()
	ix := New(t, p)
	ix.Watch(p.V3.PositionManager, "PositionManager")
	a, _ := liveGateway(t, p, ix, func(ch *config.Chain) { ch.Multicall3 = mc })
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	l := &lpLife{t: t, p: p, ix: ix, gw: a.Server, v3: true, hAbi: pt.HandlerV3.ABI,
		r: pt.Range{Handler: p.V3.Handler, Pool: p.Pool, TickLower: base + 10*p.TickSpacing, TickUpper: base + 11*p.TickSpacing}}
	l.id = p.TokenID(l.r)
	lp := p.Users[0]
	if _, _, err := p.Deposit(lp, l.r, e18(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reserve(lp, l.r, new(big.Int).Div(l.balance(lp.Addr), big.NewInt(4))); err != nil { // the holder keeps more shares than it reserves
		t.Fatal(err)
	}
	cooldown := p.Chain.Call(l.r.Handler, l.hAbi, "reserveCooldown")[0].(uint64)
	p.Chain.AdjustTime(time.Duration(cooldown+1) * time.Second)
	w := l.prepareWithdraw(lp, "max")
	refused := false
	for _, r := range w.Refused {
		refused = refused || (r.Transaction == "withdrawReserved" && strings.Contains(r.Reason, "reserves on it"))
	}
	if w.WithdrawReserved != nil || !refused || w.Withdraw == nil {
		t.Fatalf("withdraw prepare with the January 2025 position manager: withdraw %v, withdrawReserved %v, refused %v", w.Withdraw, w.WithdrawReserved, w.Refused)
	}
	reserved := p.Chain.Call(l.r.Handler, l.hAbi, "reservedLiquidityPerUser", l.id, lp.Addr)[0].(*big.Int)
	before := l.balance(lp.Addr)
	if _, err := p.WithdrawReserved(lp, l.r, reserved); err != nil {
		t.Fatal(err)
	}
	if l.balance(lp.Addr).Cmp(before) >= 0 {
		t.Fatalf("setup: the January 2025 withdrawReserveLiquidity took no shares (%s, then %s)", before, l.balance(lp.Addr))
	}
}
