package lptest

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	_ "strings"
	"testing"
	_ "time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

const chainID = 1337

func e18(n int64) *big.Int {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
}

// marketsSubgraph lists the protocol's two markets, as the subgraph's
// option-markets query would; the other queries are not used here.
type marketsSubgraph struct {
	service.Subgraph
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
	reader := chain.NewReader(p.Chain.RPC(), chain.Options{Multicall3: p.DeployMulticall3()})
	ch := &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{
		p.Handler: {Name: "uniswap"}, p.HandlerV1: {Name: "uniswap", Deprecated: true}}}
	up := &service.Upstreams{Config: ch, Subgraph: &marketsSubgraph{p: p}, Chain: reader, Strikes: reader, Hooks: reader, Pricing: reader, LP: reader}
	return &setup{p: p, svc: service.New(map[uint64]*service.Upstreams{chainID: up}), tick: tick}
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
func (s *setup) send(t *testing.T, from *pt.Account, tx service.Tx) *types.Receipt {
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
		req     service.DepositRequest
		v1      bool
	}{
		{"V2 call side by ticks", p.Handler, p.Hook24h, service.DepositRequest{ByTicks: true, TickLower: lo, TickUpper: lo + 30, Amount: big.NewInt(1_000_000_000_000_000_007)}, false},
		{"V2 put side by ticks", p.Handler, common.Address{}, service.DepositRequest{ByTicks: true, TickLower: below, TickUpper: below + 20, Amount: big.NewInt(5_000_000_001)}, false},
		{"V1 call side by ticks", p.HandlerV1, common.Address{}, service.DepositRequest{ByTicks: true, TickLower: lo, TickUpper: lo + 20, Amount: e18(2)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := p.Users[0]
			req := c.req
			req.ChainID, req.Handler, req.Pool, req.Hook, req.User = chainID, c.handler, p.Pool, c.hook, u.Addr
			d, err := s.svc.PrepareDeposit(ctx, req)
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
	req := service.DepositRequest{ChainID: chainID, Handler: p.Handler, Pool: p.Pool, User: p.Users[1].Addr, ByTicks: true, TickLower: lo, TickUpper: lo + 40, Amount: e18(1)}
	byTicks, err := s.svc.PrepareDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	req.ByTicks = false
	req.MinStrike, _ = strconv.ParseFloat(byTicks.Ranges[0].Strike, 64)
	req.MaxStrike, _ = strconv.ParseFloat(byTicks.Ranges[len(byTicks.Ranges)-1].Strike, 64)
	byStrikes, err := s.svc.PrepareDeposit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if byStrikes.Tx != byTicks.Tx || len(byStrikes.Ranges) != 4 || byStrikes.Side != "call" {
		t.Errorf("by strikes %s..%s: %d ranges, side %s, same tx %v", byTicks.Ranges[0].Strike, byTicks.Ranges[3].Strike, len(byStrikes.Ranges), byStrikes.Side, byStrikes.Tx == byTicks.Tx)
	}
}

func checkDeposit(t *testing.T, s *setup, u *pt.Account, v1 bool, d service.PreparedDeposit, req service.DepositRequest) {
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
