package lptest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

const chainID = 1337

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// marketsSubgraph lists the protocol's two markets, as the subgraph's
// option-markets query would; the other queries are not used here.
type marketsSubgraph struct {
	vocab.Subgraph
	p *pt.Protocol
}

func (g *marketsSubgraph) OptionMarkets(context.Context) ([]subgraph.Market, subgraph.Meta, error) {
	var out []subgraph.Market
	for _, m := range []common.Address{g.p.Market, g.p.MarketV1} {
		out = append(out, subgraph.Market{ID: subgraph.Address(m)})
	}
	return out, subgraph.Meta{Block: g.p.Chain.BlockNumber(), Timestamp: int64(g.p.Chain.Now())}, nil
}

type setup struct {
	p    *pt.Protocol
	svc  *service.Service
	tick int
}

func deploy(t *testing.T) *setup {
	p := pt.Deploy(t, pt.Config{})
	p.DeployV1()
	_, tick := p.Slot0(p.Pool)
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	ch := &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{
		p.Handler: {Name: "uniswap"}, p.HandlerV1: {Name: "uniswap", Deprecated: true}}}
	up := &vocab.Upstreams{Config: ch, Subgraph: &marketsSubgraph{p: p}, Chain: reader}
	return &setup{p: p, svc: service.New(map[uint64]*vocab.Upstreams{chainID: up}), tick: tick}
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

func eq(t *testing.T, what string, got, want *big.Int) {
	t.Helper()
	if got.Cmp(want) != 0 {
		t.Errorf("%s: %s, want %s", what, got, want)
	}
}

// balances are an account's balances of the pool's two tokens.
func (s *setup) balances(a common.Address) [2]*big.Int {
	return [2]*big.Int{s.p.Balance(s.p.Token0, a), s.p.Balance(s.p.Token1, a)}
}

func (s *setup) shares(handler common.Address, user common.Address, id *big.Int) *big.Int {
	return s.p.Chain.Call(handler, pt.HandlerV2.ABI, "balanceOf", user, id)[0].(*big.Int)
}

// send sends a prepared transaction from the user as the gateway built it.
func (s *setup) send(t *testing.T, from *pt.Account, tx vocab.Tx) *types.Receipt {
	t.Helper()
	rc, err := s.p.Chain.SendRaw(from, common.HexToAddress(tx.To), hexutil.MustDecode(tx.Data), "prepared")
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// Deposits into V2 and V1 handlers, by ticks and by strikes, on the call
// and the put side: the multicall sent as prepared takes exactly the
// tokens named, mints each range the shares the simulation said and the
// liquidity the gateway computed (LogMintedPosition), and pulls at most
// the amount asked.
func TestDepositMovesWhatItSaid(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	lo := (s.tick/10)*10 + 100
	below := (s.tick/10)*10 - 200
	cases := []struct {
		name    string
		handler common.Address
		hook    common.Address
		req     liquidity.DepositRequest
		v1      bool
	}{
		{"V2 call side by ticks", p.Handler, p.Hook24h, liquidity.DepositRequest{ByTicks: true, TickLower: lo, TickUpper: lo + 30, Amount: big.NewInt(1_000_000_000_000_000_007)}, false},
		{"V2 put side by ticks", p.Handler, common.Address{}, liquidity.DepositRequest{ByTicks: true, TickLower: below, TickUpper: below + 20, Amount: big.NewInt(5_000_000_001)}, false},
		{"V1 call side by ticks", p.HandlerV1, common.Address{}, liquidity.DepositRequest{ByTicks: true, TickLower: lo, TickUpper: lo + 20, Amount: e18(2)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := p.Users[0]
			req := c.req
			req.ChainID, req.Handler, req.Pool, req.Hook, req.User = chainID, c.handler, p.Pool, c.hook, u.Addr
			d, err := s.svc.DepositPrepare(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !d.Simulated || len(d.Approvals) != 0 || len(d.Ranges) != (req.TickUpper-req.TickLower)/10 {
				t.Fatalf("simulated %v approvals %v ranges %d", d.Simulated, d.Approvals, len(d.Ranges))
			}
			checkDeposit(t, s, u, c.v1, d, req)
		})
	}
	// By strikes: the same ranges as by ticks, found from the strikes the
	// first answer showed.
	req := liquidity.DepositRequest{ChainID: chainID, Handler: p.Handler, Pool: p.Pool, User: p.Users[1].Addr, ByTicks: true, TickLower: lo, TickUpper: lo + 40, Amount: e18(1)}
	byTicks, err := s.svc.DepositPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.ByTicks = false
	req.MinStrike, _ = strconv.ParseFloat(byTicks.Ranges[0].Strike, 64)
	req.MaxStrike, _ = strconv.ParseFloat(byTicks.Ranges[len(byTicks.Ranges)-1].Strike, 64)
	byStrikes, err := s.svc.DepositPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if byStrikes.Tx != byTicks.Tx || len(byStrikes.Ranges) != 4 || byStrikes.Side != "call" {
		t.Errorf("by strikes %s..%s: %d ranges, side %s, same tx %v", byTicks.Ranges[0].Strike, byTicks.Ranges[3].Strike, len(byStrikes.Ranges), byStrikes.Side, byStrikes.Tx == byTicks.Tx)
	}
}

func checkDeposit(t *testing.T, s *setup, u *pt.Account, v1 bool, d liquidity.PreparedDeposit, req liquidity.DepositRequest) {
	t.Helper()
	p := s.p
	ids := make([]*big.Int, len(d.Ranges))
	before := make([]*big.Int, len(d.Ranges))
	for i, r := range d.Ranges {
		rg := pt.Range{Handler: req.Handler, Hook: req.Hook, TickLower: r.TickLower, TickUpper: r.TickUpper}
		if v1 {
			ids[i] = p.TokenIDV1(rg)
		} else {
			ids[i] = p.TokenID(rg)
		}
		before[i] = s.shares(req.Handler, u.Addr, ids[i])
	}
	matchesSchema(t, "PreparedDeposit", d)
	bal := s.balances(u.Addr)
	rc := s.send(t, u, d.Tx)
	after := s.balances(u.Addr)
	total := new(big.Int)
	for k := range after {
		paid := new(big.Int).Sub(bal[k], after[k])
		eq(t, "paid of "+d.Tokens[k].Token.Symbol, paid, mustInt(t, d.Tokens[k].Amount))
		total.Add(total, paid)
	}
	if total.Cmp(req.Amount) > 0 || total.Sign() == 0 {
		t.Errorf("paid %s for an amount of %s", total, req.Amount)
	}
	minted := p.FindAll(rc, "LogMintedPosition")
	if len(minted) != len(d.Ranges) {
		t.Fatalf("%d LogMintedPosition for %d ranges", len(minted), len(d.Ranges))
	}
	for i, r := range d.Ranges {
		got := new(big.Int).Sub(s.shares(req.Handler, u.Addr, ids[i]), before[i])
		eq(t, "shares of range "+r.Strike, got, mustInt(t, *r.Shares))
		eq(t, "liquidity minted in range "+r.Strike, minted[i].Args["liquidityMinted"].(*big.Int), mustInt(t, r.LiquidityMinted))
	}
}

// The refusals come from real states: a paused handler, a handler no
// market can buy from, a range holding the price, ranges on both sides;
// a short allowance gives the approval to send, simulated with the
// multicall after it (audit 5's M28); the approval and the multicall sent
// as prepared move what the simulation said.
func TestDepositRefusals(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	lo := (s.tick/10)*10 + 100
	u := p.Users[2]
	req := liquidity.DepositRequest{ChainID: chainID, Handler: p.Handler, Pool: p.Pool, User: u.Addr, ByTicks: true, TickLower: lo, TickUpper: lo + 20, Amount: e18(1)}
	want := func(what, c string, r liquidity.DepositRequest) {
		t.Helper()
		if _, err := s.svc.DepositPrepare(ctx, r); code(err) != c {
			t.Errorf("%s: %v, want %s", what, err, c)
		}
	}
	p.Pause(p.Handler, true)
	want("paused", "HANDLER_PAUSED", req)
	p.Pause(p.Handler, false)
	lonely := req
	lonely.Handler = p.DeployHandler() // whitelisted on the position manager, paired with no market
	want("no market", "HANDLER_NOT_WHITELISTED", lonely)
	both := req // the pool starts at a grid tick: a range below it, two above
	both.TickLower, both.TickUpper = (s.tick/10)*10-10, (s.tick/10)*10+20
	want("both sides", "DEPOSIT_WRONG_SIDE", both)
	tiny := req
	tiny.Amount = big.NewInt(1)
	want("one unit over two ranges", "DEPOSIT_TOO_SMALL", tiny)
	for _, below := range []int{(s.tick/10)*10 - 10, (s.tick/10)*10 - 20} {
		one := req // one unit below the price: liquidity > 0, but the amount it pulls or mints is 0
		one.TickLower, one.TickUpper, one.Amount = below-10, below, big.NewInt(1)
		want("one unit below the price", "DEPOSIT_TOO_SMALL", one)
		one.TickLower, one.TickUpper = below+10+20, below+10+30 // and above it
		want("one unit above the price", "DEPOSIT_TOO_SMALL", one)
	}

	p.Chain.MustSend(u, p.CallAsset, pt.Token.ABI, "approve", p.PositionManager, big.NewInt(5))
	d, err := s.svc.DepositPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	if p.Token1 == p.CallAsset {
		held = 1
	}
	if !d.Simulated || d.SimulatedAt == nil || len(d.Approvals) != 1 || d.Approvals[0].Token != p.CallAsset.Hex() || d.Approvals[0].Amount != d.Tokens[held].Amount ||
		d.Approvals[0].Spender != p.PositionManager.Hex() || d.Allowance != "5" || d.Ranges[0].Shares == nil {
		t.Fatalf("short allowance: simulated %v approvals %+v allowance %s", d.Simulated, d.Approvals, d.Allowance)
	}
	s.send(t, u, d.Approvals[0].Tx)
	checkDeposit(t, s, u, false, d, req)
	// The price moved inside a range: that range holds both tokens.
	if _, err := p.SwapToTick(p.Users[3], 500, lo+5); err != nil {
		t.Fatal(err)
	}
	inRange := req
	inRange.TickLower, inRange.TickUpper = lo, lo+10
	want("in range", "DEPOSIT_WRONG_SIDE", inRange)
}

// A V2 position through its whole withdrawal: options hold half of the
// range; max burns what is free, and the reservation of the rest is
// offered; asking more than is free is a 422 naming what is; after the
// burn and the reservation the reserved liquidity is refused until the
// cooldown has passed and then until the option's liquidity comes back;
// then it is withdrawn. Every prepared transaction, sent as built, moves
// exactly the tokens and shares the gateway said.
func TestWithdrawV2(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	lo := (s.tick/10)*10 + 100
	r := pt.Range{TickLower: lo, TickUpper: lo + 10}
	u, buyer := p.Users[0], p.Users[1]
	if _, _, err := p.Deposit(u, r, e18(1)); err != nil {
		t.Fatal(err)
	}
	id := p.TokenID(r)
	half := new(big.Int).Div(e18(1), big.NewInt(2))
	opt, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: half}}})
	if err != nil {
		t.Fatal(err)
	}
	req := liquidity.WithdrawRequest{ChainID: chainID, User: u.Addr, Handler: p.Handler, Pool: p.Pool, TickLower: r.TickLower, TickUpper: r.TickUpper}

	info := p.RangeInfo(r)
	free := new(big.Int).Sub(info.TotalLiquidity, info.LiquidityUsed)
	can := new(big.Int).Mul(free, info.TotalSupply)
	can.Quo(can, new(big.Int).Add(info.TotalLiquidity, big.NewInt(1)))
	tooMany := liquidity.WithdrawRequest(req)
	tooMany.Shares = new(big.Int).Add(can, big.NewInt(1))
	if _, err := s.svc.WithdrawPrepare(ctx, tooMany); code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" || !strings.Contains(err.Error(), "withdrawable now: "+can.String()+" shares") {
		t.Fatalf("more than free: %v", err)
	}
	// A plain withdrawal of a third of what is free.
	plain := req
	plain.Shares = new(big.Int).Div(can, big.NewInt(3))
	w, err := s.svc.WithdrawPrepare(ctx, plain)
	if err != nil {
		t.Fatal(err)
	}
	if w.Withdraw == nil || w.Withdraw.Shares != plain.Shares.String() || w.Reserve == nil || w.WithdrawReserved != nil {
		t.Fatalf("plain: %+v", w)
	}
	matchesSchema(t, "PreparedWithdrawal", w)
	s.checkSent(t, u, p.Handler, id, w.Withdraw)
	// The premium's donation is locked for 100 blocks, its part of a
	// share's worth released block by block: the withdrawal above was
	// exact because it was simulated as the next block. With the lock
	// passed, max takes all that is free.
	for i := 0; i < 100; i++ {
		p.Chain.Commit()
	}
	w, err = s.svc.WithdrawPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	// Both, burn first: the burn leaves one unit of the handler's pool
	// position, so that the reservation's poke of it does not revert in the
	// pool (NP, as the real handler's does on an empty position), and the
	// reservation is capped at what the range's total after the burn covers.
	held := s.shares(p.Handler, u.Addr, id)
	burnt, reserving := mustInt(t, w.Withdraw.Shares), mustInt(t, w.Reserve.Shares)
	if fmt.Sprint(w.Order) != "[withdraw reserve]" || burnt.Cmp(mustInt(t, w.Position.WithdrawableShares)) > 0 ||
		new(big.Int).Add(burnt, reserving).Cmp(held) > 0 || len(w.Refused) != 0 {
		t.Fatalf("max: %+v", w)
	}
	s.sendInOrder(t, u, p.Handler, id, w)
	reserved := p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "reservedLiquidityPerUser", id, u.Addr)[0].(*big.Int)
	eq(t, "reserved liquidity", reserved, mustInt(t, w.Reserve.Liquidity))
	// The few shares left (what the unit left in the pool and the
	// reservation's cap kept) are offered as what they now are (burnt
	// while the range has them free, else reserved too), re-asked until
	// nothing is left. The range's last holder keeps the share
	// convertToAssets' +1 rounds to (burning or reserving the whole supply
	// takes totalLiquidity + 1).
	for i := 0; ; i++ {
		if i == 3 {
			t.Fatal("still offered after three rounds")
		}
		w, err = s.svc.WithdrawPrepare(ctx, req)
		if code(err) == "WITHDRAW_EXCEEDS_WITHDRAWABLE" {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Order) == 0 {
			t.Fatalf("nothing offered and no refusal: %+v", w)
		}
		s.sendInOrder(t, u, p.Handler, id, w)
	}
	if left := s.shares(p.Handler, u.Addr, id); left.Cmp(big.NewInt(1)) > 0 {
		t.Errorf("%s shares left", left)
	}
	reserved = p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "reservedLiquidityPerUser", id, u.Addr)[0].(*big.Int)
	// Before the cooldown: nothing to withdraw, the time it ends named.
	if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" {
		t.Fatalf("in the cooldown: %v", err)
	}
	p.Chain.AdjustTime(6*time.Hour + time.Second)
	// After it: what the range has free ((total + reserved) - used), the
	// rest once the option's liquidity comes back. Here that is some but
	// not all of the reservation, always: the user, the range's only
	// provider, has burnt or reserved all but a share (total <= its
	// worth), and the option still holds half, so free < reserved; and
	// the burn left one unit of the pool position for the reservation's
	// poke (and the loop reserved what was left free after it), so the
	// reserved exceeds what the option holds and free > 0.
	info = p.RangeInfo(r)
	free = new(big.Int).Sub(new(big.Int).Add(info.TotalLiquidity, info.ReservedLiquidity), info.LiquidityUsed)
	if free.Sign() <= 0 || free.Cmp(reserved) >= 0 {
		t.Fatalf("after the cooldown the range has %s free (total %s + reserved %s - used %s), want some but not all of the user's reserved %s",
			free, info.TotalLiquidity, info.ReservedLiquidity, info.LiquidityUsed, reserved)
	}
	w, err = s.svc.WithdrawPrepare(ctx, req)
	if err != nil || w.WithdrawReserved == nil || w.WithdrawReserved.Liquidity != free.String() {
		t.Fatalf("reserved withdrawal of what is free (%s): %v %+v", free, err, w.WithdrawReserved)
	}
	s.checkSent(t, u, p.Handler, id, w.WithdrawReserved)
	reserved.Sub(reserved, free)
	if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" {
		t.Fatalf("after the cooldown, the option holding it: %v", err)
	}
	if _, err := p.Settle(p.Owner, opt, []pt.ExerciseLeg{{Swapper: p.Swapper, SwapData: pt.UniV3SwapData(500, big.NewInt(0)), Liquidity: half}}); err != nil {
		t.Fatal(err)
	}
	// The settlement re-mints the option's liquidity (a unit may go to
	// rounding): the reserved withdrawal takes what the range has free.
	info = p.RangeInfo(r)
	free = new(big.Int).Sub(new(big.Int).Add(info.TotalLiquidity, info.ReservedLiquidity), info.LiquidityUsed)
	if free.Cmp(reserved) > 0 {
		free.Set(reserved)
	}
	w, err = s.svc.WithdrawPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if w.WithdrawReserved == nil || w.WithdrawReserved.Liquidity != free.String() || w.Position.Reserved.Withdrawable != free.String() {
		t.Fatalf("reserved withdrawal: %+v, free %s of reserved %s", w.WithdrawReserved, free, reserved)
	}
	s.checkSent(t, u, p.Handler, id, w.WithdrawReserved)
	if left := p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "reservedLiquidityPerUser", id, u.Addr)[0].(*big.Int); left.Cmp(new(big.Int).Sub(reserved, free)) != 0 {
		t.Errorf("reserved left: %s, want %s", left, new(big.Int).Sub(reserved, free))
	}
	if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "POSITION_NOT_FOUND" && code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" {
		t.Errorf("all withdrawn: %v", err)
	}
}

// sendInOrder sends every transaction a prepared withdrawal offers, in
// its order, each checked to move what it said.
func (s *setup) sendInOrder(t *testing.T, u *pt.Account, handler common.Address, id *big.Int, w liquidity.PreparedWithdrawal) {
	t.Helper()
	for _, name := range w.Order {
		tx := map[string]*liquidity.WithdrawTx{"withdrawReserved": w.WithdrawReserved, "withdraw": w.Withdraw, "reserve": w.Reserve}[name]
		if tx == nil {
			t.Fatalf("%s in the order, not offered: %+v", name, w)
		}
		s.checkSent(t, u, handler, id, tx)
	}
}

// checkSent sends a prepared transaction and compares the user's token
// and share balances before and after with what the gateway said.
func (s *setup) checkSent(t *testing.T, u *pt.Account, handler common.Address, id *big.Int, w *liquidity.WithdrawTx) {
	t.Helper()
	matchesSchema(t, "TokenAmount", w.Receive[0])
	bal, shares := s.balances(u.Addr), s.shares(handler, u.Addr, id)
	s.send(t, u, w.Tx)
	after := s.balances(u.Addr)
	for k := range after {
		eq(t, "received "+w.Receive[k].Token.Symbol, new(big.Int).Sub(after[k], bal[k]), mustInt(t, w.Receive[k].Amount))
	}
	eq(t, "shares burnt", new(big.Int).Sub(shares, s.shares(handler, u.Addr, id)), mustInt(t, w.Shares))
}

// A V1 position: max burns what options leave free, no reservation is
// offered, more than free is a 422, and a paused handler, a handler the
// position manager does not take or a stranger are refused.
func TestWithdrawV1(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	lo := (s.tick/10)*10 + 100
	r := pt.Range{Handler: p.HandlerV1, TickLower: lo, TickUpper: lo + 10}
	u := p.Users[0]
	if _, _, err := p.DepositV1(u, r, e18(1)); err != nil {
		t.Fatal(err)
	}
	id := p.TokenIDV1(r)
	third := new(big.Int).Div(e18(1), big.NewInt(3))
	if _, _, err := p.BuyV1(p.Users[1], pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600, Legs: []pt.Leg{{Range: r, Liquidity: third}}}); err != nil {
		t.Fatal(err)
	}
	req := liquidity.WithdrawRequest{ChainID: chainID, User: u.Addr, Handler: p.HandlerV1, Pool: p.Pool, TickLower: r.TickLower, TickUpper: r.TickUpper}
	stranger := req
	stranger.User = p.Users[3].Addr
	if _, err := s.svc.WithdrawPrepare(ctx, stranger); code(err) != "POSITION_NOT_FOUND" {
		t.Errorf("a stranger: %v", err)
	}
	hooked := req
	hooked.Hook = p.Hook24h
	if _, err := s.svc.WithdrawPrepare(ctx, hooked); code(err) != "INVALID_PARAMETER" {
		t.Errorf("a hook on V1: %v", err)
	}
	p.Pause(p.HandlerV1, true)
	if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "HANDLER_PAUSED" {
		t.Errorf("paused: %v", err)
	}
	p.Pause(p.HandlerV1, false)
	// Off the position manager's whitelist, or the position manager off
	// the handler's apps, burnPosition would revert: the answer says why,
	// though the V1 range is read twice (V2's id, then V1's) and the
	// second read knows nothing of the position managers.
	for _, off := range []struct {
		what   string
		to     common.Address
		abi    abi.ABI
		method string
		arg    common.Address
	}{
		{"handler off the position manager", p.PositionManager, pt.PositionManager.ABI, "updateWhitelistHandler", p.HandlerV1},
		{"position manager off the handler's apps", p.HandlerV1, pt.HandlerV1.ABI, "updateWhitelistedApps", p.PositionManager},
	} {
		p.Chain.MustSend(p.Owner, off.to, off.abi, off.method, off.arg, false)
		if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "HANDLER_NOT_WHITELISTED" {
			t.Errorf("%s: %v", off.what, err)
		}
		p.Chain.MustSend(p.Owner, off.to, off.abi, off.method, off.arg, true)
	}
	w, err := s.svc.WithdrawPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if w.Withdraw == nil || w.Reserve != nil || w.WithdrawReserved != nil || w.Handler.Version != "V1" {
		t.Fatalf("V1 max: %+v", w)
	}
	tooMany := req
	tooMany.Shares = new(big.Int).Add(mustInt(t, w.Position.WithdrawableShares), big.NewInt(1))
	if _, err := s.svc.WithdrawPrepare(ctx, tooMany); code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" || !strings.Contains(err.Error(), "withdrawable now: "+w.Position.WithdrawableShares) {
		t.Errorf("V1 more than free: %v", err)
	}
	s.checkSent(t, u, p.HandlerV1, id, w.Withdraw)
	for i := 0; i < 100; i++ { // the premium's donation lock passes
		p.Chain.Commit()
	}
	if w, err = s.svc.WithdrawPrepare(ctx, req); err != nil || w.Withdraw == nil {
		t.Fatalf("V1 max after the lock: %v %+v", err, w)
	}
	s.checkSent(t, u, p.HandlerV1, id, w.Withdraw)
	// What the option holds stays: max again has nothing to burn.
	if _, err := s.svc.WithdrawPrepare(ctx, req); code(err) != "WITHDRAW_EXCEEDS_WITHDRAWABLE" {
		t.Errorf("V1 after max: %v", err)
	}
}

// On an inverted market (the call asset is token1) the call ranges lie
// below the price and hold token1, struck at their upper tick; by strikes
// the deposit finds the same ranges as by ticks, and the put side above
// the price holds token0.
func TestDepositInvertedByStrikes(t *testing.T) {
	p := pt.Deploy(t, pt.Config{Inverted: true})
	_, tick := p.Slot0(p.Pool)
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	ch := &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}}}
	g := &marketsSubgraph{p: p}
	up := &vocab.Upstreams{Config: ch, Subgraph: g, Chain: reader}
	s := &setup{p: p, svc: service.New(map[uint64]*vocab.Upstreams{chainID: up}), tick: tick}
	ctx := context.Background()
	for _, c := range []struct {
		lo   int
		side string
	}{{(tick/10)*10 - 200, "call"}, {(tick/10)*10 + 200, "put"}} {
		req := liquidity.DepositRequest{ChainID: chainID, Handler: p.Handler, Pool: p.Pool, User: p.Users[0].Addr, ByTicks: true, TickLower: c.lo, TickUpper: c.lo + 30, Amount: big.NewInt(3_000_000_000)}
		byTicks, err := s.svc.DepositPrepare(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		req.ByTicks = false
		lo, _ := strconv.ParseFloat(byTicks.Ranges[0].Strike, 64)
		hi, _ := strconv.ParseFloat(byTicks.Ranges[2].Strike, 64)
		req.MinStrike, req.MaxStrike = min(lo, hi), max(lo, hi)
		byStrikes, err := s.svc.DepositPrepare(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if byTicks.Side != c.side || byStrikes.Tx != byTicks.Tx {
			t.Errorf("%s: side %s; by strikes %v..%v the same tx: %v (%d ranges)", c.side, byTicks.Side, req.MinStrike, req.MaxStrike, byStrikes.Tx == byTicks.Tx, len(byStrikes.Ranges))
		}
		held := p.Token1
		if c.side == "put" {
			held = p.Token0
		}
		// The strike is the market's own price at the range's strike tick.
		for _, r := range byTicks.Ranges {
			tk := r.TickLower
			if c.side == "call" {
				tk = r.TickUpper
			}
			raw := p.Chain.Call(p.Market, pt.MarketV2.ABI, "getPricePerCallAssetViaTick", p.Pool, big.NewInt(int64(tk)))[0].(*big.Int)
			market, _ := new(big.Float).Quo(new(big.Float).SetInt(raw), big.NewFloat(1e6)).Float64()
			got, _ := strconv.ParseFloat(r.Strike, 64)
			if math.Abs(got-market)/market > 1e-6 {
				t.Errorf("%s range [%d, %d]: strike %s, the market prices %v", c.side, r.TickLower, r.TickUpper, r.Strike, market)
			}
		}
		if byTicks.Token.Address != held.Hex() {
			t.Errorf("%s side holds %s, want %s", c.side, byTicks.Token.Address, held.Hex())
		}
		checkDeposit(t, s, p.Users[0], false, byStrikes, req)
	}
}

// A matured reservation and shares options still hold (contract-behaviour
// M17): reserveLiquidity sets the user's one lastReserve, restarting the
// cooldown of everything already reserved, so a withdrawReserveLiquidity
// sent after it reverts (BeforeReserveCooldown) for another
// reserveCooldown. The answer orders the reserved withdrawal first, and
// every transaction it offers, sent in its order, does what it said; the
// reservation says what it restarts the cooldown of (here: nothing, the
// reserved withdrawal took the whole reservation).
func TestWithdrawMaturedReservationFirst(t *testing.T) {
	s := deploy(t)
	p := s.p
	ctx := context.Background()
	lo := (s.tick/10)*10 + 100
	r := pt.Range{TickLower: lo, TickUpper: lo + 10}
	u, lp2, buyer := p.Users[0], p.Users[3], p.Users[1]
	for _, a := range []*pt.Account{u, lp2} {
		if _, _, err := p.Deposit(a, r, e18(1)); err != nil {
			t.Fatal(err)
		}
	}
	id := p.TokenID(r)
	if _, _, err := p.Buy(buyer, pt.Option{IsCall: true, TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600,
		Legs: []pt.Leg{{Range: r, Liquidity: new(big.Int).Div(e18(12), big.NewInt(10))}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reserve(u, r, new(big.Int).Div(s.shares(p.Handler, u.Addr, id), big.NewInt(5))); err != nil {
		t.Fatal(err)
	}
	p.Chain.AdjustTime(6*time.Hour + time.Second)
	req := liquidity.WithdrawRequest{ChainID: chainID, User: u.Addr, Handler: p.Handler, Pool: p.Pool, TickLower: r.TickLower, TickUpper: r.TickUpper}
	w, err := s.svc.WithdrawPrepare(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if w.WithdrawReserved == nil || w.Reserve == nil || len(w.Order) == 0 || w.Order[0] != "withdrawReserved" {
		t.Fatalf("a matured reservation beside shares options hold: %+v", w)
	}
	if rc := w.Reserve.RestartsCooldown; rc == nil || *rc != "0" {
		t.Errorf("the reservation restarts the cooldown of %v, want 0 (all withdrawn before it)", rc)
	}
	matchesSchema(t, "PreparedWithdrawal", w)
	// Sent in its order into the next block, as simulated: each succeeds
	// and together they move exactly what they said. (A premium's
	// donation is still locked: mined in later blocks, the burn and the
	// reservation would each take a little more, never less.)
	bal, shares := s.balances(u.Addr), s.shares(p.Handler, u.Addr, id)
	want := [2]*big.Int{new(big.Int), new(big.Int)}
	burnt := new(big.Int)
	rcs := p.Chain.Block(func() {
		for _, name := range w.Order {
			tx := map[string]*liquidity.WithdrawTx{"withdrawReserved": w.WithdrawReserved, "withdraw": w.Withdraw, "reserve": w.Reserve}[name]
			for k := range want {
				want[k].Add(want[k], mustInt(t, tx.Receive[k].Amount))
			}
			burnt.Add(burnt, mustInt(t, tx.Shares))
			if _, err := p.Chain.SendRaw(u, common.HexToAddress(tx.Tx.To), hexutil.MustDecode(tx.Tx.Data), name); err != nil {
				t.Fatal(err)
			}
		}
	})
	for i, rc := range rcs {
		if rc.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("%s, sent in the answer's order, reverted", w.Order[i])
		}
	}
	after := s.balances(u.Addr)
	for k := range after {
		eq(t, "received in all", new(big.Int).Sub(after[k], bal[k]), want[k])
	}
	eq(t, "shares burnt in all", new(big.Int).Sub(shares, s.shares(p.Handler, u.Addr, id)), burnt)
	if got := p.Chain.Call(p.Handler, pt.HandlerV2.ABI, "reservedLiquidityPerUser", id, u.Addr)[0].(*big.Int); got.String() != w.Reserve.Liquidity {
		t.Errorf("reserved after: %s, the reservation said %s", got, w.Reserve.Liquidity)
	}
}

// A prepared deposit's figures are read at the answer's block and its
// multicall is simulated at the chain's head, which the answer names
// (contract-behaviour M21): a balance spent since the answer's block (a
// subgraph that lags) is a 422 naming the head, where a simulation at the
// answer's block said simulated: true; one not spent is simulated there,
// and simulatedAt is the head, past the answer's block.
func TestPreparedDepositSimulatedAtTheHead(t *testing.T) {
	s := deploy(t)
	p := s.p
	lo := (s.tick/10)*10 + 100
	spender, keeper := p.Users[2], p.Users[3]
	req := liquidity.DepositRequest{ChainID: chainID, Handler: p.Handler, Pool: p.Pool, ByTicks: true, TickLower: lo, TickUpper: lo + 20, Amount: e18(1)}
	answer := p.Chain.BlockNumber() // the answer's block: the subgraph has seen no later one
	p.Chain.MustSend(spender, p.CallAsset, pt.Token.ABI, "transfer", p.Owner.Addr, p.Balance(p.CallAsset, spender.Addr))
	p.Chain.Commit()
	head := p.Chain.BlockNumber()
	at := func() context.Context {
		ctx, pin := block.With(context.Background(), answer)
		pin.Resolve(block.Ref{Number: answer})
		return ctx
	}
	req.User = spender.Addr
	_, err := s.svc.DepositPrepare(at(), req)
	if code(err) != "DEPOSIT_WOULD_REVERT" || !strings.Contains(err.Error(), fmt.Sprintf("at block %d", head)) {
		t.Fatalf("a balance spent after the answer's block: %v, want DEPOSIT_WOULD_REVERT at block %d", err, head)
	}
	req.User = keeper.Addr
	d, err := s.svc.DepositPrepare(at(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !d.Simulated || d.SimulatedAt == nil || d.SimulatedAt.Number != head || d.SimulatedAt.Hash == "" {
		t.Fatalf("simulated %v at %+v, want the head %d", d.Simulated, d.SimulatedAt, head)
	}
	checkDeposit(t, s, keeper, false, d, req)
}
