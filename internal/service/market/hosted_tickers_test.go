package market_test

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
)

// The registry finds a market by its ticker in any case, prefers the live
// market of a pair to a deprecated one, and refuses with a 400 on ticker
// a ticker no market has (listing the chain's) or two live markets have
// (naming both). The markets are Sonic's, as the deployments registry
// states their pairs: its two wS/USDC.e markets on two pools are both
// live until the configuration says one superseded the other; then the
// ticker names the successor, and the superseded one where it is listed
// alone.
func TestTickerRegistry(t *testing.T) {
	weth := common.HexToAddress("0x9d3828e89Fadc4DEc77758988b388435Fe0f8DCa")
	wsSushi := common.HexToAddress("0xaFd9352aF9A75E52Ba2889ba9Fa3b2a960ABef61")
	wsEqualizer := common.HexToAddress("0x342e4068bA07bbCcBDDE503b2451FAa3D3C0278B")
	old := common.HexToAddress("0x1E3b3A28614CbAb66C72B8A2f17c0Bde9b3107a7")
	reg := market.NewTickerRegistry(146, []market.TickerMarket{
		{Market: weth, Ticker: market.TickerOf("WETH", "USDC.e")},
		{Market: wsSushi, Ticker: market.TickerOf("wS", "USDC.e")},
		{Market: wsEqualizer, Ticker: market.TickerOf("wS", "USDC.e")},
		{Market: old, Ticker: market.TickerOf("WETH", "USDC.e"), Deprecated: true},
	})
	for _, ticker := range []string{"WETH/USDC.e", "WETH/USDC.E", "weth/usdc.e"} {
		m, err := reg.Resolve(ticker)
		if err != nil || m.Market != weth {
			t.Errorf("%s: %v %v, want the live market %s", ticker, m.Market, err, weth)
		}
	}
	_, err := reg.Resolve("WS/USDC.E")
	p := problem.As(err)
	if err == nil || p.Code != problem.InvalidParameter || p.Param != "ticker" ||
		!strings.Contains(p.Message, wsSushi.Hex()) || !strings.Contains(p.Message, wsEqualizer.Hex()) {
		t.Errorf("two live markets of one ticker: %v", err)
	}
	superseded := market.TickerMarket{Market: wsSushi, Ticker: market.TickerOf("wS", "USDC.e"), Deprecated: true, SupersededBy: wsEqualizer}
	live := market.TickerMarket{Market: wsEqualizer, Ticker: market.TickerOf("wS", "USDC.e")}
	for _, ms := range [][]market.TickerMarket{{superseded, live}, {live, superseded}} {
		if m, err := market.NewTickerRegistry(146, ms).Resolve("ws/usdc.e"); err != nil || m.Market != wsEqualizer {
			t.Errorf("a superseded and a live market of one ticker: %v %v, want the live %s", m.Market, err, wsEqualizer)
		}
	}
	if m, err := market.NewTickerRegistry(146, []market.TickerMarket{superseded}).Resolve("WS/USDC.E"); err != nil || m.Market != wsSushi || m.SupersededBy != wsEqualizer {
		t.Errorf("a superseded market listed alone: %v %v", m, err)
	}
	_, err = reg.Resolve("WSYK/USDC")
	if p := problem.As(err); err == nil || p.Param != "ticker" || !strings.Contains(p.Message, "WETH/USDC.e, wS/USDC.e") {
		t.Errorf("a ticker no market has: %v", err)
	}
	deprecatedOnly := market.NewTickerRegistry(42161, []market.TickerMarket{
		{Market: old, Ticker: "WETH/USDC.e", Deprecated: true}, {Market: weth, Ticker: "WETH/USDC.e", Deprecated: true},
	})
	if _, err := deprecatedOnly.Resolve("WETH/USDC.e"); err == nil || problem.As(err).Param != "ticker" {
		t.Error("two deprecated markets and no live one: resolved")
	}
	if m, err := market.NewTickerRegistry(42161, []market.TickerMarket{{Market: old, Ticker: "WETH/USDC.e", Deprecated: true}}).Resolve("weth/usdc.e"); err != nil || m.Market != old {
		t.Errorf("a deprecated market alone: %v %v", m.Market, err)
	}
	if market.PairNameOf("WETH", "USDC.e") != "WETH-USDC.e" {
		t.Error(market.PairNameOf("WETH", "USDC.e"))
	}
}
