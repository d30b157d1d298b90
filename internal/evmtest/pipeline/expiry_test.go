package pipeline

import (
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// expiry is the test protocol near its options' expiry, read through the
// gateway: an auto-exerciser (AutoExerciseTimeBased as deployed, with a
// fee recipient) and an open settlement contract (OpenSettlement) beside
// the market, every block indexed by the compiled mappings.
type expiry struct {
	t     *testing.T
	p     *pt.Protocol
	ix    *Indexer
	a     *app.App
	feeTo common.Address
	query string // chainId and optionMarket
}

// The expiry protection end to end. Four calls are bought: A and B in the
// money once the price moves, expiring within the hour; C out of the
// money in the same hour; D in the money but expiring an hour later. A's
// owner opts in to the auto-exerciser through the prepared delegate
// transaction; B's owner enables a delegate of its own the same way (no
// auto-exerciser: B must still be exercised by hand), and positions list
// exactly the delegates the market names. In A's last minutes positions
// say it will be exercised automatically, with the fee the auto-exerciser
// may take; the expiring list over the hour holds exactly A and B; the
// keeper exercises A through the auto-exerciser with the largest fee, and
// the contracts pay exactly the value, fee and rest positions named; the
// exercise history and A's outcome name the auto-exerciser. B is left to
// expire, then settled by anyone through the open settlement contract:
// the settlement history (its price and time too) and B's outcome match
// what the chain paid. C, settled by a settler key for nothing, is an
// option that expired worthless.
func TestExpiryProtection(t *testing.T) {
	e := newExpiry(t)
	p := e.p
	lp, buyer, other, keeper := p.Users[0], p.Users[1], p.Users[3], p.Users[2]
	_, tick := p.Slot0(p.Pool)
	a := e.buy(lp, buyer, tick+100, 3600)
	b := e.buy(lp, other, tick+120, 3600)
	c := e.buy(lp, buyer, tick+700, 3600)
	d := e.buy(lp, buyer, tick+140, 7200)
	if _, err := p.SwapToTick(keeper, p.Fee, tick+300); err != nil {
		t.Fatal(err)
	}

	e.optIn(buyer)
	e.enableOwnDelegate(other, keeper.Addr)
	mustSync(e)
	e.checkPositions(buyer, map[string]string{id(a): trade.StatusAutoExercise, id(c): trade.StatusOutOfTheMoney, id(d): trade.StatusAutoExercise})
	e.checkPositions(other, map[string]string{id(b): trade.StatusExerciseBeforeExpiry})

	// A's last two minutes.
	p.Chain.AdjustTime(time.Duration(p.OpData(a).Expiry.Int64()-int64(p.Chain.Now())-120) * time.Second)
	mustSync(e)
	exp := e.expiring(3600)
	if got, want := exp.ids(), []string{id(a), id(b)}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("expiring within the hour: %v, want exactly the options in the money inside it %v", got, want)
	}
	if r := exp.byID[id(a)]; r.Owner != buyer.Addr.Hex() || r.Status != trade.StatusAutoExercise || !r.AutoExercise.OptedIn {
		t.Errorf("expiring A: owner %s, status %s, opted in %v", r.Owner, r.Status, r.AutoExercise.OptedIn)
	}
	if r := exp.byID[id(b)]; r.Owner != other.Addr.Hex() || r.Status != trade.StatusExerciseBeforeExpiry || r.AutoExercise.OptedIn {
		t.Errorf("expiring B: owner %s, status %s, opted in %v", r.Owner, r.Status, r.AutoExercise.OptedIn)
	}
	pos := e.checkPositions(buyer, map[string]string{id(a): trade.StatusAutoExercise, id(c): trade.StatusOutOfTheMoney, id(d): trade.StatusAutoExercise})
	e.keeperExercises(a, pos[id(a)], exp.byID[id(a)])
	e.checkOutcome(buyer, a, trade.OutcomeExercised, p.AutoExercise)

	// B and C expire; B in the money, C not. Settled two hours later.
	p.Chain.AdjustTime(3 * time.Hour)
	mustSync(e)
	e.checkPositions(other, map[string]string{id(b): trade.StatusExpired})
	if got := e.expiring(3600).ids(); len(got) != 0 {
		t.Errorf("expiring within the hour after every option's expiry: %v, want none", got)
	}
	e.openSettle(keeper, b, other)
	e.keySettle(lp, c, buyer)
}

func newExpiry(t *testing.T) *expiry {
	p := pt.Deploy(t, pt.Config{})
	mc := p.DeployMulticall3()
	p.DeployOpenSettlement()
	feeTo := common.HexToAddress("0x000000000000000000000000000000000000fee1")
	p.Chain.MustSend(p.Owner, p.AutoExercise, pt.AutoExercise.ABI, "updateFeeTo", feeTo)
	ix := New(t, p)
	a, _ := liveGatewayWith(t, p, ix, func(cfg *config.Config) {
		ch := cfg.Chains[42161]
		ch.Multicall3 = mc
		ch.Handlers[p.Handler] = config.Handler{Name: "uniswap"}
		ch.Swappers = map[string]*config.Swapper{"uni-v3": {Kind: "uniswap-v3", Address: p.Swapper, Quoter: p.Quoter}}
		ch.AutoExerciser, ch.Settlers = p.AutoExercise, []common.Address{p.OpenSettlement}
		// Answers cached a nanosecond and never served stale: each read
		// below is of the chain as it is then.
		cfg.StrikesTTL, cfg.HistoryTTL, cfg.PrepareTTL = config.Duration(time.Nanosecond), config.Duration(time.Nanosecond), config.Duration(time.Nanosecond)
		cfg.StaleGrace = config.Duration(time.Nanosecond)
	})
	a.Pins.SetHeadAges(block.HeadAges{}) // no clock moves here: every miss asks where the subgraph is
	return &expiry{t: t, p: p, ix: ix, a: a, feeTo: feeTo, query: "chainId=42161&optionMarket=" + p.Market.Hex()}
}

func mustSync(e *expiry) { e.ix.Sync() }

func id(v *big.Int) string { return v.String() }

// buy deposits a range a tick spacing wide at lower and buys a call of
// ttl seconds on all of it for owner.
func (e *expiry) buy(lp, owner *pt.Account, lower int, ttl uint64) *big.Int {
	e.t.Helper()
	p := e.p
	lower -= lower % p.TickSpacing
	r := pt.Range{TickLower: lower, TickUpper: lower + p.TickSpacing}
	_, l, err := p.Deposit(lp, r, e18(1))
	if err != nil {
		e.t.Fatal(err)
	}
	optionID, _, err := p.Buy(owner, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: ttl, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
	if err != nil {
		e.t.Fatal(err)
	}
	return optionID
}

// get asks the gateway for path?query and decodes a 200 into out.
func (e *expiry) get(path, query string, out any) {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?"+query, nil))
	if rec.Code != http.StatusOK {
		e.t.Fatalf("%s?%s: %d %s", path, query, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		e.t.Fatalf("%s: %v", path, err)
	}
}

// refused asks path?query and checks the answer's status and code.
func (e *expiry) refused(path, query string, status int, code, param string) {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?"+query, nil))
	var body struct {
		Error struct{ Code, Param string } `json:"error"`
	}
	_ = json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != status || body.Error.Code != code || body.Error.Param != param {
		e.t.Errorf("%s?%s: %d %s, want %d %s on %q", path, query, rec.Code, rec.Body, status, code, param)
	}
}

// optIn has owner send the prepared delegate transaction (its delegate
// left to the chain's auto-exerciser), after the route's refusals of bad
// parameters and of an address that is no market.
func (e *expiry) optIn(owner *pt.Account) {
	e.t.Helper()
	p := e.p
	q := e.query + "&user=" + owner.Addr.Hex()
	e.refused(gateway.PathDelegatePrepare, q+"&enable=yes", 400, "INVALID_PARAMETER", "enable")
	e.refused(gateway.PathDelegatePrepare, q+"&enable=true&delegate="+owner.Addr.Hex(), 400, "INVALID_PARAMETER", "delegate")
	e.refused(gateway.PathDelegatePrepare, q+"&enable=true&delegate=0x0000000000000000000000000000000000000000", 400, "INVALID_PARAMETER", "delegate")
	e.refused(gateway.PathDelegatePrepare, "chainId=42161&optionMarket="+p.Pool.Hex()+"&user="+owner.Addr.Hex()+"&enable=true", 404, "MARKET_NOT_FOUND", "optionMarket")
	var prep trade.PreparedDelegate
	e.get(gateway.PathDelegatePrepare, q+"&enable=true", &prep)
	if prep.Delegate != p.AutoExercise.Hex() || !prep.IsAutoExerciser || prep.Enabled || !prep.Changes || !prep.Simulated || prep.From != owner.Addr.Hex() ||
		prep.Tx.To != p.Market.Hex() || prep.AutoExercise == nil {
		e.t.Fatalf("prepared delegate %+v", prep)
	}
	terms := prep.AutoExercise
	if terms.Window != 300 || terms.FeeTo != e.feeTo.Hex() || terms.MaxExecutorFee != "100000" || terms.ExecutorFeePrecision != "1000000" || terms.MaxFeeShare != "10%" {
		e.t.Errorf("auto-exerciser terms %+v, the contract's: 300 s, feeTo %s, 100000 / 1000000", terms, e.feeTo)
	}
	rc, err := p.Chain.SendRaw(owner, common.HexToAddress(prep.Tx.To), hexutil.MustDecode(prep.Tx.Data), "updateExerciseDelegate")
	if err != nil {
		e.t.Fatal(err)
	}
	ev := p.Find(rc, "LogUpdateExerciseDelegate")
	if ev == nil || ev.Args["owner"] != owner.Addr || ev.Args["delegate"] != p.AutoExercise || ev.Args["status"] != true {
		e.t.Fatalf("the prepared transaction emitted %v", ev)
	}
	if !p.Chain.Call(p.Market, pt.MarketV2.ABI, "exerciseDelegator", owner.Addr, p.AutoExercise)[0].(bool) {
		e.t.Fatal("exerciseDelegator(owner, auto-exerciser) is false after the prepared transaction")
	}
}

// enableOwnDelegate has owner enable a delegate of its own (not the
// auto-exerciser) through the prepared transaction: the answer says the
// delegate is no auto-exerciser, and the market then names it.
func (e *expiry) enableOwnDelegate(owner *pt.Account, delegate common.Address) {
	e.t.Helper()
	p := e.p
	var prep trade.PreparedDelegate
	e.get(gateway.PathDelegatePrepare, e.query+"&user="+owner.Addr.Hex()+"&delegate="+delegate.Hex()+"&enable=true", &prep)
	if prep.Delegate != delegate.Hex() || prep.IsAutoExerciser || prep.AutoExercise != nil || prep.Enabled || !prep.Changes || !prep.Simulated {
		e.t.Fatalf("prepared own delegate %+v", prep)
	}
	if _, err := p.Chain.SendRaw(owner, common.HexToAddress(prep.Tx.To), hexutil.MustDecode(prep.Tx.Data), "updateExerciseDelegate"); err != nil {
		e.t.Fatal(err)
	}
	if !p.Chain.Call(p.Market, pt.MarketV2.ABI, "exerciseDelegator", owner.Addr, delegate)[0].(bool) {
		e.t.Fatal("exerciseDelegator(owner, delegate) is false after the prepared transaction")
	}
}

// checkPositions asks the owner's positions and checks each listed
// option's status, its value against prepare's profit, and the
// auto-exerciser's fee against the contract's constants and fee
// recipient; it returns them by option id.
func (e *expiry) checkPositions(owner *pt.Account, want map[string]string) map[string]trade.PositionRecord {
	e.t.Helper()
	var list []trade.PositionRecord
	e.get(gateway.PathPurchasePositions, e.query+"&user="+owner.Addr.Hex()+"&first=100&skip=0", &list)
	out := map[string]trade.PositionRecord{}
	for _, r := range list {
		out[r.OptionID] = r
	}
	if len(out) != len(want) {
		e.t.Fatalf("positions of %s: %d, want %d (%v)", owner.Addr, len(out), len(want), want)
	}
	for optionID, status := range want {
		r, ok := out[optionID]
		if !ok || r.Status != status {
			e.t.Fatalf("position %s: status %q, want %q (%s)", optionID, r.Status, status, r.StatusMessage)
		}
		e.checkRisk(r, owner)
	}
	return out
}

// checkRisk holds a position's risk to the chain: time to expiry from the
// head's time, the value to the prepared exercise's profit (in the money)
// or nothing, and the fee to value x MAX_EXECUTOR_FEE / precision.
func (e *expiry) checkRisk(r trade.PositionRecord, owner *pt.Account) {
	e.t.Helper()
	p := e.p
	optionID, _ := new(big.Int).SetString(r.OptionID, 10)
	if left := p.OpData(optionID).Expiry.Int64() - int64(p.Chain.Now()); r.TimeToExpiry != left {
		e.t.Errorf("option %s: timeToExpiry %d, want %d", r.OptionID, r.TimeToExpiry, left)
	}
	value := big.NewInt(0)
	if r.InTheMoney {
		var prep trade.Prepared
		e.get(gateway.PathExercisePrepare, e.query+"&optionId="+r.OptionID+"&swapperId=uni-v3&slippage=1", &prep)
		value, _ = new(big.Int).SetString(prep.Profit, 10)
	}
	if r.ExerciseValue == nil || *r.ExerciseValue != value.String() || (value.Sign() > 0) != r.InTheMoney {
		e.t.Errorf("option %s: exerciseValue %v, inTheMoney %v; the prepared exercise pays %s", r.OptionID, r.ExerciseValue, r.InTheMoney, value)
	}
	ae := r.AutoExercise
	opted := p.Chain.Call(p.Market, pt.MarketV2.ABI, "exerciseDelegator", owner.Addr, p.AutoExercise)[0].(bool)
	// every delegate the owner enabled: the auto-exerciser, or the keeper's
	// own account (the test enables no other)
	var delegates []string
	for _, d := range []common.Address{p.AutoExercise, p.Users[2].Addr} {
		if p.Chain.Call(p.Market, pt.MarketV2.ABI, "exerciseDelegator", owner.Addr, d)[0].(bool) {
			delegates = append(delegates, strings.ToLower(d.Hex()))
		}
	}
	got := make([]string, len(r.Delegates))
	for i, d := range r.Delegates {
		got[i] = strings.ToLower(d)
	}
	sort.Strings(got)
	sort.Strings(delegates)
	if strings.Join(got, ",") != strings.Join(delegates, ",") {
		e.t.Errorf("option %s: delegates %v, the market's exerciseDelegator says %v", r.OptionID, r.Delegates, delegates)
	}
	fee := new(big.Int).Div(new(big.Int).Mul(value, big.NewInt(100_000)), big.NewInt(1_000_000))
	if ae == nil || ae.OptedIn != opted || ae.MaxFee != fee.String() || ae.MinToOwner != new(big.Int).Sub(value, fee).String() ||
		ae.From != new(big.Int).Sub(p.OpData(optionID).Expiry, big.NewInt(300)).String() {
		e.t.Errorf("option %s: autoExercise %+v; opted in %v, fee %s of %s", r.OptionID, ae, opted, fee, value)
	}
}

// expiringList is one answer of the expiring options, by id.
type expiringList struct {
	list []trade.ExpiringRecord
	byID map[string]trade.ExpiringRecord
}

func (l expiringList) ids() []string {
	out := []string{}
	for _, r := range l.list {
		out = append(out, r.OptionID)
	}
	return out
}

// expiring asks the options expiring within seconds, in pages of one,
// and checks the pages join into the whole list and keep its order (by
// expiry).
func (e *expiry) expiring(within int) expiringList {
	e.t.Helper()
	q := e.query + "&within=" + strconv.Itoa(within)
	e.refused(gateway.PathExpiringOptions, e.query+"&within=0&first=10&skip=0", 400, "INVALID_PARAMETER", "within")
	e.refused(gateway.PathExpiringOptions, "chainId=42161&optionMarket="+e.p.Pool.Hex()+"&within=60&first=10&skip=0", 404, "MARKET_NOT_FOUND", "optionMarket")
	var all []trade.ExpiringRecord
	e.get(gateway.PathExpiringOptions, q+"&first=100&skip=0", &all)
	out := expiringList{list: all, byID: map[string]trade.ExpiringRecord{}}
	var paged []string
	for i := range len(all) + 1 {
		var page []trade.ExpiringRecord
		e.get(gateway.PathExpiringOptions, q+"&first=1&skip="+strconv.Itoa(i), &page)
		for _, r := range page {
			paged = append(paged, r.OptionID)
		}
	}
	if strings.Join(paged, ",") != strings.Join(out.ids(), ",") {
		e.t.Errorf("expiring in pages of one %v, in one page %v", paged, out.ids())
	}
	if !sort.SliceIsSorted(all, func(i, j int) bool { return all[i].Expiry < all[j].Expiry }) {
		e.t.Errorf("expiring list not soonest first: %v", out.ids())
	}
	for _, r := range all {
		out.byID[r.OptionID] = r
		optionID, _ := new(big.Int).SetString(r.OptionID, 10)
		if left := e.p.OpData(optionID).Expiry.Int64() - int64(e.p.Chain.Now()); !r.InTheMoney || left < 0 || left > int64(within) {
			e.t.Errorf("expiring %s: in the money %v, %d s left of a %d s window", r.OptionID, r.InTheMoney, left, within)
		}
		if owner := e.p.OwnerOf(optionID); r.Owner != owner.Hex() {
			e.t.Errorf("expiring %s: owner %s, the chain's %s", r.OptionID, r.Owner, owner)
		}
	}
	return out
}

// keeperExercises has the auto-exerciser's executor exercise the option
// with the largest fee, through the legs the prepared exercise chose, and
// checks the contracts paid exactly what positions and the expiring list
// named: the value, the fee to feeTo, the rest to the owner; then the
// exercise history.
func (e *expiry) keeperExercises(optionID *big.Int, pos trade.PositionRecord, exp trade.ExpiringRecord) {
	e.t.Helper()
	p := e.p
	var prep trade.Prepared
	e.get(gateway.PathExercisePrepare, e.query+"&optionId="+optionID.String()+"&swapperId=uni-v3&slippage=1", &prep)
	var legs []pt.ExerciseLeg
	for i, l := range prep.Legs {
		liq := big.NewInt(0)
		if l.Exercised {
			liq, _ = new(big.Int).SetString(l.Liquidity, 10)
		}
		legs = append(legs, pt.ExerciseLeg{Swapper: common.HexToAddress(prep.Swappers[i]), SwapData: hexutil.MustDecode(prep.SwapData[i]), Liquidity: liq})
	}
	owner := p.OwnerOf(optionID)
	ownerBefore, feeBefore := p.Balance(p.PutAsset, owner), p.Balance(p.PutAsset, e.feeTo)
	rc, err := p.AutoExerciseOption(optionID, big.NewInt(100_000), legs)
	if err != nil {
		e.t.Fatal(err)
	}
	profit := p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int)
	fee, toOwner := new(big.Int).Sub(p.Balance(p.PutAsset, e.feeTo), feeBefore), new(big.Int).Sub(p.Balance(p.PutAsset, owner), ownerBefore)
	for _, got := range []struct {
		what   string
		r      trade.PositionRecord
		profit string
	}{{"positions", pos, *pos.ExerciseValue}, {"expiring", exp.PositionRecord, *exp.ExerciseValue}} {
		if got.profit != profit.String() || got.r.AutoExercise.MaxFee != fee.String() || got.r.AutoExercise.MinToOwner != toOwner.String() {
			e.t.Errorf("%s said value %s, fee %s, to the owner %s; the contracts paid %s, %s to feeTo, %s to the owner",
				got.what, got.profit, got.r.AutoExercise.MaxFee, got.r.AutoExercise.MinToOwner, profit, fee, toOwner)
		}
	}
	mustSync(e)
	var hist []trade.ExerciseRecord
	e.get(gateway.PathExerciseHistory, e.query+"&user="+owner.Hex()+"&first=10&skip=0", &hist)
	if len(hist) != 1 || hist[0].OptionID != optionID.String() || hist[0].Profit != profit.String() || hist[0].Exerciser != strings.ToLower(p.AutoExercise.Hex()) ||
		!hist[0].Delegated || hist[0].ProfitToOwner == nil || *hist[0].ProfitToOwner != toOwner.String() {
		e.t.Errorf("exercise history %+v; the auto-exerciser paid %s of %s to the owner", hist, toOwner, profit)
	}
}

// checkOutcome holds the option's outcome in its owner's purchase history.
func (e *expiry) checkOutcome(owner *pt.Account, optionID *big.Int, status string, by common.Address) trade.Outcome {
	e.t.Helper()
	var list []trade.PurchaseRecord
	e.get(gateway.PathPurchaseHistory, e.query+"&user="+owner.Addr.Hex()+"&first=100&skip=0", &list)
	for _, r := range list {
		if r.OptionID != optionID.String() {
			continue
		}
		o := r.Outcome
		who := o.ExercisedBy
		if status == trade.OutcomeSettled || status == trade.OutcomeExpiredWorthless {
			who = o.SettledBy
		}
		if o.Status != status || who == nil || !strings.EqualFold(*who, by.Hex()) {
			e.t.Errorf("option %s: outcome %+v, want %s by %s", optionID, o, status, by)
		}
		return o
	}
	e.t.Fatalf("option %s is not in %s's purchases", optionID, owner.Addr)
	return trade.Outcome{}
}

// openSettle has anyone settle the expired option through the open
// settlement contract, and checks the settlement history and the
// option's outcome against what the caller received.
func (e *expiry) openSettle(caller *pt.Account, optionID *big.Int, owner *pt.Account) {
	e.t.Helper()
	p := e.p
	before := p.Balance(p.PutAsset, caller.Addr)
	rc, err := p.OpenSettle(caller, optionID, e.settleLegs(optionID))
	if err != nil {
		e.t.Fatal(err)
	}
	kept := new(big.Int).Sub(p.Balance(p.PutAsset, caller.Addr), before)
	if kept.Sign() <= 0 {
		e.t.Fatalf("the open settlement of an option in the money paid its caller %s", kept)
	}
	mustSync(e)
	r := e.settlement(owner, optionID, rc)
	if r.Settler != p.OpenSettlement.Hex() || r.Sender != caller.Addr.Hex() || !r.KnownSettler || r.Outcome != trade.OutcomeSettled ||
		r.SettlerProfit != kept.String() || r.SettlerCollateral != "0" || r.TxHash != strings.ToLower(rc.TxHash.Hex()) {
		e.t.Errorf("settlement %+v; the caller %s received %s through %s", r, caller.Addr, kept, p.OpenSettlement)
	}
	if o := e.checkOutcome(owner, optionID, trade.OutcomeSettled, p.OpenSettlement); o.SettlerProfit == nil || *o.SettlerProfit != kept.String() {
		e.t.Errorf("outcome's settlerProfit %v, the settlement kept %s", o.SettlerProfit, kept)
	}
}

// keySettle has a settler key settle an expired option out of the money:
// nothing moves to it, and the option expired worthless.
func (e *expiry) keySettle(settler *pt.Account, optionID *big.Int, owner *pt.Account) {
	e.t.Helper()
	p := e.p
	rc, err := p.Settle(settler, optionID, e.settleLegs(optionID))
	if err != nil {
		e.t.Fatal(err)
	}
	mustSync(e)
	r := e.settlement(owner, optionID, rc)
	if r.Settler != settler.Addr.Hex() || r.Sender != settler.Addr.Hex() || r.KnownSettler || r.Outcome != trade.OutcomeExpiredWorthless || r.SettlerProfit != "0" {
		e.t.Errorf("settlement %+v by the key %s of an option out of the money", r, settler.Addr)
	}
	e.checkOutcome(owner, optionID, trade.OutcomeExpiredWorthless, settler.Addr)
}

// settleLegs settles every leg in full through the SwapRouter swapper.
func (e *expiry) settleLegs(optionID *big.Int) []pt.ExerciseLeg {
	var legs []pt.ExerciseLeg
	for _, l := range e.p.OpTicks(optionID) {
		legs = append(legs, pt.ExerciseLeg{Swapper: e.p.Swapper, SwapData: pt.UniV3SwapData(e.p.Fee, big.NewInt(0)), Liquidity: l.Liquidity})
	}
	return legs
}

// settlement is the owner's settlement of the option in its history (of
// the market, and of every market: the same record), its leg checked
// against the liquidity the settlement's receipt gave back to the handler.
func (e *expiry) settlement(owner *pt.Account, optionID *big.Int, rc *types.Receipt) trade.SettlementRecord {
	e.t.Helper()
	q := "chainId=42161&user=" + owner.Addr.Hex() + "&first=10&skip=0"
	e.refused(gateway.PathSettlements, q+"&optionMarket=0x12", 400, "INVALID_PARAMETER", "optionMarket")
	var one, all []trade.SettlementRecord
	e.get(gateway.PathSettlements, q+"&optionMarket="+e.p.Market.Hex(), &one)
	e.get(gateway.PathSettlements, q, &all)
	b1, _ := json.Marshal(one)
	b2, _ := json.Marshal(all)
	if string(b1) != string(b2) || len(one) == 0 || one[0].OptionID != optionID.String() {
		e.t.Fatalf("settlements of %s: %s; of every market %s; want option %s newest", owner.Addr, b1, b2, optionID)
	}
	r := one[0]
	unused := e.p.FindAll(rc, "LogUnusePosition")
	if r.Owner != owner.Addr.Hex() || r.Market != e.p.Market.Hex() || len(r.Legs) != 1 || len(unused) == 0 ||
		r.Legs[0].Liquidity != unused[0].Args["liquidityUnused"].(*big.Int).String() || r.BlockNumber != rc.BlockNumber.String() {
		e.t.Errorf("settlement %+v of option %s owned by %s", r, optionID, owner.Addr)
	}
	header, err := e.p.Chain.Client().HeaderByNumber(e.t.Context(), rc.BlockNumber)
	if err != nil {
		e.t.Fatal(err)
	}
	if price := e.primePrice(rc.BlockNumber.Uint64()); r.Timestamp != strconv.FormatUint(header.Time, 10) || math.Abs(r.SettlePrice/price-1) > 1e-9 {
		e.t.Errorf("settlement of option %s: time %s, price %v; the block's time %d, the prime pool's price after it %v", optionID, r.Timestamp, r.SettlePrice, header.Time, price)
	}
	return r
}

// primePrice is the prime pool's price at the end of block n (the
// settlement's own block: its swaps included), put asset per call asset,
// from slot0: (sqrtPriceX96 / 2^96)^2 scaled by the tokens' decimals.
func (e *expiry) primePrice(n uint64) float64 {
	p := e.p
	sq := new(big.Float).Quo(new(big.Float).SetInt(slot0At(e.t, p, p.Pool, n)), new(big.Float).SetInt(new(big.Int).Lsh(big.NewInt(1), 96)))
	raw, _ := new(big.Float).Mul(sq, sq).Float64() // token1 per token0, base units
	scale := math.Pow(10, float64(p.CallDecimals)-float64(p.PutDecimals))
	if p.CallAsset == p.Token0 {
		return raw * scale
	}
	return scale / raw
}
