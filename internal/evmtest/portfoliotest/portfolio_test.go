// Package portfoliotest checks /clamm/portfolio and the hosted PnL shapes
// end to end on two simulated chains served by one gateway: the test
// protocol deployed on each, trades by several users, each chain indexed
// by the subgraph's mappings, every figure checked against the chain (the
// users' ERC20 Transfers in each transaction, an exercise's real payment)
// rather than against the gateway's own maths.
package portfoliotest

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/evmtest/pipeline"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// side is one chain of the test: its protocol, index, and what each
// option of the watched user cost and paid, measured from the chain.
type side struct {
	t       *testing.T
	id      uint64
	p       *pt.Protocol
	ix      *pipeline.Indexer
	pricing *pt.Pricing // OptionPricingV2: the market prices at ttlToVol(ttl)
	mc      common.Address
	ranges  []pt.Range
	liq     []*big.Int
	options map[string]*measured // by option id, the watched user's
	open    []*big.Int           // the watched user's options left open
}

// measured is an option's figures as the chain's transfers say them.
type measured struct {
	isCall       bool
	paid, profit *big.Int // premium and fees the buyer sent; what exercises sent the owner
	status       string
	withdrawn    *big.Int // the collateral its mint took from the ranges (LogMintOption)
}

// transfers is the net of token's ERC20 Transfers to (+) and from (-) who
// in the receipt.
func transfers(rc *types.Receipt, token, who common.Address) *big.Int {
	topic := crypto.Keccak256Hash([]byte("Transfer(address,address,uint256)"))
	sum := new(big.Int)
	for _, lg := range rc.Logs {
		if lg.Address != token || len(lg.Topics) != 3 || lg.Topics[0] != topic {
			continue
		}
		v := new(big.Int).SetBytes(lg.Data)
		if common.BytesToAddress(lg.Topics[2].Bytes()) == who {
			sum.Add(sum, v)
		}
		if common.BytesToAddress(lg.Topics[1].Bytes()) == who {
			sum.Sub(sum, v)
		}
	}
	return sum
}

// newSide deploys the protocol at price, its market priced by
// OptionPricingV2 at ivs (percent by ttl; the ttls activity buys).
func newSide(t *testing.T, id uint64, price float64, ivs map[uint64]uint64) *side {
	p := pt.Deploy(t, pt.Config{Price: price})
	s := &side{t: t, id: id, p: p, ix: pipeline.New(t, p), mc: p.DeployMulticall3(), options: map[string]*measured{}}
	s.pricing = p.DeployPricingV2(pt.PricingConfig{IVs: ivs, FeePercentage: 340000}, 1000)
	p.SetProtocolFee(p.Owner.Addr, 125_000)
	_, tick := p.Slot0(p.Pool)
	for range 30 { // a deep pool: an exercise's own swap moves its price little
		p.AddBackgroundLiquidity(p.Pool, tick-6000, tick+6000)
	}
	callSide, putSide := 1, -1
	if p.CallAsset == p.Token1 {
		callSide, putSide = -1, 1
	}
	rng := func(side, k int) pt.Range { // statsActivity's ranges: k spacings from the price
		base := tick - tick%p.TickSpacing
		lo := base + side*k*p.TickSpacing
		if side < 0 {
			lo = base + side*(k+1)*p.TickSpacing
		}
		return pt.Range{TickLower: lo, TickUpper: lo + p.TickSpacing}
	}
	for _, r := range []pt.Range{rng(callSide, 10), rng(putSide, 10), rng(callSide, 20)} {
		_, l, err := p.Deposit(p.Users[0], r, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
		if err != nil {
			t.Fatal(err)
		}
		s.ranges, s.liq = append(s.ranges, r), append(s.liq, l)
	}
	return s
}

// buy buys a quarter of range i's liquidity for who (a call on the call
// side's ranges 0 and 2, a put on range 1) and, for the watched user, measures
// what it cost: the premium token's transfers from the buyer.
func (s *side) buy(who *pt.Account, i int, ttl uint64, watched bool) *big.Int {
	r, isCall := s.ranges[i], i != 1
	id, rc, err := s.p.Buy(who, pt.Option{IsCall: isCall, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: ttl,
		Legs: []pt.Leg{{Range: r, Liquidity: new(big.Int).Div(s.liq[i], big.NewInt(4))}}})
	if err != nil {
		s.t.Fatalf("chain %d: buying range %d for %d s: %v", s.id, i, ttl, err)
	}
	if watched {
		token := s.p.PutAsset
		if isCall {
			token = s.p.CallAsset
		}
		s.options[id.String()] = &measured{isCall: isCall, paid: new(big.Int).Neg(transfers(rc, token, who.Addr)), profit: new(big.Int), status: "open",
			withdrawn: s.p.Find(rc, "LogMintOption").Args["totalAssetWithdrawn"].(*big.Int)}
	}
	return id
}

// legs are an option's legs to exercise or settle through the pool.
func (s *side) legs(id *big.Int) []pt.ExerciseLeg {
	var out []pt.ExerciseLeg
	for _, l := range s.p.OpTicks(id) {
		out = append(out, pt.ExerciseLeg{Swapper: s.p.Swapper, SwapData: pt.UniV3SwapData(s.p.Fee, big.NewInt(0)), Liquidity: l.Liquidity})
	}
	return out
}

// exercise exercises the watched user's option and measures what reached
// them: the profit token's transfers to the owner in the transaction.
func (s *side) exercise(owner *pt.Account, id *big.Int) *big.Int {
	m := s.options[id.String()]
	rc, err := s.p.Exercise(owner, id, s.legs(id))
	if err != nil {
		s.t.Fatal(err)
	}
	token := s.p.CallAsset
	if m.isCall {
		token = s.p.PutAsset
	}
	got := transfers(rc, token, owner.Addr)
	m.profit.Add(m.profit, got)
	m.status = "exercised"
	return got
}

// activity: the watched user (Users[1]) and two others trade on the
// chain; the watched user exercises an option in the money, lets one
// expire and be settled (nothing reaches them), and keeps two open, one
// of them in the money.
func (s *side) activity() {
	p, a, b, c := s.p, s.p.Users[1], s.p.Users[2], s.p.Users[3]
	_, tick := p.Slot0(p.Pool)
	callSide := 1
	if p.CallAsset == p.Token1 {
		callSide = -1
	}
	now := int64(p.Chain.Now())
	p.Chain.AdjustTime(time.Duration(now/86400*86400+86400+3600-now) * time.Second)
	exercised := s.buy(a, 0, 7*3600, true)
	settled := s.buy(a, 1, 3600, true)
	s.buy(b, 1, 7*3600, false)
	if _, err := p.SwapToTick(c, p.Fee, tick+callSide*(15*p.TickSpacing)); err != nil {
		s.t.Fatal(err)
	}
	if s.exercise(a, exercised).Sign() <= 0 {
		s.t.Fatal("an exercise in the money paid the owner nothing")
	}
	p.Chain.AdjustTime(2 * time.Hour) // the one-hour put has expired, out of the money
	rc, err := p.Settle(p.Owner, settled, s.legs(settled))
	if err != nil {
		s.t.Fatal(err)
	}
	if transfers(rc, p.PutAsset, a.Addr).Sign() != 0 || transfers(rc, p.CallAsset, a.Addr).Sign() != 0 {
		s.t.Fatal("a settlement out of the money moved tokens to the owner")
	}
	s.options[settled.String()].status = "expiredWorthless"
	// the price is past range 0 now; range 2 is still ahead of it
	s.open = append(s.open, s.buy(a, 2, 7*3600, true), s.buy(a, 1, 7*3600, true))
	s.buy(c, 2, 7*3600, false)
	// the price moves past range 2: the open call is in the money
	if _, err := p.SwapToTick(b, p.Fee, tick+callSide*(25*p.TickSpacing)); err != nil {
		s.t.Fatal(err)
	}
	s.ix.Sync()
}

// gatewayOver serves both chains from one gateway: 42161 and 5000, each
// with its own index and node, its put asset a USD stablecoin.
func gatewayOver(t *testing.T, sides ...*side) *app.App {
	cfg := config.Default()
	cfg.USDStablecoins = nil
	for _, s := range sides {
		sub := httptest.NewServer(s.ix.Serve())
		t.Cleanup(sub.Close)
		node := httptest.NewServer(pipeline.RPCHandler(s.p.Chain.RPC()))
		t.Cleanup(node.Close)
		ch := cfg.Chains[s.id]
		ch.SubgraphURL, ch.RPCURL = sub.URL, node.URL
		ch.Handlers[s.p.Handler] = config.Handler{Name: "uniswap"}
		ch.Multicall3 = s.mc
		cfg.USDStablecoins = append(cfg.USDStablecoins, strconv.FormatUint(s.id, 10)+":"+s.p.PutAsset.Hex())
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := app.New(app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ask(t *testing.T, a *app.App, url string) (*httptest.ResponseRecorder, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("%s: %d %s", url, rec.Code, rec.Body)
	}
	return rec, rec.Body.Bytes()
}

func decode(t *testing.T, body []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestPortfolioOverTwoChains asks one gateway serving two simulated
// chains for the watched user's portfolio and checks every figure of every
// option against the chain's own transfers: premium paid, exercise profit,
// the settlement's outcome, realized and unrealized PnL by token and their
// totals, each chain at its indexed head; the chain's realizedUsd is the
// sum of the user's stats/delta there, which is the leaderboard's net; an
// open option's value if exercised now is what exercising it then pays
// (before price impact: at most that, within 1% of it); each market's
// Greeks are the sum of its two open options' (a call and a put) at the
// block (checkGreeks).
func TestPortfolioOverTwoChains(t *testing.T) {
	arb := newSide(t, 42161, 3000, map[uint64]uint64{3600: 60, 7 * 3600: 50})
	arb.activity()
	mnt := newSide(t, 5000, 2000, map[uint64]uint64{3600: 70, 7 * 3600: 45})
	mnt.activity()
	a := gatewayOver(t, arb, mnt)
	user := arb.p.Users[1]
	_, body := ask(t, a, gateway.PathPortfolio+"?chains=42161,5000,421614&user="+user.Addr.Hex())
	var pf gateway.Portfolio
	decode(t, body, &pf)
	if len(pf.Chains) != 2 || len(pf.UnservedChains) != 1 || pf.UnservedChains[0] != "421614" {
		t.Fatalf("chains %d, unserved %v", len(pf.Chains), pf.UnservedChains)
	}
	for i, s := range []*side{mnt, arb} { // ascending chain ids
		c := pf.Chains[i]
		if c.ChainID != strconv.FormatUint(s.id, 10) || c.Block.ChainID != c.ChainID || c.Block.Number != s.p.Chain.BlockNumber() {
			t.Fatalf("chain %d: part %s at block %d, the chain's head is %d", s.id, c.ChainID, c.Block.Number, s.p.Chain.BlockNumber())
		}
		s.check(c)
		s.checkGreeks(c)
		realized := deltaSum(t, a, s, user.Addr)
		if c.Totals.RealizedUSD == nil || !sameRat(*c.Totals.RealizedUSD, realized) {
			t.Errorf("chain %d: realizedUsd %v, its stats/delta sums to %s", s.id, c.Totals.RealizedUSD, realized.FloatString(6))
		}
		s.exerciseOpen(c, user)
	}
}

// check holds one chain's part to what the chain measured.
func (s *side) check(c gateway.PortfolioChain) {
	t := s.t
	if len(c.Markets) != 1 || !strings.EqualFold(c.Markets[0].Market, s.p.Market.Hex()) || len(c.Markets[0].Options) != len(s.options) {
		t.Fatalf("chain %d: %d markets; the user traded %d options on %s", s.id, len(c.Markets), len(s.options), s.p.Market.Hex())
	}
	totals := map[common.Address]*big.Int{s.p.CallAsset: new(big.Int), s.p.PutAsset: new(big.Int)}
	for _, o := range c.Markets[0].Options {
		m := s.options[o.OptionID]
		if m == nil {
			t.Fatalf("chain %d: option %s, which the user did not buy", s.id, o.OptionID)
		}
		premium, profit := s.p.PutAsset, s.p.CallAsset
		if m.isCall {
			premium, profit = s.p.CallAsset, s.p.PutAsset
		}
		value, _ := new(big.Int).SetString(o.ValueIfExercised.Amount, 10)
		if o.PremiumPaid.Amount != m.paid.String() || !strings.EqualFold(o.PremiumPaid.Token.Address, premium.Hex()) ||
			o.ExerciseProfit.Amount != m.profit.String() || !strings.EqualFold(o.ExerciseProfit.Token.Address, profit.Hex()) ||
			o.Status != m.status || value == nil {
			t.Errorf("chain %d option %s: paid %s profit %s status %s; the chain: paid %s profit %s status %s",
				s.id, o.OptionID, o.PremiumPaid.Amount, o.ExerciseProfit.Amount, o.Status, m.paid, m.profit, m.status)
			continue
		}
		want := map[common.Address]*big.Int{profit: new(big.Int).Set(m.profit), premium: new(big.Int).Neg(m.paid)}
		for tok, v := range want {
			if got := tokenAmount(o.Realized, tok); got != v.String() {
				t.Errorf("chain %d option %s: realized %s %s, the chain says %s", s.id, o.OptionID, tok.Hex(), got, v)
			}
			totals[tok].Add(totals[tok], v)
		}
		if got := tokenAmount(o.Unrealized, profit); got != value.String() || o.Open != (m.status == "open") {
			t.Errorf("chain %d option %s: unrealized %s, value %s, open %v", s.id, o.OptionID, got, value, o.Open)
		}
	}
	for tok, v := range totals {
		if got := tokenAmount(c.Totals.Realized, tok); got != v.String() {
			t.Errorf("chain %d: total realized %s %s, the options' sum is %s", s.id, tok.Hex(), got, v)
		}
	}
	if c.Totals.OpenOptions != len(s.open) {
		t.Errorf("chain %d: %d open options, want %d", s.id, c.Totals.OpenOptions, len(s.open))
	}
}

// exerciseOpen exercises the user's open call (in the money) after the
// portfolio was read: what reaches the user is at most its value if
// exercised then, and within 1% of it; the open put is worth 0.
func (s *side) exerciseOpen(c gateway.PortfolioChain, user *pt.Account) {
	for _, o := range c.Markets[0].Options {
		if !o.Open {
			continue
		}
		value, _ := new(big.Int).SetString(o.ValueIfExercised.Amount, 10)
		if o.Type == "put" {
			if value.Sign() != 0 {
				s.t.Errorf("chain %d: the open put out of the money is worth %s", s.id, value)
			}
			continue
		}
		id, _ := new(big.Int).SetString(o.OptionID, 10)
		paid := s.exercise(user, id)
		floor := new(big.Int).Div(new(big.Int).Mul(value, big.NewInt(99)), big.NewInt(100))
		if value.Sign() <= 0 || paid.Cmp(value) > 0 || paid.Cmp(floor) < 0 {
			s.t.Errorf("chain %d option %s: value if exercised %s; exercising it paid %s", s.id, o.OptionID, value, paid)
		}
	}
}

// deltaSum is the sum of the user's stats/delta on the chain over the
// last 366 days (the chain's whole history), which must equal the
// leaderboard's usd.net over the same window; the answer must be the
// hosted client's type.
func deltaSum(t *testing.T, a *app.App, s *side, user common.Address) *big.Rat {
	to := int64(s.p.Chain.Now()) + 1
	win := "&from=" + strconv.FormatInt(to-366*86400, 10) + "&to=" + strconv.FormatInt(to, 10)
	_, body := ask(t, a, gateway.PathPnlDelta+"?chains="+strconv.FormatUint(s.id, 10)+"&user="+user.Hex()+win)
	for _, p := range hostedtypes.Check(body, hostedtypes.StatsPaths[gateway.PathPnlDelta]) {
		t.Errorf("stats/delta on chain %d: %s", s.id, p)
	}
	var ds []struct {
		Delta json.Number `json:"delta"`
	}
	decode(t, body, &ds)
	sum := new(big.Rat)
	for _, d := range ds {
		r, _ := new(big.Rat).SetString(string(d.Delta))
		sum.Add(sum, r)
	}
	var lb market.Leaderboard
	_, body = ask(t, a, gateway.PathLeaderboard+"?chainId="+strconv.FormatUint(s.id, 10)+win+"&first=100&skip=0")
	decode(t, body, &lb)
	for _, e := range lb.Entries {
		if strings.EqualFold(e.Trader, user.Hex()) && !sameRat(e.USD.Net, sum) {
			t.Errorf("chain %d: the deltas sum to %s, the leaderboard's net is %s", s.id, sum.FloatString(6), e.USD.Net)
		}
	}
	if len(ds) < 4 {
		t.Errorf("chain %d: %d deltas; the user bought four options and exercised one", s.id, len(ds))
	}
	return sum
}

func sameRat(s string, r *big.Rat) bool {
	v, ok := new(big.Rat).SetString(s)
	return ok && v.Cmp(r) == 0
}

func tokenAmount(l []vocab.TokenAmount, token common.Address) string {
	for _, a := range l {
		if strings.EqualFold(a.Token.Address, token.Hex()) {
			return a.Amount
		}
	}
	return "0"
}

// checkGreeks holds the market's Greeks to the sum of the user's two open
// options' (a call and a put), each computed here from what the chain
// states at the portfolio's block: its expiry and strike tick (opData), the
// collateral its mint took (LogMintOption: no leg was exercised since),
// ttlToVol of the ttl it was bought for, the market's mark price and
// strike price, the block's timestamp. The Black-Scholes is clamm's,
// checked against the npm vectors (TestBlackScholesGreeksVectors); the
// inputs and their scaling are this test's own. The put's part must be
// negative: a held put gains as the price falls.
func (s *side) checkGreeks(c gateway.PortfolioChain) {
	t, p := s.t, s.p
	g := c.Markets[0].Greeks
	if g == nil {
		t.Fatalf("chain %d: greeks null: %s", s.id, c.Markets[0].GreeksUnknown)
	}
	if now := p.Chain.Now(); uint64(c.Block.Timestamp) != now {
		t.Fatalf("chain %d: the portfolio's block time %d, the head's %d", s.id, c.Block.Timestamp, now)
	}
	var want clamm.Greeks
	putDelta := 0.0
	for _, id := range s.open {
		x := s.optionGreeks(id, uint64(c.Block.Timestamp))
		want.Delta, want.Gamma, want.Theta, want.Vega = want.Delta+x.Delta, want.Gamma+x.Gamma, want.Theta+x.Theta, want.Vega+x.Vega
		if !s.options[id.String()].isCall {
			putDelta = x.Delta
		}
	}
	if putDelta >= 0 {
		t.Fatalf("chain %d: the open put's delta is %v", s.id, putDelta)
	}
	for _, x := range []struct {
		name      string
		got, want float64
	}{{"delta", g.Delta, want.Delta}, {"gamma", g.Gamma, want.Gamma}, {"theta", g.Theta, want.Theta}, {"vega", g.Vega, want.Vega}} {
		if x.want == 0 || math.Abs(x.got-x.want) > 1e-9*math.Abs(x.want) {
			t.Errorf("chain %d: %s %v; the open options' sum is %v", s.id, x.name, x.got, x.want)
		}
	}
	if g.Options != len(s.open) || c.Markets[0].GreeksUnknown != "" {
		t.Errorf("chain %d: %d options summed (%q), %d open", s.id, g.Options, c.Markets[0].GreeksUnknown, len(s.open))
	}
}

// optionGreeks are one open option's Greeks at block time now, in the
// portfolio's units: one call asset's times the option's call assets (a
// put's collateral over its strike, as the market's mint counts it).
func (s *side) optionGreeks(id *big.Int, now uint64) clamm.Greeks {
	p, m := s.p, s.options[id.String()]
	d := p.OpData(id)
	strikeTick := d.TickLower
	if d.IsCall {
		strikeTick = d.TickUpper
	}
	ttl := new(big.Int).SetUint64(7 * 3600) // every open option was bought for 7 hours
	iv := p.Chain.Call(s.pricing.Pricing, pt.PricingV2.ABI, "ttlToVol", ttl)[0].(*big.Int)
	spot := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
	strike := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(strikeTick)))[0].(*big.Int)
	if iv.Sign() == 0 {
		s.t.Fatalf("chain %d: ttlToVol(%s) is 0", s.id, ttl)
	}
	ten := func(n uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }
	size := ratFloat(m.withdrawn, ten(p.CallDecimals))
	if !d.IsCall {
		amount := new(big.Int).Mul(m.withdrawn, ten(p.PutDecimals))
		size = ratFloat(amount.Quo(amount, strike), ten(p.PutDecimals))
	}
	one := clamm.BlackScholes(clamm.BSInput{IsCall: d.IsCall, S: ratFloat(spot, ten(p.PutDecimals)), K: ratFloat(strike, ten(p.PutDecimals)),
		T: float64(d.Expiry.Uint64()-now) / (365 * 86400), V: ratFloat(iv, big.NewInt(100))})
	return clamm.Greeks{Delta: one.Delta * size, Gamma: one.Gamma * size, Theta: one.Theta * size, Vega: one.Vega * size}
}

func ratFloat(a, b *big.Int) float64 {
	f, _ := new(big.Rat).SetFrac(a, b).Float64()
	return f
}
