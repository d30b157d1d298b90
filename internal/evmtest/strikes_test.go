package evmtest

import (
	"context"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	reader "github.com/clamm-gateway/clamm-gateway/internal/chain"
)

// The strikes chain's first read of a market on a real EVM: one ChainedRead
// whose whitelist calls target the position manager the market's
// positionManager() returned. The whitelist key the gateway computes must
// be the one Solidity's keccak256(abi.encode(handler, app)) stored, and the
// compiled tokenIds getters of the V1 and V2 TokenIdInfo layouts must tell
// the handler generations apart (internal/contracts/sol/MockStrikesState.sol).
func TestStrikesViewOnRealContracts(t *testing.T) {
	c := newChain(t)
	u := deployUniswap(t, c)
	pm, pmBound := c.deploy(loadFile(t, "../contracts/sol/MockPositionManager.json"))
	v2, _ := c.deploy(loadFile(t, "../contracts/sol/MockHandlerV2.json"))
	paused, pausedBound := c.deploy(loadFile(t, "../contracts/sol/MockHandlerV2.json"))
	v1, _ := c.deploy(loadFile(t, "../contracts/sol/MockHandlerV1.json"))
	unlisted, _ := c.deploy(loadFile(t, "../contracts/sol/MockHandlerV2.json"))
	market, _ := c.deploy(loadFile(t, "../contracts/sol/MockStrikesMarket.json"), u.tokenB, u.tokenA, u.pool, pm, "Dopex V2 Option Market V2")
	for _, h := range []common.Address{v2, paused, v1} {
		c.send(pmBound, "updateWhitelistHandlerWithApp", h, market, true)
	}
	// Whitelisted for another app only: not for this market.
	c.send(pmBound, "updateWhitelistHandlerWithApp", unlisted, u.tokenA, true)
	c.send(pausedBound, "setPaused", true)

	r := reader.NewReader(c.rpcClient(), reader.Options{})
	v, err := r.StrikesView(context.Background(), market, nil, []common.Address{v2, paused, v1, unlisted})
	if err != nil {
		t.Fatal(err)
	}
	if v.PositionManager != pm || v.Version != reader.MarketV2 || v.Info.Pool != u.pool {
		t.Fatalf("market: position manager %s version %d pool %s", v.PositionManager.Hex(), v.Version, v.Info.Pool.Hex())
	}
	want := map[common.Address]reader.HandlerView{
		v2:       {Format: reader.HandlerFormatV2, Whitelisted: true},
		paused:   {Format: reader.HandlerFormatV2, Whitelisted: true, Paused: true},
		v1:       {Format: reader.HandlerFormatV1, Whitelisted: true},
		unlisted: {Format: reader.HandlerFormatV2},
	}
	for h, w := range want {
		if got := v.Handlers[h]; got != w {
			t.Errorf("handler %s: %+v, want %+v", h.Hex(), got, w)
		}
	}
	if pv := v.Pools[u.pool]; pv.TickSpacing != 10 || pv.Tick != 0 {
		t.Errorf("prime pool view %+v", pv)
	}
	// A V1 market (ERC721 name "Dopex V2 Option Market") reads as V1.
	v1Market, _ := c.deploy(loadFile(t, "../contracts/sol/MockStrikesMarket.json"), u.tokenB, u.tokenA, u.pool, pm, "Dopex V2 Option Market")
	if v, err := r.StrikesView(context.Background(), v1Market, nil, nil); err != nil || v.Version != reader.MarketV1 {
		t.Fatalf("V1 market: %+v, %v", v, err)
	}
}
