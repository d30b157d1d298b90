package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// A market approves a second pool of its pair (another Uniswap V3 fee
// tier) with updateAddress, whose LogUpdateAddress names no pool, and
// nothing is configured for it: the subgraph's compiled mappings find the
// approval by reading approvedPools, and the live gateway then lists the
// pool's ranges in the strikes chain and the pool among the market's in
// the option markets, quotes a call whose legs are in both
// pools (the prepared mintOption, sent as built, mints it), counts the
// pool's ranges in TVL and its legs in open interest, and judges each
// leg of a position at its own pool's price (a call whose prime-pool
// price sits inside its range but whose own pool's price is past it is
// exercisable, and its exercise pays; a put whose own pool's price is
// inside its range is not, and its exercise reverts). A third pool the
// configuration names and the market never approves is never listed.
// Open interest (unexpired options' collateral; expired ones apart) and TVL
// (deposited and reserved liquidity) equal the contracts' getters at the
// answer's block. The expiring list holds exactly the options whose
// prepared exercise pays: none, then, once the prime pool is far above X's
// ranges, X with legs in both pools, whose prepared exercise pays what the
// list said. When the market withdraws the approval, the pool leaves the
// strikes chain, the option markets and TVL; open interest still counts
// the legs options hold there.
func TestPipelineApprovedPool(t *testing.T) {
	s := newPoolsSetup(t)
	s.beforeApproval()
	s.approve()
	x := s.buyAcrossPools()
	b, e := s.moreOptions()
	s.atTheEnd(x, b, e)
	s.expiringAcrossPools(x)
	s.unapprove()
}

type poolsSetup struct {
	t                        *testing.T
	p                        *pt.Protocol
	ix                       *Indexer
	multicall, pool2, pool3  common.Address
	a                        int // a multiple of 60 above the start price: RA's lower tick
	ra, rb, p1, p2, pput, rc pt.Range
	shares                   map[string]*big.Int
	ids                      []*big.Int          // every option minted
	withdrawn                map[string]*big.Int // each option's LogMintOption.totalAssetWithdrawn
}

func floorTick(t, s int) int {
	q := t / s
	if t%s != 0 && t < 0 {
		q--
	}
	return q * s
}

func rangeName(r pt.Range) string {
	return r.Pool.Hex() + ":" + strconv.Itoa(r.TickLower) + ":" + strconv.Itoa(r.TickUpper)
}

// newPoolsSetup: WETH/USDC at about 3000 (prime pool fee 500), a second
// pool (fee 3000, spacing 60) below the ranges it will hold and never
// approved yet, a third (fee 10000) the market never approves; the
// ranges: RA and RB in the second pool (calls for now), P1 in the prime
// pool at RA's upper tick (one strike, two pools), P2 a prime call, Pput a
// prime put, RC in the third pool.
func newPoolsSetup(t *testing.T) *poolsSetup {
	p := pt.Deploy(t, pt.Config{})
	p.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{600: 50, 86400: 50}})
	s := &poolsSetup{t: t, p: p, multicall: p.DeployMulticall3(), shares: map[string]*big.Int{}, withdrawn: map[string]*big.Int{}}
	s.ix = New(t, p)
	_, t0 := p.Slot0(p.Pool)
	s.a = floorTick(t0, 60) + 120
	s.pool2 = p.NewPool(3000, s.a-120)
	s.pool3 = p.NewPool(10000, floorTick(t0, 200))
	b10, b200 := floorTick(t0, 10), floorTick(t0, 200)
	s.ra = pt.Range{Pool: s.pool2, TickLower: s.a, TickUpper: s.a + 60}
	s.rb = pt.Range{Pool: s.pool2, TickLower: s.a + 120, TickUpper: s.a + 180}
	s.p1 = pt.Range{Pool: p.Pool, TickLower: s.a + 50, TickUpper: s.a + 60}
	s.p2 = pt.Range{Pool: p.Pool, TickLower: b10 + 100, TickUpper: b10 + 110}
	s.pput = pt.Range{Pool: p.Pool, TickLower: b10 - 100, TickUpper: b10 - 90}
	s.rc = pt.Range{Pool: s.pool3, TickLower: b200 + 400, TickUpper: b200 + 600}
	for _, r := range []pt.Range{s.ra, s.rb, s.p1, s.p2, s.pput, s.rc} {
		_, sh, err := p.Deposit(p.Users[0], r, e18(1))
		if err != nil {
			t.Fatalf("deposit %s: %v", rangeName(r), err)
		}
		s.shares[rangeName(r)] = sh
	}
	return s
}

// gateway is the live gateway over the subgraph indexed up to the head:
// the protocol's handler registered, Multicall3 deployed, the put asset a
// USD stablecoin, and the third pool configured for the market
// (marketPools), which it never approves.
func (s *poolsSetup) gateway() *app.App {
	s.ix.Sync()
	a, _ := liveGatewayWith(s.t, s.p, s.ix, func(cfg *config.Config) {
		ch := cfg.Chains[42161]
		ch.Handlers[s.p.Handler] = config.Handler{Name: "uniswap"}
		ch.Multicall3 = s.multicall
		ch.MarketPools = map[common.Address][]common.Address{s.p.Market: {s.pool3}}
		cfg.USDStablecoins = []string{"42161:" + s.p.PutAsset.Hex()}
		if err := cfg.Validate(); err != nil { // hands each chain its stablecoins
			s.t.Fatal(err)
		}
	})
	return a
}

// get asks the gateway and decodes a 200 answer into out; it returns the
// answer's block (X-Block-Number).
func get(t *testing.T, a *app.App, url string, out any) uint64 {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	n, err := strconv.ParseUint(rec.Header().Get("X-Block-Number"), 10, 64)
	if err != nil {
		t.Fatalf("%s: X-Block-Number %q", url, rec.Header().Get("X-Block-Number"))
	}
	return n
}

// strikes is the strikes chain by pool: each listed range's key, type and ticks.
func (s *poolsSetup) strikes(a *app.App) map[common.Address][]listed {
	var entries []map[string]market.Strike
	get(s.t, a, gateway.PathStrikesChain+"?chainId=42161&optionMarket="+s.p.Market.Hex()+"&callsReach=50&putsReach=50", &entries)
	out := map[common.Address][]listed{}
	for _, e := range entries {
		for k, st := range e {
			pool := common.HexToAddress(st.Handler.Pool)
			out[pool] = append(out[pool], listed{key: k, s: st})
		}
	}
	return out
}

type listed struct {
	key string
	s   market.Strike
}

func (s *poolsSetup) storeApproval(pool common.Address) (approved, found bool) {
	e := s.ix.Store.Get("MarketPool", strings.ToLower(s.p.Market.Hex())+"-"+strings.ToLower(pool.Hex()))
	if e == nil {
		return false, false
	}
	return e["approved"].Bool, true
}

func (s *poolsSetup) approvedOnChain(pool common.Address) bool {
	return s.p.Chain.Call(s.p.Market, pt.MarketV2.ABI, "approvedPools", pool)[0].(bool)
}

// Before the approval the second pool's ranges are not listed, and the
// subgraph has read that the market does not approve it.
func (s *poolsSetup) beforeApproval() {
	t := s.t
	a := s.gateway()
	listedBy := s.strikes(a)
	if len(listedBy[s.pool2]) != 0 || len(listedBy[s.pool3]) != 0 || len(listedBy[s.p.Pool]) == 0 {
		t.Fatalf("before the approval: ranges by pool %v", listedBy)
	}
	if m := marketOf(t, a, s.p); len(m.Pools) != 1 || m.Pools[0].Address != s.p.Pool.Hex() {
		t.Errorf("before the approval: option markets' pools %+v", m.Pools)
	}
	if approved, found := s.storeApproval(s.pool2); !found || approved || s.approvedOnChain(s.pool2) {
		t.Fatalf("before the approval: subgraph %v (found %v), chain %v", approved, found, s.approvedOnChain(s.pool2))
	}
}

// The owner approves the second pool: the subgraph follows, and the
// strikes chain lists RA and RB, placed by the second pool's own tick.
func (s *poolsSetup) approve() {
	t := s.t
	s.p.ApprovePool(s.p.Market, s.pool2, true)
	a := s.gateway()
	listedBy := s.strikes(a)
	// the option markets list the pools a purchase can use: the prime
	// pool, then the second by address; not the third
	m := marketOf(t, a, s.p)
	if len(m.Pools) != 2 || m.Pools[0].Address != s.p.Pool.Hex() || m.Pools[1].Address != s.pool2.Hex() || m.Pools[1].Fee != 3000 || m.Pools[1].TickSpacing != 60 {
		t.Errorf("option markets' pools %+v", m.Pools)
	}
	if approved, _ := s.storeApproval(s.pool2); !approved || !s.approvedOnChain(s.pool2) {
		t.Fatalf("after the approval: subgraph %v, chain %v", approved, s.approvedOnChain(s.pool2))
	}
	if approved, found := s.storeApproval(s.pool3); found && approved {
		t.Fatalf("the third pool is recorded approved")
	}
	got := map[[2]int]string{}
	for _, l := range listedBy[s.pool2] {
		got[[2]int{l.s.Meta.TickLower, l.s.Meta.TickUpper}] = l.s.Type
	}
	want := map[[2]int]string{{s.ra.TickLower, s.ra.TickUpper}: "call", {s.rb.TickLower, s.rb.TickUpper}: "call"}
	if len(got) != len(want) || got[[2]int{s.ra.TickLower, s.ra.TickUpper}] != "call" || got[[2]int{s.rb.TickLower, s.rb.TickUpper}] != "call" {
		t.Errorf("second pool's ranges %v, want %v", got, want)
	}
	if len(listedBy[s.pool3]) != 0 {
		t.Errorf("the unapproved configured pool is listed: %v", listedBy[s.pool3])
	}
}

// buyAcrossPools quotes a call at RA's strike (also P1's) for more than
// P1 holds: the legs are in both pools; the prepared mintOption, sent as
// built, mints it.
func (s *poolsSetup) buyAcrossPools() *big.Int {
	t, p := s.t, s.p
	a := s.gateway()
	var key string
	var p1Avail, raAvail *big.Int
	for pool, ls := range s.strikes(a) {
		for _, l := range ls {
			avail, _ := new(big.Int).SetString(l.s.Meta.AvailableTokenLiquidity, 10)
			switch {
			case pool == s.pool2 && l.s.Meta.TickLower == s.ra.TickLower:
				key, raAvail = l.key, avail
			case pool == p.Pool && l.s.Meta.TickLower == s.p1.TickLower:
				p1Avail = avail
			}
		}
	}
	if key == "" || p1Avail == nil {
		t.Fatal("RA or P1 not listed")
	}
	// The quote fills the strike's ranges in the strikes chain's order,
	// the pool address last: all of the first pool's range, half of the
	// other's, so each leg holds a good part of the option.
	first, second := raAvail, p1Avail
	if p.Pool.Cmp(s.pool2) < 0 {
		first, second = p1Avail, raAvail
	}
	amount := new(big.Int).Add(first, new(big.Int).Div(second, big.NewInt(2)))
	q := "?chainId=42161&optionMarket=" + p.Market.Hex() + "&user=" + p.Users[1].Addr.Hex() + "&type=call&strike=" + key + "&ttl=86400&amount=" + amount.String()
	var quote trade.PurchaseQuote
	get(t, a, gateway.PathPurchaseQuote+q, &quote)
	pools := map[common.Address]bool{}
	for _, l := range quote.Legs {
		pools[common.HexToAddress(l.Pool)] = true
	}
	if len(quote.Legs) != 2 || !pools[s.pool2] || !pools[p.Pool] {
		t.Fatalf("quote legs %+v, want one in each pool", quote.Legs)
	}
	var prep trade.PreparedPurchase
	get(t, a, gateway.PathPurchasePrepare+q+"&slippage=1", &prep)
	rc, err := p.Chain.SendRaw(p.Users[1], common.HexToAddress(prep.Tx.To), common.FromHex(prep.Tx.Data), "mintOption")
	if err != nil {
		t.Fatalf("the prepared mintOption: %v", err)
	}
	id := s.minted(rc)
	legPools := map[common.Address]bool{}
	for _, l := range p.OpTicks(id) {
		legPools[l.Range.Pool] = true
	}
	if !legPools[s.pool2] || !legPools[p.Pool] {
		t.Fatalf("minted legs %+v", p.OpTicks(id))
	}
	return id
}

// minted records the option a purchase's receipt minted.
func (s *poolsSetup) minted(rc *types.Receipt) *big.Int {
	ev := s.p.Find(rc, "LogMintOption")
	id := ev.Args["tokenId"].(*big.Int)
	s.ids = append(s.ids, id)
	s.withdrawn[id.String()] = ev.Args["totalAssetWithdrawn"].(*big.Int)
	return id
}

// moreOptions: the second pool moves above RB, which then holds the put
// asset, and a put B is bought on it; a put E on Pput with a ten-minute
// ttl (it will expire unsettled); a call F on P2 (to be exercised in
// full); an LP reserves a quarter of RB.
func (s *poolsSetup) moreOptions() (b, e *big.Int) {
	t, p := s.t, s.p
	if _, err := p.SwapToTick(p.Users[2], 3000, s.a+200); err != nil {
		t.Fatal(err)
	}
	buy := func(who *pt.Account, isCall bool, r pt.Range, ttl uint64) *big.Int {
		l := new(big.Int).Div(s.shares[rangeName(r)], big.NewInt(4))
		_, rc, err := p.Buy(who, pt.Option{IsCall: isCall, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: ttl, Legs: []pt.Leg{{Range: r, Liquidity: l}}})
		if err != nil {
			t.Fatalf("buy on %s: %v", rangeName(r), err)
		}
		return s.minted(rc)
	}
	b = buy(p.Users[1], false, s.rb, 86400)
	e = buy(p.Users[2], false, s.pput, 600)
	f := buy(p.Users[2], true, s.p2, 86400)
	if _, err := p.Reserve(p.Users[0], s.rb, new(big.Int).Div(s.shares[rangeName(s.rb)], big.NewInt(4))); err != nil {
		t.Fatal(err)
	}
	// An hour on: E has expired. The prime pool moves into RA's upper
	// half, past P2: F is exercised in full.
	p.Chain.AdjustTime(time.Hour)
	if _, err := p.SwapToTick(p.Users[2], 500, s.a+52); err != nil {
		t.Fatal(err)
	}
	fl := p.OpTicks(f)[0].Liquidity
	if _, err := p.Exercise(p.Users[2], f, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(500, big.NewInt(0)), Liquidity: fl}}); err != nil {
		t.Fatalf("exercise F: %v", err)
	}
	if _, err := p.SwapToTick(p.Users[2], 500, s.a+52); err != nil {
		t.Fatal(err)
	}
	// The second pool down inside RB, above RA.
	if _, err := p.SwapToTick(p.Users[2], 3000, s.a+151); err != nil {
		t.Fatal(err)
	}
	return b, e
}

// atTheEnd checks statistics and positions against the chain at their
// answers' blocks, then confirms the positions' verdicts by exercising.
func (s *poolsSetup) atTheEnd(x, b, e *big.Int) {
	t, p := s.t, s.p
	a := s.gateway()
	head := int64(p.Chain.Now())
	var st market.MarketStats
	at := get(t, a, gateway.PathStats+"?chainId=42161&optionMarket="+p.Market.Hex()+"&from="+strconv.FormatInt(head-86400, 10)+"&to="+strconv.FormatInt(head+1, 10), &st)
	s.checkHoldings(st, at, x, b, e)

	var recs []trade.PositionRecord
	get(t, a, gateway.PathPurchasePositions+"?chainId=42161&first=10&skip=0&user="+p.Users[1].Addr.Hex()+"&optionMarket="+p.Market.Hex(), &recs)
	byID := map[string]trade.PositionRecord{}
	for _, r := range recs {
		byID[r.OptionID] = r
	}
	if r := byID[x.String()]; !r.Exercisable || r.ValueIfExercised == "0" {
		t.Errorf("call X (RA's own pool past it, the prime pool inside it): %+v", r)
	}
	if r := byID[b.String()]; r.Exercisable || !strings.Contains(r.NotExercisableReason, "inside the range") {
		t.Errorf("put B (its own pool inside RB, the prime pool below it): %+v", r)
	}
	if inTheMoney := s.checkExpiring(a); len(inTheMoney) != 0 {
		t.Errorf("at the end no option pays exercised in full (X's RA swap moves the prime pool past its margin, B's pool is inside RB): %v", inTheMoney)
	}
	// The chain agrees: B's exercise reverts (the re-mint in the second
	// pool needs both tokens), X's pays from its RA leg (a twentieth of it,
	// whose swap moves the prime pool too little to eat the margin).
	bl := p.OpTicks(b)[0].Liquidity
	if _, err := p.Exercise(p.Users[1], b, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(500, big.NewInt(0)), Liquidity: bl}}); !pt.IsRevert(err, "") {
		t.Errorf("exercise of B: %v, want a revert", err)
	}
	var legs []pt.ExerciseLeg
	for _, l := range p.OpTicks(x) {
		liq := new(big.Int)
		if l.Range.Pool == s.pool2 {
			liq = new(big.Int).Div(l.Liquidity, big.NewInt(20))
		}
		legs = append(legs, pt.ExerciseLeg{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(500, big.NewInt(0)), Liquidity: liq})
	}
	rc, err := p.Exercise(p.Users[1], x, legs)
	if err != nil {
		t.Fatalf("exercise of X's RA leg: %v", err)
	}
	if profit := p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int); profit.Sign() <= 0 {
		t.Errorf("X's RA leg paid %s", profit)
	}
}

// checkHoldings: open interest, the expired options and TVL equal the
// contracts' getters at the answer's block, over the ranges of the two
// approved pools (the third pool's RC never counts). The setup's options
// are where the test put them: X (a call across both pools) and B (a put
// in the second pool) open, E expired, F exercised in full; and an option
// never exercised holds exactly what its mint withdrew (the pool's burn
// rounds as LiquidityAmounts does: the contracts' own execution).
func (s *poolsSetup) checkHoldings(st market.MarketStats, at uint64, x, b, e *big.Int) {
	t, p := s.t, s.p
	h := holdingsAt(t, p, at, []pt.Range{s.ra, s.rb, s.p1, s.p2, s.pput})
	h.check(t, p, st)
	if h.openN != 2 || h.expiredN != 1 || h.openR != 3 || h.expiredR != 1 || h.tvlR != 5 || h.reserved[0].Sign()+h.reserved[1].Sign() == 0 {
		t.Fatalf("setup: %d open options in %d ranges, %d expired in %d, %d ranges in TVL, reserved %v", h.openN, h.openR, h.expiredN, h.expiredR, h.tvlR, h.reserved)
	}
	if s.withdrawn[x.String()].Cmp(h.open[0]) != 0 || s.withdrawn[b.String()].Cmp(h.open[1]) != 0 || s.withdrawn[e.String()].Cmp(h.expired[1]) != 0 {
		t.Errorf("open interest by the getters %v, expired %v; the mints withdrew %v", h.open, h.expired, s.withdrawn)
	}
}

// checkExpiring: the options expiring within the day are exactly the
// unexpired options whose prepared exercise (quoted, and simulated on the
// chain at the answer's block) pays, wherever their legs are, each with
// that exercise's profit as its value and its owner on the chain.
func (s *poolsSetup) checkExpiring(a *app.App) []string {
	t, p := s.t, s.p
	q := "?chainId=42161&optionMarket=" + p.Market.Hex()
	var list []trade.ExpiringRecord
	get(t, a, gateway.PathExpiringOptions+q+"&within=86400&first=100&skip=0", &list)
	got := map[string]trade.ExpiringRecord{}
	for _, r := range list {
		got[r.OptionID] = r
	}
	var want []string
	for _, id := range s.ids {
		if p.OpData(id).Expiry.Uint64() < p.Chain.Now() {
			continue
		}
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, gateway.PathExercisePrepare+q+"&optionId="+id.String()+"&swapperId=uni-v3&slippage=1", nil))
		var prep trade.Prepared
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &prep) != nil {
			if r, ok := got[id.String()]; ok {
				t.Errorf("expiring lists option %s (%+v); its exercise prepare answers %d %s", id, r, rec.Code, rec.Body)
			}
			continue
		}
		want = append(want, id.String())
		r, ok := got[id.String()]
		if !ok || !r.InTheMoney || r.ExerciseValue == nil || *r.ExerciseValue != prep.Profit || r.Owner != p.OwnerOf(id).Hex() {
			t.Errorf("expiring: option %s %+v (listed %v); its prepared exercise pays %s to %s", id, r, ok, prep.Profit, p.OwnerOf(id))
		}
	}
	if len(list) != len(want) {
		t.Errorf("expiring within the day: %d options, want %v", len(list), want)
	}
	return want
}

// expiringAcrossPools: the prime pool moves far above RA and P1 (the
// second pool is above RA already, inside RB): what is left of X pays in
// both its legs, each judged at its own pool, and B still cannot be
// exercised; the expiring list holds X alone, valued as its prepared
// exercise, and the prepared exercise sent as built pays that.
func (s *poolsSetup) expiringAcrossPools(x *big.Int) {
	t, p := s.t, s.p
	if _, err := p.SwapToTick(p.Users[2], 500, s.a+400); err != nil {
		t.Fatal(err)
	}
	a := s.gateway()
	if got := s.checkExpiring(a); len(got) != 1 || got[0] != x.String() {
		t.Fatalf("in the money, expiring within the day: %v, want X (%s) alone", got, x)
	}
	var prep trade.Prepared
	get(t, a, gateway.PathExercisePrepare+"?chainId=42161&optionMarket="+p.Market.Hex()+"&optionId="+x.String()+"&swapperId=uni-v3&slippage=1", &prep)
	legPools := map[common.Address]bool{}
	for i, l := range p.OpTicks(x) {
		if prep.Legs[i].Exercised {
			legPools[l.Range.Pool] = true
		}
	}
	if !legPools[s.pool2] || !legPools[p.Pool] {
		t.Errorf("X's prepared exercise takes the legs in %v, want both pools", legPools)
	}
	rc, err := p.Chain.SendRaw(p.Users[1], common.HexToAddress(prep.Tx.To), common.FromHex(prep.Tx.Data), "exerciseOption")
	if err != nil {
		t.Fatalf("X's prepared exercise: %v", err)
	}
	if paid := p.Find(rc, "LogExerciseOption").Args["totalProfit"].(*big.Int); paid.String() != prep.Profit {
		t.Errorf("X's exercise paid %s, the expiring list and prepare said %s", paid, prep.Profit)
	}
}

// unapprove: the owner withdraws the second pool's approval (another
// updateAddress, whose log again names no pool): the subgraph reads
// approvedPools anew, the strikes chain and the option markets drop the
// pool, TVL leaves its ranges out, and open interest still counts the legs
// options hold there (they can still be exercised).
func (s *poolsSetup) unapprove() {
	t, p := s.t, s.p
	p.ApprovePool(p.Market, s.pool2, false)
	a := s.gateway()
	if approved, found := s.storeApproval(s.pool2); !found || approved || s.approvedOnChain(s.pool2) {
		t.Fatalf("after the approval is withdrawn: subgraph %v (found %v), chain %v", approved, found, s.approvedOnChain(s.pool2))
	}
	if listedBy := s.strikes(a); len(listedBy[s.pool2]) != 0 || len(listedBy[p.Pool]) == 0 {
		t.Errorf("after the approval is withdrawn: ranges by pool %v", listedBy)
	}
	if m := marketOf(t, a, p); len(m.Pools) != 1 || m.Pools[0].Address != p.Pool.Hex() {
		t.Errorf("after the approval is withdrawn: option markets' pools %+v", m.Pools)
	}
	head := int64(p.Chain.Now())
	var st market.MarketStats
	at := get(t, a, gateway.PathStats+"?chainId=42161&optionMarket="+p.Market.Hex()+"&from="+strconv.FormatInt(head-86400, 10)+"&to="+strconv.FormatInt(head+1, 10), &st)
	h := holdingsAt(t, p, at, []pt.Range{s.p1, s.p2, s.pput})
	h.check(t, p, st)
	// B alone is open (X exercised in full, F too, E expired), its leg in RB
	if h.openN != 1 || h.openR != 1 || h.tvlR != 3 {
		t.Fatalf("setup: open interest %d options in %d ranges, TVL over %d", h.openN, h.openR, h.tvlR)
	}
}
