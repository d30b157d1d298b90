package pipeline

import (
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/gateway"
	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/hostedtypes"
)

// One ticker, three markets of one chain, through the whole gateway (the
// subgraph's markets list from the compiled mappings over the simulated
// chain, the tokens' symbols from the chain): the test protocol's V2
// market, a second V2 market of the same pair on a pool of another fee
// tier and price, and a V1 market. With both V2 markets live the ticker is
// a 400 naming both (the V1 market, deprecated, is not among them). With
// the configuration saying the first was superseded by the second, the
// ticker names the second (its pool's tick and price, not the first's),
// /v1.1/clamm/option-markets marks the first deprecated without limit
// orders, and the first is still served by address. With every market of
// the ticker deprecated, the 400 names all three, the V1 market among
// them: V1 markets are in the runtime registry, read as V2 ones are.
func TestPipelineTickerOfSeveralMarkets(t *testing.T) {
	p := pt.Deploy(t, pt.Config{})
	ix := New(t, p)
	p.DeployV1()
	_, tick := p.Slot0(p.Pool)
	pool2 := p.NewPool(3000, tick+1200)
	m2 := p.Chain.Deploy(pt.MarketV2, p.PositionManager, p.CallAsset, p.PutAsset, pool2)
	p.ApprovePool(m2, pool2, true)
	p.WhitelistApp(p.Handler, m2, true) // the position manager's event makes the subgraph find it
	multicall := p.DeployMulticall3()
	ix.Sync()
	n := p.Chain.BlockNumber()
	ticker := symbolAt(t, p, p.CallAsset, n) + "/" + symbolAt(t, p, p.PutAsset, n)
	path := gateway.PathTickerMarkPrice + "?chainId=42161&ticker=" + strings.ToLower(ticker)

	live := statsGateway(t, p, ix, multicall, true)
	refusedNaming(t, live, path, []common.Address{p.Market, m2}, []common.Address{p.MarketV1})

	superseded := statsGateway(t, p, ix, multicall, true, func(ch *config.Chain) {
		ch.SupersededMarkets = map[common.Address]common.Address{p.Market: m2}
	})
	var got market.HostedMarkPrice
	get(t, superseded, path, &got)
	price := callAt(t, p, m2, pt.MarketV2.ABI, n, "getCurrentPricePerCallAsset", pool2)[0].(*big.Int)
	_, tick2 := p.Slot0(pool2)
	if string(got.MarkPrice) != clamm.FormatUnits(price, int(p.PutDecimals)) || got.Tick != tick2 || tick2 == tick {
		t.Errorf("%s with %s superseded: %+v, want %s's price %s and tick %d (the superseded market's pool is at %d)", path, p.Market.Hex(), got, m2.Hex(), price, tick2, tick)
	}
	hostedFlags(t, superseded, map[common.Address][2]bool{p.Market: {true, false}, m2: {false, true}, p.MarketV1: {true, false}})
	var byAddress market.MarkPrice
	get(t, superseded, gateway.PathMarkPrice+"?chainId=42161&optionMarket="+p.Market.Hex(), &byAddress)
	if byAddress.Tick != tick {
		t.Errorf("the superseded market by address: tick %d, want its pool's %d", byAddress.Tick, tick)
	}

	gone := p.Users[0].Addr // a successor not listed: every market of the ticker deprecated
	none := statsGateway(t, p, ix, multicall, true, func(ch *config.Chain) {
		ch.SupersededMarkets = map[common.Address]common.Address{p.Market: gone, m2: gone}
	})
	refusedNaming(t, none, path, []common.Address{p.Market, m2, p.MarketV1}, nil)
}

// refusedNaming asks path and wants a 400 on ticker, ambiguous, naming
// every market of named and none of others.
func refusedNaming(t *testing.T, a *app.App, path string, named, others []common.Address) {
	t.Helper()
	rec := httptest.NewRecorder()
	a.Server.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	var body struct {
		Error struct{ Code, Message, Param string } `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusBadRequest {
		t.Fatalf("%s: %d %s, want a 400", path, rec.Code, rec.Body)
	}
	e := body.Error
	if e.Code != "INVALID_PARAMETER" || e.Param != "ticker" || !strings.Contains(e.Message, "ambiguous") {
		t.Errorf("%s: %+v", path, e)
	}
	for _, m := range named {
		if !strings.Contains(e.Message, m.Hex()) {
			t.Errorf("%s: %q does not name %s", path, e.Message, m.Hex())
		}
	}
	for _, m := range others {
		if strings.Contains(e.Message, m.Hex()) {
			t.Errorf("%s: %q names %s", path, e.Message, m.Hex())
		}
	}
}

// hostedFlags checks each market's deprecated and isLimitOrdersEnabled in
// /v1.1/clamm/option-markets, every market of the chain listed.
func hostedFlags(t *testing.T, a *app.App, want map[common.Address][2]bool) {
	t.Helper()
	var got []market.HostedMarket
	body, _ := askHosted(t, a, gateway.PathHostedMarkets+"?chains=42161", hostedtypes.OptionMarketsV2)
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d markets listed, want %d", len(got), len(want))
	}
	for _, m := range got {
		w, ok := want[common.HexToAddress(m.Address)]
		if !ok || m.Deprecated != w[0] || m.IsLimitOrdersEnabled != w[1] {
			t.Errorf("market %s: deprecated %v, isLimitOrdersEnabled %v; want %v", m.Address, m.Deprecated, m.IsLimitOrdersEnabled, w)
		}
	}
}
