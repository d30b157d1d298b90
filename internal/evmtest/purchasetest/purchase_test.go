package purchasetest

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

const chainID = 1337

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// rangesSubgraph answers the strikes query from the handler's own
// tokenIds getters for the ranges the test deposited (what an indexer of
// the handler's events would hold); the other queries are not used here.
type rangesSubgraph struct {
	service.Subgraph
	p      *pt.Protocol
	ranges []pt.Range
}

func (g *rangesSubgraph) Strikes(_ context.Context, q subgraph.StrikesQuery) ([]subgraph.Strike, subgraph.Meta, error) {
	var out []subgraph.Strike
	for _, r := range g.ranges {
		if r.TickLower < q.TickLowerMin || r.TickLower > q.TickLowerMax {
			continue
		}
		info := g.p.RangeInfo(r)
		out = append(out, subgraph.Strike{
			ID: g.p.TokenID(r).String(), Handler: subgraph.Address(g.p.Handler), Pool: subgraph.Address(g.p.Pool), Hook: subgraph.Address(r.Hook),
			TickLower: r.TickLower, TickUpper: r.TickUpper,
			TotalLiquidity: subgraph.BigInt{Int: info.TotalLiquidity}, UsedLiquidity: subgraph.BigInt{Int: info.LiquidityUsed},
		})
	}
	return out, subgraph.Meta{Block: g.p.Chain.BlockNumber(), Timestamp: int64(g.p.Chain.Now())}, nil
}

type setup struct {
	p       *pt.Protocol
	pr      *pt.Pricing
	svc     *service.Service
	up      *service.Upstreams
	g       *rangesSubgraph
	tick    int
	plain   pt.Range // a call range without a hook
	hooked  pt.Range // the same ticks under the 24h TTL hook
	weekend pt.Range // the same ticks under the weekend hook
	put     pt.Range
}

// deploy: a WETH/USDC market priced by TestOptionPricing (IV 50 for 1h,
// 45 for 1d; 34% fee), three call ranges at one strike (plain, 24h hook,
// weekend hook) and one put range.
func deploy(t *testing.T) *setup {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	s := &setup{p: p, tick: tick}
	s.pr = p.DeployPricing(pt.PricingConfig{IVs: map[uint64]uint64{3600: 50, 86400: 45}, FeePercentage: 340000})
	lo := (tick/10)*10 + 100
	s.plain = pt.Range{TickLower: lo, TickUpper: lo + 10}
	s.hooked = pt.Range{Hook: p.Hook24h, TickLower: lo, TickUpper: lo + 10}
	s.weekend = pt.Range{Hook: s.pr.WeekendHook, TickLower: lo, TickUpper: lo + 10}
	s.put = pt.Range{TickLower: (tick/10)*10 - 200, TickUpper: (tick/10)*10 - 190}
	for _, r := range []pt.Range{s.plain, s.hooked, s.weekend, s.put} {
		if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
			t.Fatal(err)
		}
	}
	s.g = &rangesSubgraph{p: p, ranges: []pt.Range{s.plain, s.hooked, s.weekend, s.put}}
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	ch := &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}},
		Hooks: map[common.Address]config.HookRules{
			p.Hook24h:        {Name: "BoundedTTLHook_0Day", MaxTTL: config.Duration(24 * time.Hour)},
			s.pr.WeekendHook: {Name: "WeekendHook", NoWeekends: true},
		}}
	s.up = &service.Upstreams{Config: ch, Subgraph: s.g, Chain: reader}
	s.svc = service.New(map[uint64]*service.Upstreams{chainID: s.up})
	return s
}

func (s *setup) upstreams() *service.Upstreams { return s.up }

// key is the strike's price at tick, as the strikes chain keys it.
func (s *setup) key(tick int) float64 {
	m := clamm.Market{Token0IsCall: s.p.Token0 == s.p.CallAsset, Decimals0: 18, Decimals1: 6}
	return m.TickPrice(tick)
}

func (s *setup) callReq(ttl uint64, amount *big.Int, user common.Address) service.PurchaseRequest {
	return service.PurchaseRequest{ChainID: chainID, Market: s.p.Market, IsCall: true, Strike: s.key(s.plain.TickUpper), TTL: ttl, Amount: amount, User: user}
}

func mustInt(t *testing.T, v string) *big.Int {
	t.Helper()
	n, ok := new(big.Int).SetString(v, 10)
	if !ok {
		t.Fatalf("not an integer: %q", v)
	}
	return n
}

func code(err error) string {
	var pe *problem.Error
	if errors.As(err, &pe) {
		return pe.Code.Name()
	}
	return ""
}

// The quote is the contract's own figure: getPremiumAmount and getFee of
// the market for exactly what the legs withdraw, at the block's price,
// from the user (whose xSYK discount the pricing reads from tx.origin).
func TestQuoteEqualsTheMarket(t *testing.T) {
	s := deploy(t)
	p := s.p
	buyer := p.Users[1]
	// Tier: 100 xSYK takes 20% off the IV; the buyer holds it.
	p.SetDiscounts(s.pr, []*big.Int{e18(100)}, []*big.Int{big.NewInt(2000)})
	p.MintXSyk(s.pr, buyer.Addr, e18(100))

	amount := new(big.Int).Div(e18(1), big.NewInt(1000)) // 0.001 WETH: the plain range alone covers it
	ctx := context.Background()
	q, err := s.svc.QuotePurchase(ctx, s.callReq(3600, amount, buyer.Addr))
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Legs) != 1 || q.Legs[0].Hook != (common.Address{}).Hex() {
		t.Fatalf("legs %+v, want the plain range alone", q.Legs)
	}
	size := mustInt(t, q.Size)
	if size.Cmp(amount) > 0 || new(big.Int).Sub(amount, size).Cmp(big.NewInt(1e6)) > 0 {
		t.Errorf("size %s for an amount of %s", size, amount)
	}
	strike := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(s.plain.TickUpper)))[0].(*big.Int)
	last := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getCurrentPricePerCallAsset", p.Pool)[0].(*big.Int)
	expiry := new(big.Int).SetUint64(q.Timestamp + 3600)
	want, err := p.Chain.TryCall(buyer.Addr, p.Market, pt.MarketV2.ABI, "getPremiumAmount", false, expiry, strike, last, size)
	if err != nil {
		t.Fatal(err)
	}
	if q.Premium != want[0].(*big.Int).String() || q.StrikePrice != strike.String() || q.MarkPrice != last.String() {
		t.Errorf("premium %s strike %s mark %s; the market from the buyer: %s at %s, %s", q.Premium, q.StrikePrice, q.MarkPrice, want[0], strike, last)
	}
	fee := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getFee", size, want[0])[0].(*big.Int)
	if q.Fees != fee.String() || fee.Sign() == 0 {
		t.Errorf("fees %s, getFee %s", q.Fees, fee)
	}
	// Without the user the pricing sees no discount: a higher IV and premium.
	anon, err := s.svc.QuotePurchase(ctx, s.callReq(3600, amount, common.Address{}))
	if err != nil {
		t.Fatal(err)
	}
	if mustInt(t, anon.Premium).Cmp(mustInt(t, q.Premium)) <= 0 || mustInt(t, anon.IV).Cmp(mustInt(t, q.IV)) <= 0 {
		t.Errorf("no discount: premium %s IV %s; the xSYK holder: %s IV %s", anon.Premium, anon.IV, q.Premium, q.IV)
	}
	// Puts: the market prices total * 10^putDecimals / strike.
	put := service.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 86400, Amount: big.NewInt(1_000_000)}
	pq, err := s.svc.QuotePurchase(ctx, put)
	if err != nil {
		t.Fatal(err)
	}
	pstrike := mustInt(t, pq.StrikePrice)
	amt := new(big.Int).Div(new(big.Int).Mul(mustInt(t, pq.Size), big.NewInt(1e6)), pstrike)
	pw := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPremiumAmount", true, new(big.Int).SetUint64(pq.Timestamp+86400), pstrike, mustInt(t, pq.MarkPrice), amt)[0].(*big.Int)
	if pq.Premium != pw.String() || pq.Token.Address != p.PutAsset.Hex() {
		t.Errorf("put premium %s in %s, market %s", pq.Premium, pq.Token.Address, pw)
	}
}

// The refusals: not enough free liquidity (with how much there is), no IV
// for the ttl (bare revert or a 0 price), a hook's ttl bound, the weekend.
func TestQuoteRefusals(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	free := new(big.Int)
	for _, r := range []pt.Range{s.plain, s.hooked, s.weekend} {
		a0, a1, _ := clamm.RangeAmounts(r.TickLower, r.TickUpper, p.RangeInfo(r).TotalLiquidity)
		if p.Token0 == p.CallAsset {
			free.Add(free, a0)
		} else {
			free.Add(free, a1)
		}
	}
	_, err := s.svc.QuotePurchase(ctx, s.callReq(3600, new(big.Int).Add(free, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_INSUFFICIENT_LIQUIDITY" || !strings.Contains(err.Error(), "available "+free.String()) {
		t.Errorf("too much: %v (free %s)", err, free)
	}
	_, err = s.svc.QuotePurchase(ctx, s.callReq(7200, big.NewInt(1e15), common.Address{}))
	if code(err) != "PURCHASE_IV_NOT_SET" {
		t.Errorf("IV unset: %v", err)
	}
	p.Chain.MustSend(p.Owner, s.pr.Pricing, pt.OptionPricing.ABI, "setZeroWhenUnset", true)
	_, err = s.svc.QuotePurchase(ctx, s.callReq(7200, big.NewInt(1e15), common.Address{}))
	if code(err) != "PURCHASE_IV_NOT_SET" {
		t.Errorf("IV unset, pricing 0: %v", err)
	}
	// Two days: only the weekend hook's range admits it (the 24h hook
	// refuses); asking for more than it holds names the 24h hook.
	p.SetIVs(s.pr, map[uint64]uint64{172800: 40})
	one := s.rangeAmount(s.plain)
	twoRanges := new(big.Int).Mul(one, big.NewInt(2))
	_, err = s.svc.QuotePurchase(ctx, s.callReq(172800, new(big.Int).Add(twoRanges, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_HOOK_REFUSED" || !strings.Contains(err.Error(), "at most 86400 seconds") {
		t.Errorf("24h hook: %v", err)
	}
	// A Saturday: the weekend hook's range refuses too.
	now := p.Chain.Now()
	days := (6 - (now/86400+4)%7 + 7) % 7 // to the next Saturday (0: today is one)
	p.Chain.AdjustTime(time.Duration(days*86400+3600) * time.Second)
	_, err = s.svc.QuotePurchase(ctx, s.callReq(3600, new(big.Int).Add(twoRanges, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_HOOK_REFUSED" || !strings.Contains(err.Error(), "Saturday or Sunday") {
		t.Errorf("weekend: %v", err)
	}
	if _, err := s.svc.QuotePurchase(ctx, s.callReq(3600, one, common.Address{})); err != nil {
		t.Errorf("the plain range alone, on a Saturday: %v", err)
	}
}

func (s *setup) rangeAmount(r pt.Range) *big.Int {
	a0, a1, _ := clamm.RangeAmounts(r.TickLower, r.TickUpper, s.p.RangeInfo(r).TotalLiquidity)
	if s.p.Token0 == s.p.CallAsset {
		return a0
	}
	return a1
}

// sendPrepared sends a prepared purchase from the buyer and returns the
// buyer's collateral spent, the receipt's LogMintOption and the error.
func (s *setup) sendPrepared(t *testing.T, buyer *pt.Account, got service.PreparedPurchase) (*big.Int, *pt.Event, error) {
	t.Helper()
	token := common.HexToAddress(got.Quote.Token.Address)
	before := s.p.Balance(token, buyer.Addr)
	rc, err := s.p.Chain.SendRaw(buyer, common.HexToAddress(got.Tx.To), common.FromHex(got.Tx.Data), "mintOption")
	spent := new(big.Int).Sub(before, s.p.Balance(token, buyer.Addr))
	if err != nil {
		return spent, nil, err
	}
	return spent, s.p.Find(rc, "LogMintOption"), nil
}

// A prepared purchase sent at once charges exactly the quoted premium plus
// fee and mints the option with the quoted legs; after an adverse price
// move within the slippage it still succeeds; beyond it, it reverts and
// nothing is lost.
func TestPreparedPurchase(t *testing.T) {
	s := deploy(t)
	p := s.p
	buyer := p.Users[1]
	ctx := context.Background()
	one := s.rangeAmount(s.plain)
	// More than one range holds: two legs (the plain range, then the 24h hook's).
	amount := new(big.Int).Add(one, new(big.Int).Div(one, big.NewInt(2)))
	slip, _ := clamm.ParseSlippage("5", 50)
	req := service.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, amount, buyer.Addr), Slippage: slip}
	got, err := s.svc.PreparePurchase(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Simulated || got.Approval != nil || len(got.Quote.Legs) != 2 {
		t.Fatalf("simulated %v approval %+v legs %+v", got.Simulated, got.Approval, got.Quote.Legs)
	}
	cost := new(big.Int).Add(mustInt(t, got.Quote.Premium), mustInt(t, got.Quote.Fees))
	if want := new(big.Int).Div(new(big.Int).Mul(cost, big.NewInt(105)), big.NewInt(100)); got.MaxCostAllowance != want.String() {
		t.Errorf("maxCostAllowance %s, want %s", got.MaxCostAllowance, want)
	}
	feeTo := p.Balance(p.CallAsset, s.pr.FeeTo)
	spent, ev, err := s.sendPrepared(t, buyer, got)
	if err != nil {
		t.Fatal(err)
	}
	if spent.Cmp(cost) != 0 || ev.Args["premiumAmount"].(*big.Int).String() != got.Quote.Premium ||
		ev.Args["protocolFees"].(*big.Int).String() != got.Quote.Fees || ev.Args["totalAssetWithdrawn"].(*big.Int).String() != got.Quote.Size {
		t.Errorf("spent %s (quoted %s); event %v; quote %+v", spent, cost, ev.Args, got.Quote)
	}
	if d := new(big.Int).Sub(p.Balance(p.CallAsset, s.pr.FeeTo), feeTo); d.String() != got.Quote.Fees {
		t.Errorf("feeTo got %s, quoted fees %s", d, got.Quote.Fees)
	}
	id := ev.Args["tokenId"].(*big.Int)
	legs := p.OpTicks(id)
	if p.OwnerOf(id) != buyer.Addr || len(legs) != len(got.Quote.Legs) {
		t.Fatalf("option %s: owner %s, %d legs", id, p.OwnerOf(id).Hex(), len(legs))
	}
	for i, l := range legs {
		q := got.Quote.Legs[i]
		if l.Hook.Hex() != q.Hook || l.Liquidity.String() != q.Liquidity || l.TickLower != q.TickLower || l.TickUpper != q.TickUpper || l.Handler.Hex() != q.Handler {
			t.Errorf("leg %d: minted %+v, quoted %+v", i, l, q)
		}
	}

	// Adverse moves: the call asset's price rises, and the premium with it.
	small := new(big.Int).Div(one, big.NewInt(10))
	within, err := s.svc.PreparePurchase(ctx, service.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, small, buyer.Addr), Slippage: slip})
	if err != nil {
		t.Fatal(err)
	}
	tight, _ := clamm.ParseSlippage("0.1", 50)
	beyond, err := s.svc.PreparePurchase(ctx, service.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, small, buyer.Addr), Slippage: tight})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(p.Users[2], p.Fee, s.tick+20); err != nil {
		t.Fatal(err)
	}
	if now, err := s.svc.QuotePurchase(ctx, s.callReq(3600, small, buyer.Addr)); err != nil || now.Cost == within.Quote.Cost {
		t.Fatalf("the move did not change the cost: %s then %s (%v)", within.Quote.Cost, now.Cost, err)
	}
	used := p.RangeInfo(s.plain).LiquidityUsed
	spent, _, err = s.sendPrepared(t, buyer, beyond)
	if !pt.IsRevert(err, "DopexV2OptionMarket__MaxCostAllowanceExceeded") || spent.Sign() != 0 || p.RangeInfo(s.plain).LiquidityUsed.Cmp(used) != 0 {
		t.Errorf("beyond the slippage: %v, spent %s, used %s -> %s", err, spent, used, p.RangeInfo(s.plain).LiquidityUsed)
	}
	spent, _, err = s.sendPrepared(t, buyer, within)
	if err != nil || spent.Cmp(mustInt(t, within.MaxCostAllowance)) > 0 || spent.String() == within.Quote.Cost {
		t.Errorf("within the slippage: %v, spent %s, quoted %s, max %s", err, spent, within.Quote.Cost, within.MaxCostAllowance)
	}
}

// A buyer whose allowance to the market is short gets the approve to send
// first (and no simulation); once approved, the purchase simulates.
func TestPreparedPurchaseNeedsApproval(t *testing.T) {
	s := deploy(t)
	p := s.p
	buyer := p.Users[3]
	p.Chain.MustSend(buyer, p.CallAsset, pt.Token.ABI, "approve", p.Market, big.NewInt(5))
	slip, _ := clamm.ParseSlippage("1", 50)
	req := service.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, big.NewInt(1e15), buyer.Addr), Slippage: slip}
	got, err := s.svc.PreparePurchase(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Approval
	if got.Simulated || a == nil || a.Token != p.CallAsset.Hex() || a.Spender != p.Market.Hex() || a.Amount != got.MaxCostAllowance || got.Allowance != "5" {
		t.Fatalf("approval %+v, simulated %v, allowance %s", a, got.Simulated, got.Allowance)
	}
	if mustInt(t, a.Missing).Cmp(new(big.Int).Sub(mustInt(t, a.Amount), big.NewInt(5))) != 0 {
		t.Errorf("missing %s", a.Missing)
	}
	if _, err := p.Chain.SendRaw(buyer, common.HexToAddress(a.Tx.To), common.FromHex(a.Tx.Data), "approve"); err != nil {
		t.Fatal(err)
	}
	got, err = s.svc.PreparePurchase(context.Background(), req)
	if err != nil || !got.Simulated || got.Approval != nil {
		t.Fatalf("after the approve: %+v, %v", got, err)
	}
	if _, ev, err := s.sendPrepared(t, buyer, got); err != nil || ev == nil {
		t.Fatalf("send: %v", err)
	}
}

// A put bought as prepared charges exactly its quote in the put asset; a
// buyer whose allowance covers the cost but whose balance does not gets a
// 422 from the simulation, naming the token's error, not a transaction.
func TestPreparedPutAndShortBalance(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	slip, _ := clamm.ParseSlippage("0.5", 50)
	buyer := p.Users[1]
	put := service.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 86400, Amount: big.NewInt(2_000_000_000), User: buyer.Addr}
	got, err := s.svc.PreparePurchase(ctx, service.PurchasePrepareRequest{PurchaseRequest: put, Slippage: slip})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Simulated || got.Quote.Token.Address != p.PutAsset.Hex() {
		t.Fatalf("put: simulated %v, token %s", got.Simulated, got.Quote.Token.Address)
	}
	spent, ev, err := s.sendPrepared(t, buyer, got)
	if err != nil || spent.String() != got.Quote.Cost || ev.Args["premiumAmount"].(*big.Int).String() != got.Quote.Premium || ev.Args["isCall"].(bool) {
		t.Fatalf("put sent: %v, spent %s, quoted %s, event %v", err, spent, got.Quote.Cost, ev)
	}

	poor := p.Users[2]
	bal := p.Balance(p.CallAsset, poor.Addr)
	p.Chain.MustSend(poor, p.CallAsset, pt.Token.ABI, "transfer", p.Owner.Addr, bal)
	_, err = s.svc.PreparePurchase(ctx, service.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, big.NewInt(1e15), poor.Addr), Slippage: slip})
	if code(err) != "PURCHASE_WOULD_REVERT" || !strings.Contains(err.Error(), poor.Addr.Hex()) {
		t.Errorf("a buyer without the collateral: %v", err)
	}
}
