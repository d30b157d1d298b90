package behaviour_test

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping/mappingtest"
)

// The position manager's whitelist events: a handler and a market the
// manifest lists are recorded with their manifest kind and get no second
// data source; a contract that answers none of the probes (every eth_call
// reverts) is recorded as Unreadable, gets no data source either, and the
// handler does not fail.
func TestWhitelistRecordsKnownAndUnreadable(t *testing.T) {
	var probed []string
	c := mappingtest.New(t, func(to common.Address, data []byte, _ uint64) ([]byte, bool, error) {
		probed = append(probed, strings.ToLower(to.Hex()))
		return nil, true, nil // no getter answers
	})
	pm := common.HexToAddress("0xE4bA6740aF4c666325D49B3112E4758371386aDc")
	const sig = "LogUpdateWhitelistHandlerWithApp(address,address,bool)"
	c.Emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm, uniHandler, marketV2, true)
	stranger := common.HexToAddress("0x00000000000000000000000000000000000bad01")
	strangeApp := common.HexToAddress("0x00000000000000000000000000000000000bad02")
	c.Emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm, stranger, strangeApp, true)
	// a status false names nothing new
	c.Emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", pm,
		common.HexToAddress("0x00000000000000000000000000000000000bad03"), common.HexToAddress("0x00000000000000000000000000000000000bad04"), false)

	for addr, want := range map[common.Address]struct {
		kind               string
		handler, inManfest bool
	}{uniHandler: {"HandlerV2", true, true}, marketV2: {"MarketV2", false, true}, stranger: {"Unreadable", true, false}, strangeApp: {"Unreadable", false, false}} {
		d := c.Store.Get("Deployment", strings.ToLower(addr.Hex()))
		if d == nil || d["kind"].Str != want.kind || d["handler"].Bool != want.handler || d["inManifest"].Bool != want.inManfest {
			t.Errorf("deployment %s: %v, want %+v", addr.Hex(), d, want)
		}
	}
	if n := len(c.Store.All("Deployment")); n != 4 {
		t.Errorf("%d deployments, want 4", n)
	}
	if created := c.Created["PositionManager"]; len(created) != 0 {
		t.Errorf("data sources created %v", created)
	}
	for _, a := range probed {
		if a == strings.ToLower(uniHandler.Hex()) || a == strings.ToLower(marketV2.Hex()) {
			t.Errorf("a listed contract %s was probed", a)
		}
	}
	if c.Store.Get("Market", strings.ToLower(strangeApp.Hex())) != nil {
		t.Error("a Market was made of an unreadable contract")
	}
}

// answers is a contract's eth_call answers by function name, each a
// function of the ABI named abiName; a function it lacks reverts.
type answers struct {
	abi string
	out map[string][]any
}

// caller answers eth_calls from per-contract answers (raw bytes under the
// name "slot0raw" answer slot0 as is), recording every contract probed.
func caller(t *testing.T, contracts map[common.Address]answers, probed *[]common.Address) mappingtest.Call {
	return func(to common.Address, data []byte, _ uint64) ([]byte, bool, error) {
		*probed = append(*probed, to)
		a, ok := contracts[to]
		if !ok {
			return nil, true, nil
		}
		if raw, ok := a.out["slot0raw"]; ok && len(data) >= 4 && fmt.Sprintf("%x", data[:4]) == "3850c7bd" {
			return raw[0].([]byte), false, nil
		}
		parsed, err := mapping.ABI(a.abi)
		if err != nil {
			t.Fatal(err)
		}
		for name, vals := range a.out {
			m, ok := parsed.Methods[name]
			if ok && len(data) >= 4 && string(m.ID) == string(data[:4]) {
				out, err := m.Outputs.Pack(vals...)
				return out, false, err
			}
		}
		return nil, true, nil
	}
}

func deployment(c *mappingtest.Chain, a common.Address) (kind string, inManifest bool, pm common.Address) {
	d := c.Store.Get("Deployment", strings.ToLower(a.Hex()))
	if d == nil {
		return "", false, common.Address{}
	}
	return d["kind"].Str, d["inManifest"].Bool, common.BytesToAddress(d["positionManager"].Bytes)
}

// Arbitrum's 2025 position manager (a data source of its own) emits the
// whitelist events of the 2024 one: a handler and a market it whitelists
// that the manifest does not list are probed and indexed from templates
// (a V3 handler, which answers whitelistedPools, from the V2 handler's
// template, whose events it emits), recorded under that position manager;
// its 2025 market and V3 handler the manifest lists are recorded as listed
// and neither probed nor given a second data source.
func TestPositionManagerV2WhitelistsDiscover(t *testing.T) {
	pm2 := common.HexToAddress("0x5eE223AcD61E744458b4d1bB1e24F64F243Cf28E")
	h3 := common.HexToAddress("0x00000000000000000000000000000000000003a3")
	m := common.HexToAddress("0x00000000000000000000000000000000000003b3")
	pool := common.HexToAddress("0x00000000000000000000000000000000000003c3")
	weth, usdc := common.HexToAddress("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"), common.HexToAddress("0xaf88d065e77c8cC2239327C5EDb3A432268e5831")
	listedHandler, listedMarket := common.HexToAddress("0x23aD242c41b965DB6343ec4A9890fcF80da1c314"), common.HexToAddress("0xcd697b919aa000378fe429b47eb0ff0d17d3d435")
	var probed []common.Address
	call := caller(t, map[common.Address]answers{
		h3: {"UniswapV3SingleTickLiquidityHandlerV3", map[string][]any{"whitelistedPools": {true}, "reserveCooldown": {uint64(21600)}}},
		m:  {"DopexV2OptionMarketV2", map[string][]any{"positionManager": {pm2}, "primePool": {pool}, "callAsset": {weth}, "putAsset": {usdc}}},
	}, &probed)
	c := mappingtest.OnNetwork(t, "arbitrum-one", call, "PositionManagerV2_0x5ee2")
	const ds, pmABI = "PositionManagerV2_0x5ee2", "DopexV2PositionManager"
	c.Emit(ds, pmABI, "LogUpdateWhitelistHandler(address,bool)", "handleWhitelistHandler", pm2, h3, true)
	c.Emit(ds, pmABI, "LogUpdateWhitelistHandlerWithApp(address,address,bool)", "handleWhitelistHandlerWithApp", pm2, h3, m, true)
	c.Emit(ds, pmABI, "LogUpdateWhitelistHandlerWithApp(address,address,bool)", "handleWhitelistHandlerWithApp", pm2, listedHandler, listedMarket, true)

	for addr, want := range map[common.Address]struct {
		kind   string
		listed bool
	}{h3: {"HandlerV3", false}, m: {"MarketV2", false}, listedHandler: {"HandlerV3", true}, listedMarket: {"MarketV2", true}} {
		kind, listed, by := deployment(c, addr)
		if kind != want.kind || listed != want.listed || by != pm2 {
			t.Errorf("deployment %s: %s listed=%t by %s, want %+v by the 2025 position manager", addr.Hex(), kind, listed, by.Hex(), want)
		}
	}
	created := map[string]string{}
	for _, cr := range c.Created[ds] {
		created[strings.ToLower(cr.Params[0])] = cr.Template
	}
	// a pool gets no data source: its Swap events are not followed
	if len(created) != 2 || created[strings.ToLower(h3.Hex())] != "HandlerV2" || created[strings.ToLower(m.Hex())] != "MarketV2" {
		t.Errorf("data sources created %v", c.Created[ds])
	}
	mk := c.Store.Get("Market", strings.ToLower(m.Hex()))
	if mk == nil || mk["primePool"].Str != strings.ToLower(pool.Hex()) || !bytes.Equal(mk["putAsset"].Bytes, usdc.Bytes()) {
		t.Errorf("discovered market %v", mk)
	}
	for _, a := range probed {
		if a == listedHandler || a == listedMarket {
			t.Errorf("listed contract %s probed", a.Hex())
		}
	}
}

// A registry row counts only on its own network: 0x9fd06bb3 is a market of
// Base's manifest and a router on Sonic (one deployer nonce on both). On
// Base its whitelisting is recorded as listed; on Sonic it is probed, and,
// answering no market getter, recorded as Unreadable.
func TestKnownAddressesCountOnTheirOwnNetwork(t *testing.T) {
	market := common.HexToAddress("0x9fd06bb305d74c85961ce2307dab72b07d06606f")
	const sig = "LogUpdateWhitelistHandlerWithApp(address,address,bool)"
	for _, tc := range []struct {
		network        string
		pm, handler    common.Address
		kind           string
		listed, probed bool
	}{
		{"base", common.HexToAddress("0x99fF939Ef399f5569d57868d43118e6586F574d9"), common.HexToAddress("0x96024E876cA631DaF12cDFe65c04FC5c39B9E35b"), "MarketV2", true, false},
		{"sonic", common.HexToAddress("0xa8C29FD16c272092b4361804736B4f7193a61c92"), common.HexToAddress("0x247fcfB55BFC33945A37F289d5Af2a622CBE4500"), "Unreadable", false, true},
	} {
		var probed []common.Address
		c := mappingtest.OnNetwork(t, tc.network, caller(t, nil, &probed), "PositionManager")
		c.Emit("PositionManager", "DopexV2PositionManager", sig, "handleWhitelistHandlerWithApp", tc.pm, tc.handler, market, true)
		kind, listed, _ := deployment(c, market)
		if kind != tc.kind || listed != tc.listed || slices.Contains(probed, market) != tc.probed {
			t.Errorf("%s: %s listed=%t probed=%v, want %+v", tc.network, kind, listed, probed, tc)
		}
		if kind, listed, _ := deployment(c, tc.handler); !listed || kind != "HandlerV2" {
			t.Errorf("%s handler: %s listed=%t", tc.network, kind, listed)
		}
	}
}

// A pool's first price is read through the slot0 ABI of the DEX of the
// handler that names it: on Base an Aerodrome CLPool's six words through
// Aerodrome's, a Uniswap pool's seven through Uniswap's. The CLPool's
// answer read through Uniswap's ABI does not decode (Graph Node: a
// revert), which would leave its price at zero.
func TestPoolSlot0ReadThroughTheHandlersDEX(t *testing.T) {
	aero, uni := common.HexToAddress("0x96024E876cA631DaF12cDFe65c04FC5c39B9E35b"), common.HexToAddress("0xa51175f9076b2535003ac146921485083ab3a63c")
	clPool, uniPool := common.HexToAddress("0xb2cc224c1c9feE385f8ad6a55b4d94E92359DC59"), common.HexToAddress("0xc9034c3E7F58003E6ae0C8438e7c8f4598d5ACAA")
	pack := func(types string, vals ...any) []byte {
		var args abi.Arguments
		for _, typ := range strings.Split(types, ",") {
			ty, _ := abi.NewType(typ, "", nil)
			args = append(args, abi.Argument{Type: ty})
		}
		raw, err := args.Pack(vals...)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	clSqrt, uniSqrt := new(big.Int).Lsh(big.NewInt(3), 95), new(big.Int).Lsh(big.NewInt(5), 94)
	var probed []common.Address
	call := caller(t, map[common.Address]answers{
		clPool:  {"Pool", map[string][]any{"slot0raw": {pack("uint160,int24,uint16,uint16,uint16,bool", clSqrt, big.NewInt(8109), uint16(1), uint16(1), uint16(1), true)}}},
		uniPool: {"Pool", map[string][]any{"slot0raw": {pack("uint160,int24,uint16,uint16,uint16,uint8,bool", uniSqrt, big.NewInt(4463), uint16(1), uint16(1), uint16(1), uint8(0), true)}}},
	}, &probed)
	c := mappingtest.OnNetwork(t, "base", call, "HandlerV2_aerodrome", "HandlerV2_uniswap")
	const tl, tu = 8100, 8110
	for ds, h := range map[string]struct{ handler, pool common.Address }{"HandlerV2_aerodrome": {aero, clPool}, "HandlerV2_uniswap": {uni, uniPool}} {
		id := mappingtest.PositionID(t, h.handler, h.pool, common.Address{}, tl, tu)
		c.Emit(ds, hV2, mintedV2, "handleMintedPositionV2", h.handler, id, big.NewInt(1000), h.pool, common.Address{}, lp, big.NewInt(tl), big.NewInt(tu))
	}
	for pool, want := range map[common.Address]*big.Int{clPool: clSqrt, uniPool: uniSqrt} {
		c.WantBig("Pool", strings.ToLower(pool.Hex()), "sqrtPriceX96", want)
	}
	// each deposit's price is read at its block the same way
	deposits := c.Store.All("LpDeposit")
	for _, id := range deposits {
		d := c.Store.Get("LpDeposit", id)
		want := map[common.Address]*big.Int{clPool: clSqrt, uniPool: uniSqrt}[common.BytesToAddress(d["pool"].Bytes)]
		if want == nil || d["sqrtPriceX96"].Big.Cmp(want) != 0 {
			t.Errorf("deposit in pool %x at price %v", d["pool"].Bytes, d["sqrtPriceX96"].Big)
		}
	}
	if len(deposits) != 2 {
		t.Errorf("%d deposits, want 2", len(deposits))
	}
}
