package evmtest

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	reader "github.com/clamm-gateway/clamm-gateway/internal/chain"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// The strikes chain's first read of a market on the test protocol (the
// stand-ins of stryke-xyz/clamm's markets, position manager and handlers):
// one ChainedRead whose whitelist calls target the position manager the
// market's positionManager() returned. The whitelist key the gateway
// computes must be the one Solidity's keccak256(abi.encode(handler, app))
// stored, the compiled tokenIds getters of the V1 and V2 handlers (12 and
// 13 TokenIdInfo words) must tell the handler generations apart, and the
// handlers' OpenZeppelin paused() must read as the pause.
func TestStrikesViewOnRealContracts(t *testing.T) {
	// The put asset is token0: the market reads inverted.
	p := pt.Deploy(t, pt.Config{Inverted: true})
	p.DeployV1()
	v2, v1 := p.Handler, p.HandlerV1
	paused := p.DeployHandler()
	p.WhitelistApp(paused, p.Market, true)
	p.Pause(paused, true)
	// Paired with another market only: not with this one, although the
	// position manager whitelists it for deposits.
	unlisted, other := p.DeployHandler(), p.DeployMarket()
	p.WhitelistApp(unlisted, other, true)

	ctx := context.Background()
	v, err := testenv.NewReader(t, p.Chain.RPC(), common.Address{}).StrikesView(ctx, p.Market, nil, []common.Address{v2, paused, v1, unlisted})
	if err != nil {
		t.Fatal(err)
	}
	if v.PositionManager != p.PositionManager || v.Version != reader.MarketV2 || v.Info.Pool != p.Pool {
		t.Fatalf("market: position manager %s version %d pool %s", v.PositionManager.Hex(), v.Version, v.Info.Pool.Hex())
	}
	want := map[common.Address]reader.HandlerView{
		v2:     {Format: reader.HandlerFormatV2, Whitelisted: true},
		paused: {Format: reader.HandlerFormatV2, Whitelisted: true, Paused: true},
		// The V1 handler is paired with the V1 market, not this one.
		v1:       {Format: reader.HandlerFormatV1},
		unlisted: {Format: reader.HandlerFormatV2},
	}
	checkHandlers(t, "V2 market", v, want)
	sqrt, tick := p.Slot0(p.Pool)
	pv := v.Pools[p.Pool]
	if pv.TickSpacing != 10 || pv.Tick != tick || pv.SqrtPriceX96.Cmp(sqrt) != 0 || pv.Token0 != p.PutAsset || pv.Token1 != p.CallAsset {
		t.Errorf("prime pool view %+v; the pool says %s at tick %d", pv, sqrt, tick)
	}

	// The V1 market (ERC721 name "Dopex V2 Option Market") reads as V1,
	// its own handler whitelisted for it and the V2 handler not.
	v, err = testenv.NewReader(t, p.Chain.RPC(), common.Address{}).StrikesView(ctx, p.MarketV1, nil, []common.Address{v1, v2})
	if err != nil || v.Version != reader.MarketV1 || v.PositionManager != p.PositionManager {
		t.Fatalf("V1 market: %+v, %v", v, err)
	}
	checkHandlers(t, "V1 market", v, map[common.Address]reader.HandlerView{
		v1: {Format: reader.HandlerFormatV1, Whitelisted: true},
		v2: {Format: reader.HandlerFormatV2},
	})

	// The other market sees the pairing this one does not, and the pause
	// lifts when the handler is unpaused: both are read from the chain,
	// not from the handler's address.
	p.Pause(paused, false)
	v, err = testenv.NewReader(t, p.Chain.RPC(), common.Address{}).StrikesView(ctx, other, nil, []common.Address{unlisted, paused})
	if err != nil {
		t.Fatal(err)
	}
	checkHandlers(t, "other market", v, map[common.Address]reader.HandlerView{
		unlisted: {Format: reader.HandlerFormatV2, Whitelisted: true},
		paused:   {Format: reader.HandlerFormatV2},
	})
}

func checkHandlers(t *testing.T, label string, v *reader.StrikesView, want map[common.Address]reader.HandlerView) {
	t.Helper()
	for h, w := range want {
		if got := v.Handlers[h]; got != w {
			t.Errorf("%s: handler %s: %+v, want %+v", label, h.Hex(), got, w)
		}
	}
}
