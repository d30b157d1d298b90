package purchasetest

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
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
	vocab.Subgraph
	p      *pt.Protocol
	ranges []pt.Range
}

func (g *rangesSubgraph) Strikes(_ context.Context, q subgraph.StrikesQuery) ([]subgraph.Strike, []common.Address, subgraph.Meta, error) {
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
	// no pool beyond the prime pool, which the market reads itself: the
	// test's ranges are all in it
	return out, nil, subgraph.Meta{Block: g.p.Chain.BlockNumber(), Timestamp: int64(g.p.Chain.Now())}, nil
}

type setup struct {
	p       *pt.Protocol
	pr      *pt.Pricing
	svc     *service.Service
	up      *vocab.Upstreams
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
	s.up = &vocab.Upstreams{Config: ch, Subgraph: s.g, Chain: reader}
	s.svc = service.New(map[uint64]*vocab.Upstreams{chainID: s.up})
	return s
}

func (s *setup) upstreams() *vocab.Upstreams { return s.up }

// key is the strike's price at tick, as the strikes chain keys it.
func (s *setup) key(tick int) float64 {
	m := clamm.Market{Token0IsCall: s.p.Token0 == s.p.CallAsset, Decimals0: 18, Decimals1: 6}
	return m.TickPrice(tick)
}

func (s *setup) callReq(ttl uint64, amount *big.Int, user common.Address) trade.PurchaseRequest {
	return trade.PurchaseRequest{ChainID: chainID, Market: s.p.Market, IsCall: true, Strike: s.key(s.plain.TickUpper), TTL: ttl, Amount: amount, User: user}
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
	q, err := s.svc.PurchaseQuote(ctx, s.callReq(3600, amount, buyer.Addr))
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
	anon, err := s.svc.PurchaseQuote(ctx, s.callReq(3600, amount, common.Address{}))
	if err != nil {
		t.Fatal(err)
	}
	if q.IV == nil || anon.IV == nil || q.IVSource != "getVolatility4" {
		t.Fatalf("IV %v from %q: the pricing has the 4-argument getVolatility", q.IV, q.IVSource)
	}
	if mustInt(t, anon.Premium).Cmp(mustInt(t, q.Premium)) <= 0 || mustInt(t, *anon.IV).Cmp(mustInt(t, *q.IV)) <= 0 {
		t.Errorf("no discount: premium %s IV %s; the xSYK holder: %s IV %s", anon.Premium, *anon.IV, q.Premium, *q.IV)
	}
	// Puts: the market prices total * 10^putDecimals / strike.
	put := trade.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 86400, Amount: big.NewInt(1_000_000)}
	pq, err := s.svc.PurchaseQuote(ctx, put)
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
// The chain is put on a Wednesday first (the weekend hook's range is free)
// and then on a Saturday (it is not), so the test holds on any day it runs
// and fails on any day if the hook's rule were ignored.
func TestQuoteRefusals(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	p.Chain.ToWeekday(time.Wednesday)
	free := new(big.Int)
	for _, r := range []pt.Range{s.plain, s.hooked, s.weekend} {
		a0, a1, _ := clamm.RangeAmounts(r.TickLower, r.TickUpper, p.RangeInfo(r).TotalLiquidity)
		if p.Token0 == p.CallAsset {
			free.Add(free, a0)
		} else {
			free.Add(free, a1)
		}
	}
	_, err := s.svc.PurchaseQuote(ctx, s.callReq(3600, new(big.Int).Add(free, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_INSUFFICIENT_LIQUIDITY" || !strings.Contains(err.Error(), "available "+free.String()) {
		t.Errorf("too much: %v (free %s)", err, free)
	}
	_, err = s.svc.PurchaseQuote(ctx, s.callReq(7200, big.NewInt(1e15), common.Address{}))
	if code(err) != "PURCHASE_IV_NOT_SET" {
		t.Errorf("IV unset: %v", err)
	}
	p.Chain.MustSend(p.Owner, s.pr.Pricing, pt.OptionPricing.ABI, "setZeroWhenUnset", true)
	_, err = s.svc.PurchaseQuote(ctx, s.callReq(7200, big.NewInt(1e15), common.Address{}))
	if code(err) != "PURCHASE_IV_NOT_SET" {
		t.Errorf("IV unset, pricing 0: %v", err)
	}
	// Two days: only the weekend hook's range admits it (the 24h hook
	// refuses); asking for more than it holds names the 24h hook.
	p.SetIVs(s.pr, map[uint64]uint64{172800: 40})
	one := s.rangeAmount(s.plain)
	twoRanges := new(big.Int).Mul(one, big.NewInt(2))
	_, err = s.svc.PurchaseQuote(ctx, s.callReq(172800, new(big.Int).Add(twoRanges, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_HOOK_REFUSED" || !strings.Contains(err.Error(), "at most 86400 seconds") {
		t.Errorf("24h hook: %v", err)
	}
	// A Saturday: the weekend hook's range refuses too.
	p.Chain.ToWeekday(time.Saturday)
	_, err = s.svc.PurchaseQuote(ctx, s.callReq(3600, new(big.Int).Add(twoRanges, big.NewInt(1)), common.Address{}))
	if code(err) != "PURCHASE_HOOK_REFUSED" || !strings.Contains(err.Error(), "Saturday or Sunday") {
		t.Errorf("weekend: %v", err)
	}
	if _, err := s.svc.PurchaseQuote(ctx, s.callReq(3600, one, common.Address{})); err != nil {
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
func (s *setup) sendPrepared(t *testing.T, buyer *pt.Account, got trade.PreparedPurchase) (*big.Int, *pt.Event, error) {
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
	req := trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, amount, buyer.Addr), Slippage: slip}
	got, err := s.svc.PurchasePrepare(ctx, req)
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
	within, err := s.svc.PurchasePrepare(ctx, trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, small, buyer.Addr), Slippage: slip})
	if err != nil {
		t.Fatal(err)
	}
	tight, _ := clamm.ParseSlippage("0.1", 50)
	beyond, err := s.svc.PurchasePrepare(ctx, trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, small, buyer.Addr), Slippage: tight})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapToTick(p.Users[2], p.Fee, s.tick+20); err != nil {
		t.Fatal(err)
	}
	if now, err := s.svc.PurchaseQuote(ctx, s.callReq(3600, small, buyer.Addr)); err != nil || now.Cost == within.Quote.Cost {
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
// first, simulated with the purchase after it (audit 5's M28: one probed
// simulation, approval then mintOption); sent as prepared, both succeed.
func TestPreparedPurchaseNeedsApproval(t *testing.T) {
	s := deploy(t)
	p := s.p
	buyer := p.Users[3]
	p.Chain.MustSend(buyer, p.CallAsset, pt.Token.ABI, "approve", p.Market, big.NewInt(5))
	slip, _ := clamm.ParseSlippage("1", 50)
	req := trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, big.NewInt(1e15), buyer.Addr), Slippage: slip}
	got, err := s.svc.PurchasePrepare(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Approval
	if !got.Simulated || got.SimulatedAt == nil || a == nil || a.Token != p.CallAsset.Hex() || a.Spender != p.Market.Hex() || a.Amount != got.MaxCostAllowance || got.Allowance != "5" {
		t.Fatalf("approval %+v, simulated %v, allowance %s", a, got.Simulated, got.Allowance)
	}
	if mustInt(t, a.Missing).Cmp(new(big.Int).Sub(mustInt(t, a.Amount), big.NewInt(5))) != 0 {
		t.Errorf("missing %s", a.Missing)
	}
	if _, err := p.Chain.SendRaw(buyer, common.HexToAddress(a.Tx.To), common.FromHex(a.Tx.Data), "approve"); err != nil {
		t.Fatal(err)
	}
	if spent, ev, err := s.sendPrepared(t, buyer, got); err != nil || ev == nil || spent.Cmp(mustInt(t, got.MaxCostAllowance)) > 0 {
		t.Fatalf("the purchase prepared with its approval, sent after it: %v, spent %s of at most %s", err, spent, got.MaxCostAllowance)
	}
}

// Audit 5's M28 (b), its reproduction TestAudit5NoAllowanceShortBalance:
// a first-time buyer (allowance 0) whose balance is 1 base unit. The
// approval and mintOption are simulated together, so the purchase is
// refused, naming the token's refusal, before anything is signed; the
// same buyer with the balance restored gets a simulated approval and
// purchase that, sent as prepared, pay the quoted cost.
func TestNoAllowanceShortBalanceRefusedBeforeSigning(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	slip, _ := clamm.ParseSlippage("0.5", 50)
	buyer := p.Users[1]
	p.Chain.MustSend(buyer, p.PutAsset, pt.Token.ABI, "approve", p.Market, big.NewInt(0))
	bal := p.Balance(p.PutAsset, buyer.Addr)
	rest := new(big.Int).Sub(bal, big.NewInt(1))
	p.Chain.MustSend(buyer, p.PutAsset, pt.Token.ABI, "transfer", p.Owner.Addr, rest)
	put := trade.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 3600, Amount: big.NewInt(1_000_000_000), User: buyer.Addr}
	req := trade.PurchasePrepareRequest{PurchaseRequest: put, Slippage: slip}
	got, err := s.svc.PurchasePrepare(ctx, req)
	if code(err) != "PURCHASE_WOULD_REVERT" || !strings.Contains(err.Error(), "exceeds balance") || !strings.Contains(err.Error(), buyer.Addr.Hex()) {
		t.Fatalf("a buyer with no allowance and a balance of 1: %+v, %v", got, err)
	}
	p.Chain.MustSend(p.Owner, p.PutAsset, pt.Token.ABI, "transfer", buyer.Addr, rest)
	got, err = s.svc.PurchasePrepare(ctx, req)
	if err != nil || !got.Simulated || got.Approval == nil || got.Approval.Missing != got.MaxCostAllowance {
		t.Fatalf("with the balance back: %+v, %v", got, err)
	}
	if _, err := p.Chain.SendRaw(buyer, p.PutAsset, common.FromHex(got.Approval.Tx.Data), "approve"); err != nil {
		t.Fatal(err)
	}
	spent, ev, err := s.sendPrepared(t, buyer, got)
	if err != nil || ev == nil || spent.String() != got.Quote.Cost {
		t.Fatalf("sent as prepared: %v, spent %s, quoted %s", err, spent, got.Quote.Cost)
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
	put := trade.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 86400, Amount: big.NewInt(2_000_000_000), User: buyer.Addr}
	got, err := s.svc.PurchasePrepare(ctx, trade.PurchasePrepareRequest{PurchaseRequest: put, Slippage: slip})
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
	_, err = s.svc.PurchasePrepare(ctx, trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, big.NewInt(1e15), poor.Addr), Slippage: slip})
	if code(err) != "PURCHASE_WOULD_REVERT" || !strings.Contains(err.Error(), poor.Addr.Hex()) {
		t.Errorf("a buyer without the collateral: %v", err)
	}
}

// A put on the USDC side at a strike with two ranges at the same ticks (no
// hook, and the 24h hook, as the frontends deposit): one unit of liquidity
// there is worth far less than one USDC base unit. The prepared purchase
// never carries a leg of zero collateral (mintOption requires collateral in
// every leg and would revert), each leg takes the most liquidity whose
// amount fits, and sent at once it buys exactly what it says.
func TestPreparedPutOverTwoRangesHasNoEmptyLeg(t *testing.T) {
	s := deploy(t)
	p := s.p
	hooked := pt.Range{Hook: p.Hook24h, TickLower: s.put.TickLower, TickUpper: s.put.TickUpper}
	if _, _, err := p.Deposit(p.Users[0], hooked, e18(1)); err != nil {
		t.Fatal(err)
	}
	s.g.ranges = append(s.g.ranges, hooked)
	buyer := p.Users[1]
	slip, _ := clamm.ParseSlippage("1", 50)
	putIs0 := p.Token0 == p.PutAsset
	one, _ := clamm.RangeAmount(s.put.TickLower, s.put.TickUpper, p.RangeInfo(s.put).TotalLiquidity, putIs0)
	for _, amount := range []*big.Int{big.NewInt(1_000_000_000), big.NewInt(123_456_789), new(big.Int).Add(one, big.NewInt(5_000_000))} {
		put := trade.PurchaseRequest{ChainID: chainID, Market: p.Market, Strike: s.key(s.put.TickLower), TTL: 3600, Amount: amount, User: buyer.Addr}
		got, err := s.svc.PurchasePrepare(context.Background(), trade.PurchasePrepareRequest{PurchaseRequest: put, Slippage: slip})
		if err != nil {
			t.Fatalf("amount %s: %v", amount, err)
		}
		if !got.Simulated {
			t.Fatalf("amount %s: not simulated", amount)
		}
		left := new(big.Int).Set(amount)
		for i, l := range got.Quote.Legs {
			liq, amt := mustInt(t, l.Liquidity), mustInt(t, l.Amount)
			// the whole range, or one more unit of liquidity would exceed what was left
			info := p.RangeInfo(pt.Range{Hook: common.HexToAddress(l.Hook), TickLower: l.TickLower, TickUpper: l.TickUpper})
			whole := liq.Cmp(new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)) == 0
			next, _ := clamm.RangeAmount(l.TickLower, l.TickUpper, new(big.Int).Add(liq, big.NewInt(1)), putIs0)
			if amt.Sign() == 0 || (!whole && next.Cmp(left) <= 0) {
				t.Errorf("amount %s: leg %d %+v (one more unit of liquidity: %s, left %s)", amount, i, l, next, left)
			}
			left.Sub(left, amt)
		}
		spent, ev, err := s.sendPrepared(t, buyer, got)
		if err != nil {
			t.Fatalf("amount %s: %d legs %+v: %v", amount, len(got.Quote.Legs), got.Quote.Legs, err)
		}
		if spent.String() != got.Quote.Cost || ev.Args["totalAssetWithdrawn"].(*big.Int).String() != got.Quote.Size {
			t.Errorf("amount %s: spent %s (quoted %s), withdrew %v (size %s)", amount, spent, got.Quote.Cost, ev.Args["totalAssetWithdrawn"], got.Quote.Size)
		}
		if amount.Cmp(one) < 0 && (len(got.Quote.Legs) != 1 || got.Quote.Size != amount.String()) {
			t.Errorf("amount %s within the first range: legs %+v, size %s", amount, got.Quote.Legs, got.Quote.Size)
		}
	}
}

// laggingSubgraph answers the strikes query as the subgraph did at one
// block: one that has not indexed the blocks since.
type laggingSubgraph struct {
	vocab.Subgraph
	strikes []subgraph.Strike
	meta    subgraph.Meta
}

func (g *laggingSubgraph) Strikes(_ context.Context, q subgraph.StrikesQuery) ([]subgraph.Strike, []common.Address, subgraph.Meta, error) {
	var out []subgraph.Strike
	for _, r := range g.strikes {
		if r.TickLower >= q.TickLowerMin && r.TickLower <= q.TickLowerMax && (q.TickUpper == nil || (r.TickUpper >= q.TickUpper[0] && r.TickUpper <= q.TickUpper[1])) {
			out = append(out, r)
		}
	}
	return out, nil, g.meta, nil
}

// A prepared purchase is read at the answer's block (the subgraph's, which
// lags) and simulated at the chain's head, which it names: a range used up
// since the answer's block is caught there (a 422 naming the head), not
// certified by a simulation at the lagging block.
func TestPreparedPurchaseSimulatesAtTheHead(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	all, _, meta, err := s.g.Strikes(ctx, subgraph.StrikesQuery{TickLowerMin: clamm.MinTick, TickLowerMax: clamm.MaxTick})
	if err != nil {
		t.Fatal(err)
	}
	s.up.Subgraph = &laggingSubgraph{strikes: all, meta: meta}
	n := meta.Block
	hdr, err := p.Chain.Client().HeaderByNumber(ctx, new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatal(err)
	}
	at := func() context.Context { // the answer's block: the subgraph's
		pctx, pin := block.With(ctx, n)
		pin.Resolve(block.Ref{Number: n, Hash: hdr.Hash().Hex(), Timestamp: int64(hdr.Time)})
		return pctx
	}
	slip, _ := clamm.ParseSlippage("1", 50)
	req := trade.PurchasePrepareRequest{Slippage: slip, PurchaseRequest: trade.PurchaseRequest{ChainID: chainID, Market: p.Market,
		Strike: s.key(s.put.TickLower), TTL: 3600, Amount: big.NewInt(1_000_000_000), User: p.Users[1].Addr}}

	p.Chain.Commit() // the head moves on; nothing changes for this purchase
	head, _ := p.Chain.Client().HeaderByNumber(ctx, nil)
	got, err := s.svc.PurchasePrepare(at(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Simulated || got.SimulatedAt == nil || got.SimulatedAt.Number != head.Number.Uint64() || got.SimulatedAt.Hash != head.Hash().Hex() ||
		got.SimulatedAt.Timestamp != int64(head.Time) || got.Quote.Block != n || head.Number.Uint64() <= n {
		t.Fatalf("read at %d, simulated %v at %+v; the head is %d %s", got.Quote.Block, got.Simulated, got.SimulatedAt, head.Number, head.Hash().Hex())
	}

	// Another buyer takes the whole range after the subgraph's block.
	info := p.RangeInfo(s.put)
	free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
	if _, _, err := p.Buy(p.Users[2], pt.Option{TickLower: s.put.TickLower, TickUpper: s.put.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: s.put, Liquidity: free}}}); err != nil {
		t.Fatal(err)
	}
	// Every figure of the first answer is the contracts' at the block it names.
	s.figuresAt(t, got, n, p.Users[1].Addr, slip)
	head, _ = p.Chain.Client().HeaderByNumber(ctx, nil)
	_, err = s.svc.PurchasePrepare(at(), req)
	if code(err) != "PURCHASE_WOULD_REVERT" || !strings.Contains(err.Error(), fmt.Sprintf("at block %d", head.Number)) {
		t.Errorf("the range was used up at block %d: %v", head.Number, err)
	}
	if q, err := s.svc.PurchaseQuote(at(), req.PurchaseRequest); err != nil || q.Block != n {
		t.Errorf("the quote at the answer's block %d: %+v, %v", n, q, err)
	}
}

// A market whose feeTo is zero charges no protocol fee (mintOption asks
// getFee only when feeTo is set): the quote says fees 0 without asking
// getFee (which would answer, and be wrong), and the prepared purchase
// sent at once costs exactly the premium.
func TestNoFeeWhenFeeToIsZero(t *testing.T) {
	s := deploy(t)
	p := s.p
	p.Chain.MustSend(p.Owner, p.Market, pt.MarketV2.ABI, "updateFees", common.Address{}, big.NewInt(0))
	buyer := p.Users[1]
	slip, _ := clamm.ParseSlippage("1", 50)
	got, err := s.svc.PurchasePrepare(context.Background(), trade.PurchasePrepareRequest{PurchaseRequest: s.callReq(3600, big.NewInt(1e15), buyer.Addr), Slippage: slip})
	if err != nil {
		t.Fatal(err)
	}
	q := got.Quote
	if wouldBe := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getFee", mustInt(t, q.Size), mustInt(t, q.Premium))[0].(*big.Int); wouldBe.Sign() == 0 {
		t.Fatal("getFee answers 0: the test shows nothing")
	}
	if q.Fees != "0" || q.Cost != q.Premium {
		t.Errorf("feeTo zero: fees %s, cost %s, premium %s", q.Fees, q.Cost, q.Premium)
	}
	spent, ev, err := s.sendPrepared(t, buyer, got)
	if err != nil || spent.String() != q.Cost || ev.Args["protocolFees"].(*big.Int).Sign() != 0 {
		t.Errorf("sent: %v, spent %s (quoted %s), event %v", err, spent, q.Cost, ev)
	}
}

// On a market priced by OptionPricingLinearV2's generation, whose
// getVolatility takes three arguments, the IV reported is the one the
// premium is priced at (that getVolatility's answer for the strike, skewed
// away from the table's), in the quote and in the options chain, whose
// Greeks are computed from it.
func TestIVFromLinearV2Pricing(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	lo := (tick/10)*10 + 100
	r := pt.Range{TickLower: lo, TickUpper: lo + 10}
	if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
		t.Fatal(err)
	}
	pr := p.DeployPricingLinearV2(pt.PricingConfig{IVs: map[uint64]uint64{3600: 50}, FeePercentage: 340000}, 10000, 1000)
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	up := &vocab.Upstreams{Config: &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}}},
		Subgraph: &rangesSubgraph{p: p, ranges: []pt.Range{r}}, Chain: reader}
	svc := service.New(map[uint64]*vocab.Upstreams{chainID: up})
	s := &setup{p: p}
	ctx := context.Background()
	q, err := svc.PurchaseQuote(ctx, trade.PurchaseRequest{ChainID: chainID, Market: p.Market, IsCall: true, Strike: s.key(r.TickUpper), TTL: 3600, Amount: big.NewInt(1e15)})
	if err != nil {
		t.Fatal(err)
	}
	strike, last := mustInt(t, q.StrikePrice), mustInt(t, q.MarkPrice)
	want := p.Chain.Call(pr.Pricing, pt.PricingLinearV2.ABI, "getVolatility", strike, last, big.NewInt(50))[0].(*big.Int)
	if q.IV == nil || *q.IV != want.String() || q.IVSource != "getVolatility3" || q.BaseIV != "50" || want.String() == q.BaseIV {
		t.Errorf("iv %v from %q (base %s); the pricing prices at %s", q.IV, q.IVSource, q.BaseIV, want)
	}
	oc, err := svc.OptionsChain(ctx, market.OptionsChainRequest{StrikesRequest: market.StrikesRequest{ChainID: chainID, Market: p.Market, CallsReach: 20, PutsReach: 20}, TTLs: []uint64{3600}})
	if err != nil {
		t.Fatal(err)
	}
	o := oc.Expiries[0].Options[0]
	if o.IV == nil || *o.IV != want.String() || o.IVSource == nil || *o.IVSource != "getVolatility3" || o.Greeks == nil {
		t.Errorf("options chain: %+v; the pricing prices at %s", o, want)
	}
}

// figuresAt checks every figure of a prepared put against the contracts'
// getters at block n, the block the answer names, from the buyer: the
// strike, mark price, IVs, premium and fee the market and its pricing
// give there, each leg's liquidity within the range's free liquidity then
// and its amount what the pool gives for it, the buyer's allowance and
// balance then, and the cost cap from the slippage.
func (s *setup) figuresAt(t *testing.T, got trade.PreparedPurchase, n uint64, buyer common.Address, slip clamm.Slippage) {
	t.Helper()
	p, q := s.p, got.Quote
	at := func(to common.Address, a abi.ABI, method string, args ...any) *big.Int {
		t.Helper()
		out, err := p.Chain.TryCallAt(buyer, to, n, a, method, args...)
		if err != nil {
			t.Fatalf("%s at %d: %v", method, n, err)
		}
		return out[0].(*big.Int)
	}
	hdr, err := p.Chain.Client().HeaderByNumber(context.Background(), new(big.Int).SetUint64(n))
	if err != nil {
		t.Fatal(err)
	}
	ttl := new(big.Int).SetUint64(q.TTL)
	strike := at(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(q.StrikeTick)))
	last := at(p.Market, pt.MarketV2.ABI, "getCurrentPricePerCallAsset", p.Pool)
	base := at(s.pr.Pricing, pt.OptionPricing.ABI, "ttlToVol", ttl)
	vol := at(s.pr.Pricing, pt.OptionPricing.ABI, "getVolatility", strike, last, base, ttl)
	size := mustInt(t, q.Size)
	amount := new(big.Int).Div(new(big.Int).Mul(size, big.NewInt(1e6)), strike) // a put: size * 10^putDecimals / strike
	premium := at(p.Market, pt.MarketV2.ABI, "getPremiumAmount", true, new(big.Int).SetUint64(hdr.Time+q.TTL), strike, last, amount)
	fee := at(p.Market, pt.MarketV2.ABI, "getFee", size, premium)
	cost := new(big.Int).Add(premium, fee)
	want := map[string][2]string{
		"block": {fmt.Sprint(q.Block), fmt.Sprint(n)}, "timestamp": {fmt.Sprint(q.Timestamp), fmt.Sprint(hdr.Time)},
		"strikePrice": {q.StrikePrice, strike.String()}, "markPrice": {q.MarkPrice, last.String()},
		"baseIv": {q.BaseIV, base.String()}, "iv": {fmt.Sprint(*q.IV), vol.String()},
		"premium": {q.Premium, premium.String()}, "fees": {q.Fees, fee.String()}, "cost": {q.Cost, cost.String()},
		"allowance":        {got.Allowance, at(p.PutAsset, pt.Token.ABI, "allowance", buyer, p.Market).String()},
		"balance":          {got.Balance, at(p.PutAsset, pt.Token.ABI, "balanceOf", buyer).String()},
		"maxCostAllowance": {got.MaxCostAllowance, slip.MaxIn(cost).String()},
	}
	sum := new(big.Int)
	for i, l := range q.Legs {
		r := pt.Range{Hook: common.HexToAddress(l.Hook), TickLower: l.TickLower, TickUpper: l.TickUpper}
		ids, err := p.Chain.TryCallAt(buyer, common.HexToAddress(l.Handler), n, pt.HandlerV2.ABI, "tokenIds", p.TokenID(r))
		if err != nil {
			t.Fatal(err)
		}
		free := new(big.Int).Sub(ids[0].(*big.Int), ids[2].(*big.Int)) // totalLiquidity - liquidityUsed
		liq := mustInt(t, l.Liquidity)
		amt, _ := clamm.RangeAmount(l.TickLower, l.TickUpper, liq, p.Token0 == p.PutAsset)
		if liq.Cmp(free) > 0 || l.Amount != amt.String() {
			t.Errorf("leg %d at %d: liquidity %s of %s free, amount %s (the pool gives %s)", i, n, liq, free, l.Amount, amt)
		}
		sum.Add(sum, amt)
	}
	want["size"] = [2]string{q.Size, sum.String()}
	for k, v := range want {
		if v[0] != v[1] {
			t.Errorf("%s: %s, the contracts at block %d: %s", k, v[0], n, v[1])
		}
	}
}
