package lptest

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// v3Subgraph lists the V2 market and the V3 stack's market.
type v3Subgraph struct {
	vocab.Subgraph
	p *pt.Protocol
}

func (g *v3Subgraph) OptionMarkets(context.Context) ([]subgraph.Market, subgraph.Meta, error) {
	var out []subgraph.Market
	for _, m := range []common.Address{g.p.Market, g.p.V3.Market} {
		out = append(out, subgraph.Market{ID: subgraph.Address(m)})
	}
	return out, subgraph.Meta{Block: g.p.Chain.BlockNumber(), Timestamp: int64(g.p.Chain.Now())}, nil
}

// Audit 5's M28 (a), its reproduction TestAudit5V3CompoundDepositUnsimulated:
// a first-time depositor (allowance 0 to the position manager V2) into a
// V3 range the price crossed, whose fees the handler compounds on mint
// through an internal addLiquidity paid by the position manager, which
// approved only the deposit's own amount. The approvals and the multicall
// are simulated together, so the deposit is refused with the revert's
// reason before anything is signed, and no approval is handed out.
func TestV3CompoundingDepositRefusedBeforeSigning(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	p.DeployV3()
	_, tick := p.Slot0(p.Pool)
	reader := testenv.NewReader(t, p.Chain.RPC(), p.DeployMulticall3())
	ch := &config.Chain{ID: chainID, Handlers: map[common.Address]config.Handler{p.Handler: {Name: "uniswap"}, p.V3.Handler: {Name: "uniswap", Version: 3}}}
	up := &vocab.Upstreams{Config: ch, Subgraph: &v3Subgraph{p: p}, Chain: reader}
	svc := service.New(map[uint64]*vocab.Upstreams{chainID: up})
	r := pt.Range{Handler: p.V3.Handler, TickLower: tick + 100, TickUpper: tick + 110}
	if _, _, err := p.Deposit(p.Users[0], r, e18(1)); err != nil {
		t.Fatal(err)
	}
	// a fresh range beside it, the price never crossed: no fees to compound
	fresh := pt.Range{Handler: p.V3.Handler, TickLower: tick + 400, TickUpper: tick + 410}
	if _, err := p.SwapToTick(p.Users[2], 500, tick+300); err != nil { // through r: fees in one token only
		t.Fatal(err)
	}
	lp := p.Users[3]
	for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
		p.Chain.MustSend(lp, tok, pt.Token.ABI, "approve", p.V3.PositionManager, big.NewInt(0))
	}
	ctx := context.Background()
	req := liquidity.DepositRequest{ChainID: chainID, Handler: p.V3.Handler, Pool: p.Pool, User: lp.Addr, ByTicks: true,
		TickLower: r.TickLower, TickUpper: r.TickUpper, Amount: big.NewInt(1_000_000_000)}
	d, err := svc.DepositPrepare(ctx, req)
	if code(err) != "DEPOSIT_WOULD_REVERT" || !strings.Contains(err.Error(), "insufficient allowance") || !strings.Contains(err.Error(), lp.Addr.Hex()) {
		t.Fatalf("a first deposit into a compounding V3 range: %+v, %v", d, err)
	}
	// The same first-time depositor into the fresh range: approvals and
	// multicall simulated, and sent as prepared they move what it said.
	req.TickLower, req.TickUpper = fresh.TickLower, fresh.TickUpper
	s := &setup{p: p, svc: svc, tick: tick}
	if d, err = svc.DepositPrepare(ctx, req); err != nil || !d.Simulated || len(d.Approvals) != 1 {
		t.Fatalf("a first deposit into a fresh V3 range: simulated %v approvals %+v: %v", d.Simulated, d.Approvals, err)
	}
	s.send(t, lp, d.Approvals[0].Tx)
	checkDeposit(t, s, lp, false, d, req)
}
