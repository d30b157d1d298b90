package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	lpside "github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// lpLife follows liquidity providers through a range's whole life on one
// handler (V2, or V1 with its ERC-1155 shares and no reservations): each
// step is sent on the simulated chain, indexed by the compiled mappings,
// served by the Graph Node emulator and read through the gateway, and
// every figure of the three LP reads is checked against the handler's own
// getters (balanceOf, convertToAssets, tokenIds, reservedLiquidityPerUser,
// reserveCooldown, tokensToPullForMint for token amounts) or against what
// the chain does when asked (an eth_call of burnPosition or
// withdrawReserveLiquidity from the holder succeeds for what is said to
// be withdrawable); the history records against the events of the
// receipts (the handler's LogMintedPosition, LogBurnedPosition,
// LogWithdrawReservedLiquidity, the position manager's share counts, the
// pool's own Mint and Burn amounts); on V2, the statistics' open interest,
// expired options and TVL (reserved liquidity included) against the
// market's and the handler's getters at the answer's block. Principal is
// kept by the test from the receipts, independently of the subgraph.
// Deposits, the reservation, the reserved withdrawal and the burn are the
// gateway's prepared transactions, sent at once as they came and checked
// to move exactly the tokens and shares the gateway said; the share
// transfer and the options are sent directly.
type lpLife struct {
	t        *testing.T
	p        *pt.Protocol
	ix       *Indexer
	gw       http.Handler
	app      *app.App
	v1       bool
	v3       bool // the V3 handler, reached through the position manager V2
	r        pt.Range
	id       *big.Int
	hAbi     abi.ABI
	step     int
	users    []*pt.Account
	principl map[common.Address]*big.Int // the test's own principal per holder
	deposits map[common.Address][]*types.Receipt
	withdraw map[common.Address][]lpWithdrawal
	reader   *chain.Reader // the measuring device for fees: the handler's own execution
}

type lpWithdrawal struct {
	kind string
	rc   *types.Receipt
}

func TestLPLifeV2(t *testing.T) { runLPLife(t, 2) }

func TestLPLifeV1(t *testing.T) { runLPLife(t, 1) }

// runLPLife runs the life on the handler of a generation: 1, 2, or 3 (the
// V3 handler of the position manager V2, on its own option market).
func runLPLife(t *testing.T, gen int) {
	v1 := gen == 1
	p := pt.Deploy(t, pt.Config{})
	mc := p.DeployMulticall3()
	if v1 {
		p.DeployV1()
	}
	if gen == 3 {
		p.DeployV3()
		v3Pricing(p)
	}
	ix := New(t, p)
	if gen == 3 { // a second static position manager, as the manifests list both
		ix.Watch(p.V3.PositionManager, "PositionManager")
	}
	// Prepared withdrawals are asked at every step: none may come from the
	// cache (a nanosecond is the shortest TTL the configuration takes).
	a, _ := liveGatewayWith(t, p, ix, func(cfg *config.Config) {
		cfg.Chains[42161].Multicall3, cfg.PrepareTTL = mc, config.Duration(time.Nanosecond)
		cfg.USDStablecoins = []string{"42161:" + p.PutAsset.Hex()} // the statistics' usd figures too
		if err := cfg.Validate(); err != nil {                     // which hands each chain its stablecoins
			t.Fatal(err)
		}
	})
	a.Pins.SetHeadAges(block.HeadAges{}) // every miss asks where the subgraph is: each step's answers are at its head
	_, tick := p.Slot0(p.Pool)
	base := tick - tick%p.TickSpacing
	l := &lpLife{t: t, p: p, ix: ix, gw: a.Server, app: a, v1: v1, v3: gen == 3, users: p.Users, reader: testenv.NewReader(t, p.Chain.RPC(), mc),
		principl: map[common.Address]*big.Int{}, deposits: map[common.Address][]*types.Receipt{}, withdraw: map[common.Address][]lpWithdrawal{}}
	l.r = pt.Range{Handler: p.Handler, Pool: p.Pool, TickLower: base + 10*p.TickSpacing, TickUpper: base + 11*p.TickSpacing}
	l.hAbi = pt.HandlerV2.ABI
	l.id = p.TokenID(l.r)
	if v1 {
		l.r.Handler, l.hAbi = p.HandlerV1, pt.HandlerV1.ABI
		l.id = p.TokenIDV1(l.r)
	}
	if l.v3 {
		l.r.Handler, l.hAbi = p.V3.Handler, pt.HandlerV3.ABI
		l.id = p.TokenID(l.r)
	}
	lp, lp2, buyer, trader := p.Users[0], p.Users[3], p.Users[1], p.Users[2]
	l.users = []*pt.Account{lp, lp2}

	l.unlistedPoolRefused(lp)
	l.deposit(lp, e18(2))
	l.check("deposit")
	l.deposit(lp2, e18(1))
	l.check("second deposit")
	l.transfer(lp, lp2, new(big.Int).Div(l.balance(lp.Addr), big.NewInt(4)))
	l.check("share transfer")

	// An option bought on the range: its liquidity is locked, and its
	// premium is donated to the range (LogDonation), locked for
	// lockedBlockDuration blocks and released linearly.
	used := new(big.Int).Div(l.info().TotalLiquidity, big.NewInt(2))
	o := pt.Option{IsCall: true, TickLower: l.r.TickLower, TickUpper: l.r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: l.r, Liquidity: used}}}
	var call *big.Int
	var rc *types.Receipt
	if l.v3 { // the gateway's prepared purchase, on V3 liquidity
		call, rc = l.buyPrepared(buyer)
	} else {
		call, rc = l.buy(buyer, o)
	}
	if p.Find(rc, "LogDonation") == nil {
		t.Fatal("the purchase donated nothing to the range")
	}
	l.check("option bought, donation locked")
	full := l.donationLocked()
	for range 37 {
		p.Chain.Commit()
	}
	l.check("donation lock part released")
	part := l.donationLocked()
	for range 70 {
		p.Chain.Commit()
	}
	l.check("donation lock over")
	if full.Sign() <= 0 || part.Sign() <= 0 || part.Cmp(full) >= 0 || l.donationLocked().Sign() != 0 {
		t.Fatalf("the donation lock did not decay over the steps: %s, then %s, then %s", full, part, l.donationLocked())
	}

	// Fees earned in token1 only (the price crosses the range upwards),
	// compounded by the next deposit (LogFeeCompound).
	if _, err := p.SwapToTick(trader, p.Fee, l.r.TickUpper+30*p.TickSpacing); err != nil {
		t.Fatal(err)
	}
	l.check("price through the range")
	if l.v3 {
		l.compoundRefused(lp2, e18(1))
	} else if dep := l.deposit(lp2, e18(1)); p.Find(dep, "LogFeeCompound") == nil {
		t.Fatal("the deposit compounded no fees")
	}
	l.check("fee compound")
	l.exercise(buyer, call) // V3: the call, in the money now, before it expires
	// Fees again, in both tokens (the price down through the range and
	// back), not compounded: the next use of the range pokes them into
	// what the handler owes it (tokensOwed), and a burn pays a share.
	for _, to := range []int{l.r.TickLower - 30*p.TickSpacing, l.r.TickUpper + 30*p.TickSpacing} {
		if _, err := p.SwapToTick(trader, p.Fee, to); err != nil {
			t.Fatal(err)
		}
	}
	l.check("fees not compounded")

	if !v1 {
		// A second option takes most of what is free, so that options hold
		// part of lp's shares: the gateway's withdraw prepare reserves them.
		info := l.info()
		free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
		put := pt.Option{IsCall: false, TickLower: l.r.TickLower, TickUpper: l.r.TickUpper, TTL: 3600,
			Legs: []pt.Leg{{Range: l.r, Liquidity: new(big.Int).Div(new(big.Int).Mul(free, big.NewInt(7)), big.NewInt(10))}}}
		l.buy(buyer, put)
		l.check("second option bought")
		w := l.prepareWithdraw(lp, "max")
		if w.Reserve == nil {
			t.Fatalf("no reservation prepared: %+v", w)
		}
		l.routed(w, w.Reserve)
		rc := l.sendWithdrawal(lp, w.Reserve)
		l.burnt(lp.Addr, rc, "reserve")
		l.check("reservation")
		p.Chain.AdjustTime(3 * time.Hour)
		l.check("cooldown half over")
		cooldown := p.Chain.Call(l.r.Handler, l.hAbi, "reserveCooldown")[0].(uint64)
		p.Chain.AdjustTime(time.Duration(cooldown) * time.Second)
		l.check("cooldown over")
		w = l.prepareWithdraw(lp, "max")
		if w.WithdrawReserved == nil {
			t.Fatalf("no reserved withdrawal prepared: %+v", w)
		}
		l.routed(w, w.WithdrawReserved)
		rc = l.sendWithdrawal(lp, w.WithdrawReserved)
		l.withdraw[lp.Addr] = append(l.withdraw[lp.Addr], lpWithdrawal{"withdrawReserved", rc})
		l.check("reserved withdrawal")
	}

	// A plain withdrawal of what can be burnt now.
	w := l.prepareWithdraw(lp2, "max") // what options leave free
	if w.Withdraw == nil {
		t.Fatalf("no withdrawal prepared: %+v", w)
	}
	rc = l.sendWithdrawal(lp2, w.Withdraw)
	l.burnt(lp2.Addr, rc, "burn")
	l.check("withdrawal")

	if gen == 2 { // the router's deposits go through the 2024 position manager
		// lp2 deposits for lp through the router: the deposit is lp's.
		l.depositVia(lp2, lp.Addr, e18(1))
		l.check("deposit through the router")
	}
}

// buy buys o on the market of the life's handler generation.
func (l *lpLife) buy(buyer *pt.Account, o pt.Option) (*big.Int, *types.Receipt) {
	l.t.Helper()
	buy := l.p.Buy
	switch {
	case l.v1:
		buy = l.p.BuyV1
	case l.v3:
		buy = l.p.BuyV3
	}
	id, rc, err := buy(buyer, o)
	if err != nil {
		l.t.Fatal(err)
	}
	return id, rc
}

// prepare asks the gateway for a prepared transaction.
func (l *lpLife) prepare(path, query string, out any) {
	l.t.Helper()
	l.ix.Sync() // the markets a deposit can serve come from the subgraph
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path+"?"+query, nil))
	if rec.Code != http.StatusOK {
		l.t.Fatalf("%s?%s: %d %s", path, query, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		l.t.Fatal(err)
	}
}

// prepareWithdraw asks GET /clamm/withdraw/prepare for shares ("max" or a count).
func (l *lpLife) prepareWithdraw(lp *pt.Account, shares string) lpside.PreparedWithdrawal {
	l.t.Helper()
	var w lpside.PreparedWithdrawal
	l.prepare(gateway.PathWithdrawPrepare, l.withdrawQuery(lp, shares), &w)
	return w
}

func (l *lpLife) withdrawQuery(lp *pt.Account, shares string) string {
	return fmt.Sprintf("chainId=42161&user=%s&handler=%s&pool=%s&hook=%s&tickLower=%d&tickUpper=%d&shares=%s",
		lp.Addr.Hex(), l.r.Handler.Hex(), l.r.Pool.Hex(), l.r.Hook.Hex(), l.r.TickLower, l.r.TickUpper, shares)
}

// askWithdraw asks GET /clamm/withdraw/prepare, whatever it answers.
func (l *lpLife) askWithdraw(lp *pt.Account, shares string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathWithdrawPrepare+"?"+l.withdrawQuery(lp, shares), nil))
	return rec
}

// sendWithdrawal sends a prepared withdrawal, reservation or reserved
// withdrawal at once and checks it burnt the shares and paid the tokens
// the gateway said.
func (l *lpLife) sendWithdrawal(lp *pt.Account, w *lpside.WithdrawTx) *types.Receipt {
	l.t.Helper()
	shares, _ := new(big.Int).SetString(w.Shares, 10)
	return l.sendPrepared(lp, w.Tx, w.Receive, shares, 1)
}

// sendPrepared sends tx from lp and checks the moves: each token's balance
// changes by sign x its amount (-1: paid, 1: received), the share balance
// by -sign x shares.
func (l *lpLife) sendPrepared(lp *pt.Account, tx vocab.Tx, tokens []vocab.TokenAmount, shares *big.Int, sign int64) *types.Receipt {
	l.t.Helper()
	before := make([]*big.Int, len(tokens))
	for i, ta := range tokens {
		before[i] = l.p.Balance(common.HexToAddress(ta.Token.Address), lp.Addr)
	}
	sharesBefore := l.balance(lp.Addr)
	rc, err := l.p.Chain.SendRaw(lp, common.HexToAddress(tx.To), hexutil.MustDecode(tx.Data), "prepared")
	if err != nil {
		l.t.Fatal(err)
	}
	for i, ta := range tokens {
		moved := new(big.Int).Sub(l.p.Balance(common.HexToAddress(ta.Token.Address), lp.Addr), before[i])
		if want, _ := new(big.Int).SetString(ta.Amount, 10); want == nil || moved.Cmp(new(big.Int).Mul(want, big.NewInt(sign))) != 0 {
			l.t.Errorf("prepared transaction moved %s of %s, the gateway said %s (sign %d)", moved, ta.Token.Symbol, ta.Amount, sign)
		}
	}
	if moved := new(big.Int).Sub(l.balance(lp.Addr), sharesBefore); moved.Cmp(new(big.Int).Mul(shares, big.NewInt(-sign))) != 0 {
		l.t.Errorf("prepared transaction moved %s shares, the gateway said %s", moved, shares)
	}
	return rc
}

// payload is the handler's position payload of the range with amount
// (liquidity or shares): V2 abi.encode(pool, hook, tickLower, tickUpper,
// amount), V1 without the hook.
func (l *lpLife) payload(amount *big.Int) []byte {
	if !l.v1 {
		return positionData(l.t, l.p, l.r, amount)
	}
	addr, _ := abi.NewType("address", "", nil)
	i24, _ := abi.NewType("int24", "", nil)
	u128, _ := abi.NewType("uint128", "", nil)
	b, err := abi.Arguments{{Type: addr}, {Type: i24}, {Type: i24}, {Type: u128}}.
		Pack(l.r.Pool, big.NewInt(int64(l.r.TickLower)), big.NewInt(int64(l.r.TickUpper)), amount)
	if err != nil {
		l.t.Fatal(err)
	}
	return b
}

// deposit deposits what liquidity stands for now through the gateway's
// prepared deposit (GET /clamm/deposit/prepare), sent at once as it came,
// and checks it moved exactly the tokens and shares the gateway said.
func (l *lpLife) deposit(lp *pt.Account, liquidity *big.Int) *types.Receipt {
	l.t.Helper()
	var d lpside.PreparedDeposit
	l.prepare(gateway.PathDepositPrepare, l.depositQuery(lp, liquidity), &d)
	if !d.Simulated || len(d.Approvals) != 0 || len(d.Ranges) != 1 || d.Ranges[0].Shares == nil {
		l.t.Fatalf("prepared deposit: simulated %v, approvals %v, ranges %+v", d.Simulated, d.Approvals, d.Ranges)
	}
	shares, _ := new(big.Int).SetString(*d.Ranges[0].Shares, 10)
	rc := l.sendPrepared(lp, d.Tx, d.Tokens, shares, -1)
	minted := l.p.Find(rc, "LogMintedPosition").Args["liquidityMinted"].(*big.Int)
	l.addPrincipal(lp.Addr, minted)
	l.deposits[lp.Addr] = append(l.deposits[lp.Addr], rc)
	return rc
}

// depositQuery asks for a deposit of what liquidity stands for now.
func (l *lpLife) depositQuery(lp *pt.Account, liquidity *big.Int) string {
	pull := l.p.Chain.Call(l.r.Handler, l.hAbi, "tokensToPullForMint", l.payload(liquidity))[1].([]*big.Int)
	amount := new(big.Int).Add(pull[0], pull[1]) // one of them is 0: the range is out of range
	l.step++
	amount.Add(amount, big.NewInt(int64(l.step))) // a new cache key each time
	return fmt.Sprintf("chainId=42161&handler=%s&pool=%s&hook=%s&tickLower=%d&tickUpper=%d&amount=%s&user=%s",
		l.r.Handler.Hex(), l.r.Pool.Hex(), l.r.Hook.Hex(), l.r.TickLower, l.r.TickUpper, amount, lp.Addr.Hex())
}

// depositVia deposits liquidity through ClammRouterV2.mintPosition from
// payer for receiver: the position manager mints the shares to the
// router, which hands them to receiver in the same transaction, so the
// deposit and its principal are receiver's; the subgraph keeps the router
// as the deposit's caller.
func (l *lpLife) depositVia(payer *pt.Account, receiver common.Address, liquidity *big.Int) {
	l.t.Helper()
	router := l.p.DeployRouter()
	rc, err := l.p.DepositVia(router, payer, receiver, l.r, liquidity)
	if err != nil {
		l.t.Fatal(err)
	}
	minted := l.p.FindAll(rc, "LogMintedPosition")[0]
	if minted.Args["user"] != router {
		l.t.Fatalf("setup: the handler minted to %v, not the router", minted.Args["user"])
	}
	l.addPrincipal(receiver, minted.Args["liquidityMinted"].(*big.Int))
	l.deposits[receiver] = append(l.deposits[receiver], rc)
	l.ix.Sync()
	d := l.ix.Store.Get("LpDeposit", strings.ToLower(rc.TxHash.Hex())+"-"+fmt.Sprint(minted.Log.Index))
	if d == nil || common.BytesToAddress(d["caller"].Bytes) != router || common.BytesToAddress(d["user"].Bytes) != receiver {
		l.t.Errorf("deposit through the router: %v, want user %s caller %s", d, receiver, router)
	}
}

func (l *lpLife) addPrincipal(a common.Address, x *big.Int) {
	if l.principl[a] == nil {
		l.principl[a] = new(big.Int)
	}
	l.principl[a].Add(l.principl[a], x)
}

// moved is the principal that leaves a holder with shares of its balance
// before: principal x shares / balance, rounded down (as the subgraph's
// rule, stated in its schema).
func (l *lpLife) moved(a common.Address, shares, before *big.Int) *big.Int {
	out := new(big.Int).Mul(l.principl[a], shares)
	out.Quo(out, before)
	l.principl[a].Sub(l.principl[a], out)
	return out
}

func (l *lpLife) transfer(from, to *pt.Account, shares *big.Int) {
	l.t.Helper()
	before := l.balance(from.Addr)
	var err error
	if l.v1 {
		_, err = l.p.Chain.Send(from, l.r.Handler, l.hAbi, "safeTransferFrom", from.Addr, to.Addr, l.id, shares, []byte{})
	} else {
		_, err = l.p.Chain.Send(from, l.r.Handler, l.hAbi, "transfer", to.Addr, l.id, shares)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	l.addPrincipal(to.Addr, l.moved(from.Addr, shares, before))
}

// burnt records a burn or reservation of a holder: the principal its
// shares took away, and the receipt for the withdrawal history.
func (l *lpLife) burnt(a common.Address, rc *types.Receipt, kind string) {
	l.t.Helper()
	var shares *big.Int
	for _, e := range l.p.Events(rc) {
		if (e.Name == "Transfer" || e.Name == "TransferSingle") && e.Args["to"] == (common.Address{}) {
			if l.v1 {
				shares = e.Args["value"].(*big.Int)
			} else {
				shares = e.Args["amount"].(*big.Int)
			}
		}
	}
	if shares == nil {
		l.t.Fatalf("%s: no share burn in the receipt", kind)
	}
	l.moved(a, shares, new(big.Int).Add(l.balance(a), shares))
	l.withdraw[a] = append(l.withdraw[a], lpWithdrawal{kind, rc})
}

// donationLocked is the handler's _donationLocked now, from its getters:
// convertToAssets(totalSupply) = totalLiquidity + 1 - donationLocked.
func (l *lpLife) donationLocked() *big.Int {
	info := l.info()
	worth := l.p.Chain.Call(l.r.Handler, l.hAbi, "convertToAssets", info.TotalSupply, l.id)[0].(*big.Int)
	out := new(big.Int).Add(info.TotalLiquidity, big.NewInt(1))
	return out.Sub(out, worth)
}

func (l *lpLife) balance(a common.Address) *big.Int {
	return l.p.Chain.Call(l.r.Handler, l.hAbi, "balanceOf", a, l.id)[0].(*big.Int)
}

func (l *lpLife) info() pt.TokenIdInfo {
	if l.v1 {
		return l.p.RangeInfoV1(l.r)
	}
	return l.p.RangeInfo(l.r)
}

// amounts is the handler's own tokensToPullForMint for liquidity: what it
// stands for at the pool's current price (LiquidityAmounts, rounded down).
func (l *lpLife) amounts(liquidity *big.Int) [2]string {
	out := l.p.Chain.Call(l.r.Handler, l.hAbi, "tokensToPullForMint", l.payload(liquidity))
	a := out[1].([]*big.Int)
	return [2]string{a[0].String(), a[1].String()}
}

// get asks the gateway; every step asks with another first so that no
// answer comes from the cache.
func (l *lpLife) get(path string, user common.Address) []map[string]any {
	l.t.Helper()
	l.step++
	url := fmt.Sprintf("%s?chainId=42161&user=%s&handler=%s&first=%d&skip=0", path, user.Hex(), l.r.Handler.Hex(), 100+l.step)
	rec := httptest.NewRecorder()
	l.gw.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		l.t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	l.atHead(url, rec.Header().Get("X-Block-Number"))
	var out []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		l.t.Fatal(err)
	}
	return out
}

// atHead: the answer names the chain's latest block, where the test reads
// the getters it checks the answer against (the subgraph has indexed it).
func (l *lpLife) atHead(what, block string) {
	l.t.Helper()
	if head := fmt.Sprint(l.p.Chain.BlockNumber()); block != head {
		l.t.Fatalf("%s: answered at block %s, the chain is at %s", what, block, head)
	}
}

func (l *lpLife) check(step string) {
	l.t.Helper()
	l.ix.Sync()
	for _, u := range l.users {
		l.checkPosition(step, u)
		l.checkWithdrawPosition(step, u)
		l.checkDeposits(step, u.Addr)
		l.checkWithdrawals(step, u.Addr)
	}
	l.checkHoldings(step)
}

// checkHoldings holds the market's statistics at the step's head to the
// getters (checkHoldingsAtHead). V2 and V3 (on the V3 market): holdingsAt
// reads a V2 market, and the V1 life's range and option belong to none.
func (l *lpLife) checkHoldings(step string) {
	l.t.Helper()
	if l.v1 {
		return
	}
	p := l.p
	if l.v3 { // the same protocol, read on the V3 market
		on := *l.p
		on.Market = l.p.V3.Market
		p = &on
	}
	l.step++
	l.t.Logf("%s: statistics", step)
	checkHoldingsAtHead(l.t, l.app, p, l.step, []pt.Range{l.r})
}

// checkWithdrawPosition: withdraw prepare's position, read at the block
// its answer names, against the handler's getters there: the shares, their
// worth (convertToAssets), the range's free liquidity, the most shares a
// burn can take whatever the donation lock, and the reservation; its
// simulation names the head.
func (l *lpLife) checkWithdrawPosition(step string, u *pt.Account) {
	l.t.Helper()
	what := func(f string) string { return fmt.Sprintf("%s: withdraw prepare %s of %s", step, f, u.Addr.Hex()[:8]) }
	rec := l.askWithdraw(u, "max")
	shares := l.balance(u.Addr)
	switch {
	case rec.Code == http.StatusNotFound:
		if shares.Sign() != 0 {
			l.t.Errorf("%s: 404 for a holder of %s shares", what("answer"), shares)
		}
		return
	case rec.Code == http.StatusUnprocessableEntity && strings.Contains(rec.Body.String(), "WITHDRAW_EXCEEDS_WITHDRAWABLE"):
		return // nothing can be taken now: the positions' figures say the same (checkPosition)
	case rec.Code != http.StatusOK:
		l.t.Fatalf("%s: %d %s", what("answer"), rec.Code, rec.Body)
	}
	var w struct {
		lpside.PreparedWithdrawal
		AsOf vocab.BlockRef `json:"asOf"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &w); err != nil {
		l.t.Fatal(err)
	}
	l.atHead(what("asOf"), fmt.Sprint(w.AsOf.Number))
	if w.SimulatedAt == nil || w.SimulatedAt.Number != w.AsOf.Number {
		l.t.Errorf("%s: simulated at %+v, the head is %d", what("simulatedAt"), w.SimulatedAt, w.AsOf.Number)
	}
	pos, info := w.Position, l.info()
	free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
	if free.Sign() < 0 {
		free.SetInt64(0)
	}
	assets := l.assetsOf(shares)
	ws, _ := new(big.Int).SetString(pos.WithdrawableShares, 10)
	if pos.Shares != shares.String() || pos.Liquidity != assets.String() || pos.FreeLiquidity != free.String() || ws == nil {
		l.t.Errorf("%s: %+v; balanceOf %s, convertToAssets %s, free %s", what("position"), pos, shares, assets, free)
		return
	}
	if ws.Cmp(shares) > 0 || l.assetsOf(ws).Cmp(free) > 0 {
		l.t.Errorf("%s: withdrawableShares %s of %s, worth %s of %s free", what("position"), ws, shares, l.assetsOf(ws), free)
	}
	if more := new(big.Int).Add(ws, big.NewInt(1)); l.donationLocked().Sign() == 0 && more.Cmp(shares) <= 0 && l.assetsOf(more).Cmp(free) <= 0 {
		l.t.Errorf("%s: withdrawableShares %s is not the most: %s are worth %s of %s free", what("position"), ws, more, l.assetsOf(more), free)
	}
	if !l.v1 {
		res := l.p.Chain.Call(l.r.Handler, l.hAbi, "reservedLiquidityPerUser", l.id, u.Addr)
		if pos.Reserved.Liquidity != res[0].(*big.Int).String() || pos.Reserved.LastReserve != res[1].(uint64) {
			l.t.Errorf("%s: %+v, reservedLiquidityPerUser %v", what("reserved"), pos.Reserved, res)
		}
	}
}

// assetsOf is the handler's convertToAssets of shares (0 for none).
func (l *lpLife) assetsOf(shares *big.Int) *big.Int {
	if shares.Sign() == 0 {
		return new(big.Int)
	}
	return l.p.Chain.Call(l.r.Handler, l.hAbi, "convertToAssets", shares, l.id)[0].(*big.Int)
}

// feesPaid is what the handler pays u in fees, beside the liquidity, for
// all its shares at the chain's latest block, by its own execution there:
// a reservation (V2) pays fees only; a burn (V1, whose shares options
// must not hold) pays the liquidity's amounts (tokensToPullForMint's, the
// same rounding as the pool's burn) and the fees. ok is false when a V1
// holder's shares cannot all be burnt now.
func (l *lpLife) feesPaid(u common.Address, shares *big.Int) (fees [2]*big.Int, ok bool) {
	l.t.Helper()
	pos := contracts.Position{V1: l.v1, Handler: l.r.Handler, Pool: l.r.Pool, TickLower: l.r.TickLower, TickUpper: l.r.TickUpper}
	to, data, err := l.r.Handler, []byte(nil), error(nil)
	switch {
	case l.v1:
		to = l.p.PositionManager
		data, err = pos.BurnCall(shares)
	case l.v3: // through the position manager V2, as the gateway builds it
		to = l.p.V3.PositionManager
		var payload []byte
		if payload, err = pos.Payload(shares); err == nil {
			data, err = contracts.ViaPositionManagerV2("reserveLiquidity", l.r.Handler, payload)
		}
	default:
		data, err = pos.ReserveCall(shares)
	}
	if err != nil {
		l.t.Fatal(err)
	}
	n := l.p.Chain.BlockNumber()
	head := chain.Head{Ref: block.Ref{Number: n}, EVMNumber: n - 1} // run as block n, on its state
	sim, err := l.reader.SimulateLP(context.Background(), head, chain.LPSimulation{Signer: u, Tokens: []common.Address{l.p.Token0, l.p.Token1},
		Steps: []chain.LPStep{{To: to, Data: data}}})
	if err != nil {
		l.t.Fatal(err)
	}
	o := sim.Sequence[0]
	if o.Revert != nil {
		if l.v1 || shares.Cmp(l.info().TotalSupply) == 0 {
			return fees, false
		}
		l.t.Fatalf("reserving all of %s's %s shares reverts: %s", u, shares, o.Revert.Reason)
	}
	fees = [2]*big.Int{o.TokenDeltas[0], o.TokenDeltas[1]}
	if l.v1 {
		for k, a := range l.amounts(l.assetsOf(shares)) {
			v, _ := new(big.Int).SetString(a, 10)
			fees[k].Sub(fees[k], v)
		}
	}
	return fees, true
}

func str(v any) string { s, _ := v.(string); return s }

func field(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, _ := v.(map[string]any)
		v = mm[k]
	}
	return v
}

// checkAmount: an LPAmount of the answer is liquidity l and the handler's
// own token amounts for it.
func (l *lpLife) checkAmount(what string, got any, liquidity *big.Int) {
	l.t.Helper()
	m, _ := got.(map[string]any)
	want := l.amounts(liquidity)
	if str(m["liquidity"]) != liquidity.String() || str(m["token0"]) != want[0] || str(m["token1"]) != want[1] {
		l.t.Errorf("%s: %v, want liquidity %s tokens %v", what, got, liquidity, want)
	}
}

func (l *lpLife) checkPosition(step string, u *pt.Account) {
	l.t.Helper()
	shares := l.balance(u.Addr)
	var reserved *big.Int
	var last uint64
	if !l.v1 {
		res := l.p.Chain.Call(l.r.Handler, l.hAbi, "reservedLiquidityPerUser", l.id, u.Addr)
		reserved, last = res[0].(*big.Int), res[1].(uint64)
	}
	got := l.get(gateway.PathDepositPositions, u.Addr)
	if shares.Sign() == 0 && (reserved == nil || reserved.Sign() == 0) {
		if len(got) != 0 {
			l.t.Errorf("%s: %s holds nothing, positions %v", step, u.Addr, got)
		}
		return
	}
	if len(got) != 1 {
		l.t.Fatalf("%s: %s: %d positions, want 1: %v", step, u.Addr, len(got), got)
	}
	r := got[0]
	what := func(f string) string { return fmt.Sprintf("%s: %s of %s", step, f, u.Addr.Hex()[:8]) }
	if str(r["shares"]) != shares.String() || str(r["tokenId"]) != l.id.String() {
		l.t.Errorf("%s: %v, balanceOf %s, tokenId %s", what("shares"), r["shares"], shares, l.id)
	}
	assets := new(big.Int)
	if shares.Sign() > 0 {
		assets = l.p.Chain.Call(l.r.Handler, l.hAbi, "convertToAssets", shares, l.id)[0].(*big.Int)
	}
	l.checkAmount(what("assets"), r["assets"], assets)
	info := l.info()
	free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
	if free.Sign() < 0 { // a reservation takes totalLiquidity below what options use
		free.SetInt64(0)
	}
	locked := new(big.Int).Sub(assets, free)
	if locked.Sign() < 0 {
		locked.SetInt64(0)
	}
	l.checkAmount(what("locked"), r["locked"], locked)
	l.checkAmount(what("withdrawable"), r["withdrawable"], new(big.Int).Sub(assets, locked))
	l.checkBurn(step, u, shares, locked.Sign() == 0)
	principal := l.principl[u.Addr]
	l.checkAmount(what("principal"), r["principal"], principal)
	earned := new(big.Int).Sub(assets, principal)
	if earned.Sign() < 0 {
		earned.SetInt64(0)
	}
	l.checkAmount(what("earned"), r["earned"], earned)
	// No transaction takes the whole supply's worth (totalLiquidity + 1):
	// a holder of all of it is owed all the range is owed, checked by the
	// holders of a part at the other steps.
	if fees, ok := l.feesPaid(u.Addr, shares); ok && shares.Sign() > 0 && shares.Cmp(info.TotalSupply) < 0 {
		if str(field(r, "fees", "token0")) != fees[0].String() || str(field(r, "fees", "token1")) != fees[1].String() {
			l.t.Errorf("%s: %v, the handler pays %s / %s", what("fees"), r["fees"], fees[0], fees[1])
		}
	}
	if str(r["headBlock"]) != fmt.Sprint(l.p.Chain.BlockNumber()) {
		l.t.Errorf("%s: %v, the answer's block %d", what("headBlock"), r["headBlock"], l.p.Chain.BlockNumber())
	}
	if l.v1 {
		if r["reserved"] != nil {
			l.t.Errorf("%s: %v on a V1 handler", what("reserved"), r["reserved"])
		}
		return
	}
	l.checkReserved(what("reserved"), u, r["reserved"], reserved, last)
}

// checkBurn: burning all the holder's shares now succeeds exactly when
// nothing of them is said to be locked.
func (l *lpLife) checkBurn(step string, u *pt.Account, shares *big.Int, free bool) {
	l.t.Helper()
	if shares.Sign() == 0 {
		return
	}
	pm, pmArt := l.p.ManagerOf(l.r.Handler)
	_, err := l.p.Chain.TryCall(u.Addr, pm, pmArt.ABI, "burnPosition", l.r.Handler, l.payload(shares))
	if (err == nil) != free {
		l.t.Errorf("%s: burning all of %s's shares: error %v, the gateway says nothing locked: %v", step, u.Addr, err, free)
	}
}

func (l *lpLife) checkReserved(what string, u *pt.Account, got any, reserved *big.Int, last uint64) {
	l.t.Helper()
	m, _ := got.(map[string]any)
	if m == nil {
		l.t.Fatalf("%s: null on a V2 handler", what)
	}
	l.checkAmount(what, map[string]any{"liquidity": m["liquidity"], "token0": m["token0"], "token1": m["token1"]}, reserved)
	if reserved.Sign() == 0 {
		if m["lastReserve"] != nil || m["withdrawableAt"] != nil {
			l.t.Errorf("%s: nothing reserved, times %v", what, m)
		}
		l.checkAmount(what+" withdrawable", m["withdrawable"], new(big.Int))
		return
	}
	cooldown := l.p.Chain.Call(l.r.Handler, l.hAbi, "reserveCooldown")[0].(uint64)
	if str(m["lastReserve"]) != fmt.Sprint(last) || str(m["withdrawableAt"]) != fmt.Sprint(last+cooldown) {
		l.t.Errorf("%s: times %v / %v, getters %d + %d", what, m["lastReserve"], m["withdrawableAt"], last, cooldown)
	}
	w, _ := new(big.Int).SetString(str(field(m, "withdrawable", "liquidity")), 10)
	if w == nil {
		l.t.Fatalf("%s: withdrawable %v", what, m["withdrawable"])
	}
	l.checkAmount(what+" withdrawable", m["withdrawable"], w)
	// What is said withdrawable is, and no more.
	try := func(x *big.Int) error {
		if l.v3 { // only through the position manager V2, which names the caller
			_, err := l.p.Chain.TryCall(u.Addr, l.p.V3.PositionManager, pt.PositionManagerV2.ABI, "withdrawReserveLiquidity", l.r.Handler, l.payload(x))
			return err
		}
		_, err := l.p.Chain.TryCall(u.Addr, l.r.Handler, l.hAbi, "withdrawReserveLiquidity", l.payload(x))
		return err
	}
	if w.Sign() > 0 {
		if err := try(w); err != nil {
			l.t.Errorf("%s: withdrawing the %s said withdrawable: %v", what, w, err)
		}
	}
	if more := new(big.Int).Add(w, big.NewInt(1)); more.Cmp(reserved) <= 0 {
		if err := try(more); err == nil {
			l.t.Errorf("%s: %s said withdrawable, and %s withdraws too", what, w, more)
		}
	}
}

func (l *lpLife) rangeOK(what string, r map[string]any, rc *types.Receipt) {
	l.t.Helper()
	h, _ := field(r, "handler", "handler", "address").(string)
	if str(r["tokenId"]) != l.id.String() || !strings.EqualFold(h, l.r.Handler.Hex()) || r["tickLower"] != float64(l.r.TickLower) ||
		r["tickUpper"] != float64(l.r.TickUpper) || str(r["txHash"]) != strings.ToLower(rc.TxHash.Hex()) ||
		str(r["blockNumber"]) != rc.BlockNumber.String() {
		l.t.Errorf("%s: record %v, receipt %s in block %s", what, r, rc.TxHash.Hex(), rc.BlockNumber)
	}
	header, err := l.p.Chain.Client().HeaderByNumber(context.Background(), rc.BlockNumber)
	if err != nil {
		l.t.Fatal(err)
	}
	if str(r["timestamp"]) != fmt.Sprint(header.Time) {
		l.t.Errorf("%s: timestamp %v, block time %d", what, r["timestamp"], header.Time)
	}
}

// poolEvent is the pool's Mint or Burn of the range in a receipt whose
// liquidity is l.
func (l *lpLife) poolEvent(rc *types.Receipt, name string, liquidity *big.Int) *pt.Event {
	for _, e := range l.p.Events(rc) {
		if e.Name == name && e.Address == l.r.Pool && e.Args["amount"].(*big.Int).Cmp(liquidity) == 0 {
			return &e
		}
	}
	return nil
}

func (l *lpLife) checkDeposits(step string, user common.Address) {
	l.t.Helper()
	got := l.get(gateway.PathDepositHistory, user)
	want := l.deposits[user]
	if len(got) != len(want) {
		l.t.Fatalf("%s: %s: %d deposits, want %d", step, user, len(got), len(want))
	}
	for i, rc := range want {
		r := got[len(got)-1-i] // newest first
		what := fmt.Sprintf("%s: deposit %d of %s", step, i, user.Hex()[:8])
		l.rangeOK(what, r, rc)
		minted := l.p.Find(rc, "LogMintedPosition").Args["liquidityMinted"].(*big.Int)
		shares := l.p.Find(rc, "LogMintPosition").Args["sharesMinted"].(*big.Int)
		mint := l.poolEvent(rc, "Mint", minted)
		if r["type"] != "deposit" || str(r["shares"]) != shares.String() || mint == nil ||
			str(field(r, "amount", "liquidity")) != minted.String() ||
			str(field(r, "amount", "token0")) != mint.Args["amount0"].(*big.Int).String() ||
			str(field(r, "amount", "token1")) != mint.Args["amount1"].(*big.Int).String() {
			l.t.Errorf("%s: %v; LogMintedPosition %s, shares %s, the pool's mint %v", what, r, minted, shares, mint)
		}
	}
}

func (l *lpLife) checkWithdrawals(step string, user common.Address) {
	l.t.Helper()
	got := l.get(gateway.PathWithdrawHistory, user)
	want := l.withdraw[user]
	if len(got) != len(want) {
		l.t.Fatalf("%s: %s: %d withdrawals, want %d", step, user, len(got), len(want))
	}
	for i, w := range want {
		r := got[len(got)-1-i]
		what := fmt.Sprintf("%s: withdrawal %d (%s) of %s", step, i, w.kind, user.Hex()[:8])
		l.rangeOK(what, r, w.rc)
		var liquidity *big.Int
		shares := "0"
		if w.kind == "withdrawReserved" {
			liquidity = l.p.Find(w.rc, "LogWithdrawReservedLiquidity").Args["liquidityWithdrawn"].(*big.Int)
		} else {
			liquidity = l.p.Find(w.rc, "LogBurnedPosition").Args["liquidityBurned"].(*big.Int)
			if w.kind == "burn" {
				shares = l.p.Find(w.rc, "LogBurnPosition").Args["sharesBurned"].(*big.Int).String()
			} else {
				shares = l.shareBurn(w.rc).String()
			}
		}
		if r["type"] != w.kind || str(r["shares"]) != shares || str(field(r, "amount", "liquidity")) != liquidity.String() {
			l.t.Errorf("%s: %v; liquidity %s, shares %s", what, r, liquidity, shares)
			continue
		}
		a0, a1 := l.reservedAmounts(w.rc, liquidity)
		if burn := l.poolEvent(w.rc, "Burn", liquidity); w.kind != "reserve" && burn != nil {
			a0, a1 = burn.Args["amount0"].(*big.Int).String(), burn.Args["amount1"].(*big.Int).String()
		}
		if str(field(r, "amount", "token0")) != a0 || str(field(r, "amount", "token1")) != a1 {
			l.t.Errorf("%s: amounts %v, want %s / %s", what, r["amount"], a0, a1)
		}
	}
}

// shareBurn is the shares a receipt's share transfer to the zero address
// burnt (the handler's, not the fees' ERC20 transfers beside it).
func (l *lpLife) shareBurn(rc *types.Receipt) *big.Int {
	l.t.Helper()
	for _, e := range l.p.Events(rc) {
		if e.Name == "Transfer" && e.Address == l.r.Handler && e.Args["to"] == (common.Address{}) {
			return e.Args["amount"].(*big.Int)
		}
	}
	l.t.Fatalf("no share burn in %s", rc.TxHash)
	return nil
}

// reservedAmounts is what liquidity stood for at the price of the
// reservation's block: the handler's tokensToPullForMint asked there (a
// reservation burns nothing in the pool, so no pool event says it).
func (l *lpLife) reservedAmounts(rc *types.Receipt, liquidity *big.Int) (string, string) {
	data, err := l.hAbi.Pack("tokensToPullForMint", l.payload(liquidity))
	if err != nil {
		l.t.Fatal(err)
	}
	out, err := l.p.Chain.Client().CallContract(context.Background(), ethereum.CallMsg{To: &l.r.Handler, Data: data}, rc.BlockNumber)
	if err != nil {
		l.t.Fatal(err)
	}
	res, err := l.hAbi.Unpack("tokensToPullForMint", out)
	if err != nil {
		l.t.Fatal(err)
	}
	a := res[1].([]*big.Int)
	return a[0].String(), a[1].String()
}
