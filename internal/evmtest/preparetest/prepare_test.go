package preparetest

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

const chainID = 1337

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// positions reads the option with the protocol's own getters (the
// simulated chain has no Multicall3 for chain.Reader.Position; its
// decoding is tested against the fake node) and simulates with the
// gateway's real chain.Reader: the part under test.
type positions struct {
	*chain.Reader
	p *pt.Protocol
}

func (s positions) Position(_ context.Context, _ common.Address, id *big.Int) (*chain.Position, error) {
	d := s.p.OpData(id)
	pos := &chain.Position{Owner: s.p.OwnerOf(id), Version: chain.MarketV2, BlockTimestamp: new(big.Int).SetUint64(s.p.Chain.Now()),
		Data: chain.OptionData{OpTickArrayLen: d.OpTickArrayLen.Uint64(), TickLower: d.TickLower, TickUpper: d.TickUpper, Expiry: d.Expiry, IsCall: d.IsCall}}
	for _, l := range s.p.OpTicks(id) {
		pos.Legs = append(pos.Legs, chain.OptionLeg{Handler: l.Handler, Pool: l.Pool, Hook: l.Hook, TickLower: l.TickLower, TickUpper: l.TickUpper, LiquidityToUse: l.Liquidity})
	}
	return pos, nil
}

// oneInchAPI is the 1inch swap API over the simulated chain: toAmount is
// QuoterV2's quote of the leg alone at the current state (what 1inch
// quotes), tx.data the router's swap() with minReturnAmount = the slippage
// applied to it, paying the receiver.
func oneInchAPI(t *testing.T, p *pt.Protocol) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		amount, _ := new(big.Int).SetString(q.Get("amount"), 10)
		slip, err := clamm.ParseSlippage(q.Get("slippage"), 50)
		if amount == nil || err != nil {
			w.WriteHeader(400)
			return
		}
		src, dst := common.HexToAddress(q.Get("src")), common.HexToAddress(q.Get("dst"))
		out, _ := p.Quote(src, amount, p.Fee)
		data := pt.OneInchSwapData(src, dst, amount, slip.MinOut(out), common.HexToAddress(q.Get("receiver")), p.Fee)
		_ = json.NewEncoder(w).Encode(map[string]any{"toAmount": out.String(),
			"tx": map[string]any{"to": p.OneInchRouter.Hex(), "data": hexutil.Encode(data)}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newService(t *testing.T, p *pt.Protocol) *service.Service {
	rc := p.Chain.RPC()
	reader := testenv.NewReader(t, rc, common.Address{})
	ch := &config.Chain{ID: chainID, Swappers: map[string]*config.Swapper{
		"uni-v3": {Kind: "uniswap-v3", Address: p.Swapper, Quoter: p.Quoter},
		"1inch":  {Kind: "1inch", Address: p.OneInchSwapper},
	}}
	return service.New(map[uint64]*vocab.Upstreams{chainID: {
		Config: ch, Chain: positions{reader, p},
		Quoters: map[string]swap.Quoter{
			"uni-v3": &swap.UniV3{RPC: rc, Quoter: p.Quoter, Timeout: time.Minute, Contracts: swap.Contracts{Address: p.Swapper}},
			"1inch": &swap.OneInch{BaseURL: oneInchAPI(t, p).URL, ChainID: chainID, Router: p.OneInchRouter,
				Timeout: time.Minute, Contracts: swap.Contracts{Address: p.OneInchSwapper}},
		},
	}})
}

type setup struct {
	p      *pt.Protocol
	svc    *service.Service
	isCall bool
	r0, r1 pt.Range
	tick   int
	buyer  *pt.Account
	trader *pt.Account
}

// twoLegs deploys and buys `options` two-leg options whose legs are the
// same ticks through the one prime pool (one plain range, one under the
// 24h hook), then moves the price into the money.
func twoLegs(t *testing.T, isCall bool, options int) (setup, []*big.Int) {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	s := setup{p: p, isCall: isCall, tick: tick, buyer: p.Users[1], trader: p.Users[2]}
	lo := tick + 100
	if !isCall {
		lo = tick - 110
	}
	s.r0 = pt.Range{TickLower: lo, TickUpper: lo + 10}
	s.r1 = pt.Range{Hook: p.Hook24h, TickLower: lo, TickUpper: lo + 10}
	var ids []*big.Int
	for i := 0; i < options; i++ {
		_, l0, err := p.Deposit(p.Users[0], s.r0, e18(1))
		if err != nil {
			t.Fatal(err)
		}
		_, l1, err := p.Deposit(p.Users[0], s.r1, e18(2))
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := p.Buy(s.buyer, pt.Option{IsCall: isCall, TickLower: lo, TickUpper: lo + 10, TTL: 3600, Legs: []pt.Leg{{Range: s.r0, Liquidity: l0}, {Range: s.r1, Liquidity: l1}}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	s.intoTheMoney(t)
	s.svc = newService(t, p)
	return s, ids
}

// intoTheMoney moves the pool's price 600 ticks (about 6%) past the start, beyond the
// legs' range on the side where the option pays.
func (s setup) intoTheMoney(t *testing.T) {
	t.Helper()
	itm := s.tick + 600
	if !s.isCall {
		itm = s.tick - 600
	}
	if _, err := s.p.SwapToTick(s.trader, s.p.Fee, itm); err != nil {
		t.Fatal(err)
	}
}

func (s setup) profitToken() common.Address {
	if s.isCall {
		return s.p.PutAsset
	}
	return s.p.CallAsset
}

func (s setup) prepare(t *testing.T, id *big.Int, swapper, slippage string) trade.Prepared {
	t.Helper()
	slip, err := clamm.ParseSlippage(slippage, 50)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.svc.ExercisePrepare(context.Background(), trade.PrepareRequest{ChainID: chainID, Market: s.p.Market, OptionID: id, SwapperID: swapper, Slippage: slip})
	if err != nil {
		t.Fatalf("prepare option %s via %s: %v", id, swapper, err)
	}
	return got
}

// send executes the prepared transaction from the owner and returns what
// the owner received in the profit token.
func (s setup) send(t *testing.T, got trade.Prepared) (*big.Int, error) {
	t.Helper()
	before := s.p.Balance(s.profitToken(), s.buyer.Addr)
	_, err := s.p.Chain.SendRaw(s.buyer, common.HexToAddress(got.Tx.To), common.FromHex(got.Tx.Data), "exerciseOption")
	return new(big.Int).Sub(s.p.Balance(s.profitToken(), s.buyer.Addr), before), err
}

// adverse sells `amount` of the collateral into the pool: the legs' swaps
// then get less.
func (s setup) adverse(t *testing.T, amount *big.Int) {
	t.Helper()
	tokenIn := s.p.PutAsset
	if s.isCall {
		tokenIn = s.p.CallAsset
	}
	if _, err := s.p.Swap(s.trader, tokenIn, amount, s.p.Fee); err != nil {
		t.Fatal(err)
	}
}

func mustInt(t *testing.T, s string) *big.Int {
	t.Helper()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not an integer: %q", s)
	}
	return v
}

// Issue 12's Done-when, for a call and a put, through uni-v3 and 1inch: a
// two-leg option whose legs swap through one pool. Executed at once, the
// prepared transaction pays exactly `profit` (leg 1 priced after leg 0's
// swap, as the market runs them); after an adverse move within the
// slippage it pays at least `minProfit`; beyond the slippage it reverts and
// the owner loses nothing (balances and the option's legs unchanged).
func TestTwoLegsPayWhatPrepareSays(t *testing.T) {
	for _, c := range []struct {
		name    string
		isCall  bool
		swapper string
	}{
		{"call/uni-v3", true, "uni-v3"}, {"put/uni-v3", false, "uni-v3"},
		{"call/1inch", true, "1inch"}, {"put/1inch", false, "1inch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ids := twoLegs(t, c.isCall, 2)
			p := s.p

			// At once: exactly profit, leg by leg in sequence.
			now := s.prepare(t, ids[0], c.swapper, "1")
			if len(now.LeftOut) != 0 || !now.Legs[0].Exercised || !now.Legs[1].Exercised {
				t.Fatalf("legs left out: %+v", now.Legs)
			}
			if now.SimulatedProfit != now.Profit {
				t.Fatalf("simulated %s, profit %s", now.SimulatedProfit, now.Profit)
			}
			if c.swapper == "uni-v3" {
				// The sequence, not independent quotes: leg 1's output is
				// below what QuoterV2 gives for it alone at this state.
				alone, _ := p.Quote(map[bool]common.Address{true: p.CallAsset, false: p.PutAsset}[c.isCall], mustInt(t, now.Legs[1].AmountToSwap), p.Fee)
				if mustInt(t, now.Legs[1].AmountOut).Cmp(alone) >= 0 {
					t.Fatalf("leg 1 amountOut %s not below its quote alone %s", now.Legs[1].AmountOut, alone)
				}
			}
			paid, err := s.send(t, now)
			if err != nil {
				t.Fatal(err)
			}
			if paid.String() != now.Profit {
				t.Fatalf("executed at once paid %s, profit said %s", paid, now.Profit)
			}

			// The exercise sold the legs' collateral into the pool: back into
			// the money for the second option.
			s.intoTheMoney(t)

			// Beyond the slippage: reverts, the owner loses nothing.
			slipped := s.prepare(t, ids[1], c.swapper, "0.5")
			callBefore, putBefore := p.Balance(p.CallAsset, s.buyer.Addr), p.Balance(p.PutAsset, s.buyer.Addr)
			legsBefore := p.OpTicks(ids[1])
			s.adverse(t, new(big.Int).Mul(mustInt(t, slipped.Legs[0].AmountToSwap), big.NewInt(2)))
			_, err = s.send(t, slipped)
			if c.swapper == "uni-v3" && !pt.IsRevert(err, "Too little received") || err == nil {
				t.Fatalf("an exercise past the slippage: %v", err)
			}
			if p.Balance(p.CallAsset, s.buyer.Addr).Cmp(callBefore) != 0 || p.Balance(p.PutAsset, s.buyer.Addr).Cmp(putBefore) != 0 {
				t.Fatal("the owner's balances changed on a reverted exercise")
			}
			for i, l := range p.OpTicks(ids[1]) {
				if l.Liquidity.Cmp(legsBefore[i].Liquidity) != 0 {
					t.Fatalf("leg %d liquidity changed on a reverted exercise", i)
				}
			}

			// Within the slippage: at least minProfit (and less than profit:
			// the move was adverse).
			s.intoTheMoney(t)
			again := s.prepare(t, ids[1], c.swapper, "1")
			s.adverse(t, new(big.Int).Div(mustInt(t, again.Legs[0].AmountToSwap), big.NewInt(4)))
			paid, err = s.send(t, again)
			if err != nil {
				t.Fatalf("an exercise within the slippage reverted: %v", err)
			}
			if paid.Cmp(mustInt(t, again.MinProfit)) < 0 || paid.Cmp(mustInt(t, again.Profit)) >= 0 {
				t.Fatalf("after an adverse move paid %s; minProfit %s, profit %s", paid, again.MinProfit, again.Profit)
			}
		})
	}
}

// Issue 12's Done-when: a leg whose own swap pushes the pool back into its
// range (the re-mint would need both tokens) is left out with the reason,
// the rest exercised, and the prepared transaction pays exactly profit.
func TestLegPushedIntoItsRangeIsLeftOut(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	_, tick := p.Slot0(p.Pool)
	lp, buyer, trader := p.Users[0], p.Users[1], p.Users[2]
	r0 := pt.Range{TickLower: tick + 100, TickUpper: tick + 110}
	r1 := pt.Range{Hook: p.Hook24h, TickLower: tick + 100, TickUpper: tick + 110}
	_, l0, err := p.Deposit(lp, r0, new(big.Int).Div(e18(1), big.NewInt(10)))
	if err != nil {
		t.Fatal(err)
	}
	_, l1, err := p.Deposit(lp, r1, e18(4))
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: r0.TickLower, TickUpper: r0.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r0, Liquidity: l0}, {Range: r1, Liquidity: l1}}})
	if err != nil {
		t.Fatal(err)
	}
	a0, _, _ := clamm.RangeAmounts(r0.TickLower, r0.TickUpper, l0)
	a1, _, _ := clamm.RangeAmounts(r1.TickLower, r1.TickUpper, l1)
	// As protocoltest's re-mint test: price mid-range, then buy back what
	// the legs will sell, so selling it again ends inside the range.
	if _, err := p.SwapToTick(trader, 500, tick+105); err != nil {
		t.Fatal(err)
	}
	if _, err := p.SwapExactOut(trader, p.CallAsset, new(big.Int).Add(a0, a1), 500); err != nil {
		t.Fatal(err)
	}
	s := setup{p: p, svc: newService(t, p), isCall: true, buyer: buyer}
	got := s.prepare(t, id, "uni-v3", "1")
	if !got.Legs[0].Exercised || got.Legs[1].Exercised || len(got.LeftOut) != 1 || got.LeftOut[0] != 1 || got.Legs[1].LeftOutReason == "" {
		t.Fatalf("want leg 1 left out with a reason: %+v %v", got.Legs, got.LeftOut)
	}
	t.Logf("leg 1 left out: %s", got.Legs[1].LeftOutReason)
	paid, err := s.send(t, got)
	if err != nil {
		t.Fatal(err)
	}
	if paid.String() != got.Profit {
		t.Fatalf("paid %s, profit %s", paid, got.Profit)
	}
	legs := p.OpTicks(id)
	if legs[0].Liquidity.Sign() != 0 || legs[1].Liquidity.Cmp(l1) != 0 {
		t.Fatalf("legs after: %v %v", legs[0].Liquidity, legs[1].Liquidity)
	}
}

// However small the slippage, uni-v3 minimums never refuse an exercise
// that works at the current state (they come from the legs' outputs in
// sequence); 1inch's minReturn, quoted for each leg alone, can: the second
// leg is then left out, saying so, and the first still pays exactly profit.
func TestTinySlippage(t *testing.T) {
	s, ids := twoLegs(t, true, 2)
	got := s.prepare(t, ids[0], "uni-v3", "0.000001")
	if len(got.LeftOut) != 0 {
		t.Fatalf("uni-v3 at 0.000001%%: legs left out %+v", got.Legs)
	}
	paid, err := s.send(t, got)
	if err != nil || paid.String() != got.Profit {
		t.Fatalf("paid %s (%v), profit %s", paid, err, got.Profit)
	}
	s.intoTheMoney(t)
	got = s.prepare(t, ids[1], "1inch", "0.000001")
	if !got.Legs[0].Exercised || got.Legs[1].Exercised || !strings.Contains(got.Legs[1].LeftOutReason, "1inch") {
		t.Fatalf("1inch at 0.000001%%: %+v", got.Legs)
	}
	if call, err := swap.DecodeRouterCall(common.FromHex(got.SwapData[0])); err != nil || call.MinReturn.String() != got.Legs[0].MinAmountOut || got.MinProfit != new(big.Int).Sub(call.MinReturn, mustInt(t, got.Legs[0].AmountReq)).String() {
		t.Fatalf("1inch minAmountOut %s, minProfit %s: not the calldata's minReturn (%v)", got.Legs[0].MinAmountOut, got.MinProfit, err)
	}
	paid, err = s.send(t, got)
	if err != nil || paid.String() != got.Profit {
		t.Fatalf("paid %s (%v), profit %s", paid, err, got.Profit)
	}
}
