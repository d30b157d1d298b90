package protocoltest

import (
	"bytes"
	"math"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// Config chooses the deployment. The zero value is a WETH (18 decimals,
// call asset, token0) / USDC (6 decimals, put asset) market at about 3,000
// USDC per WETH, fee tier 500 (tick spacing 10), four funded users.
type Config struct {
	CallDecimals, PutDecimals uint8        // 0 means 18 and 6
	Inverted                  bool         // the call asset is token1 (the put asset token0)
	Price                     float64      // put asset per call asset at start; 0 means 3000
	Fee                       uint32       // pool fee tier; 0 means 500
	Users                     int          // funded accounts besides the deployer; 0 means 4
	Node                      []NodeOption // the chain's node options (NewChain)
}

// Protocol is a deployed test protocol. Accounts: Chain.Accounts[0] is the
// deployer and owner of every contract; Users are funded with both assets
// (a billion whole units each) and have approved the position manager, the
// market and the SwapRouter.
type Protocol struct {
	Chain *Chain
	Owner *Account
	Users []*Account

	CallAsset, PutAsset common.Address
	CallDecimals        uint8
	PutDecimals         uint8
	Token0, Token1      common.Address

	Factory, NPM, Router, Quoter common.Address
	Pool                         common.Address // the prime pool
	Fee                          uint32
	TickSpacing                  int

	PositionManager common.Address
	Handler         common.Address
	Market          common.Address
	Swapper         common.Address // SwapRouterSwapper
	OneInchSwapper  common.Address
	OneInchRouter   common.Address // FakeAggregationRouterV5
	Hook24h         common.Address // BoundedTTLHook_0Day: TTL at most 24 hours
	Hook1Week       common.Address // BoundedTTLHook_1Week: TTL at most 7 days
	AutoExercise    common.Address // AutoExerciseTimeBased; Owner gets its executor role on first use
	// OpenSettlement, after DeployOpenSettlement: a settler of the V2
	// market anyone may settle through two hours after expiry.
	OpenSettlement common.Address
	// LimitOrders, after DeployLimitOrders: stryke's signed limit orders.
	LimitOrders common.Address

	// The V1 stack, after DeployV1.
	MarketV1  common.Address
	HandlerV1 common.Address

	// The position manager V2 stack, after DeployV3.
	V3 V3Stack

	abis map[common.Address]*abi.ABI
}

var maxUint = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// Deploy deploys Uniswap V3 and the test protocol and wires them as a live
// deployment is wired: the handler whitelisted on the position manager, the
// (handler, market) pair whitelisted for use, the position manager
// whitelisted as the handler's app, the prime pool approved on the market,
// the market whitelisted on the 24h hook. Background liquidity: the owner's
// Uniswap position over ±6,000 ticks around the start price.
func Deploy(t testing.TB, cfg Config) *Protocol {
	t.Helper()
	mustUni(t, "factory") // without the npm artifacts, skip before deploying anything
	if cfg.CallDecimals == 0 && cfg.PutDecimals == 0 {
		cfg.CallDecimals, cfg.PutDecimals = 18, 6
	}
	if cfg.Price == 0 {
		cfg.Price = 3000
	}
	if cfg.Fee == 0 {
		cfg.Fee = 500
	}
	if cfg.Users == 0 {
		cfg.Users = 4
	}
	c := NewChain(t, cfg.Users+1, cfg.Node...)
	p := &Protocol{Chain: c, Owner: c.Accounts[0], Users: c.Accounts[1:], Fee: cfg.Fee,
		CallDecimals: cfg.CallDecimals, PutDecimals: cfg.PutDecimals}
	p.TickSpacing = map[uint32]int{100: 1, 500: 10, 3000: 60, 10000: 200}[cfg.Fee]

	// The token deployed first gets the owner's nonce-0 address: order the
	// deployments so the call asset lands on the side the config asks for.
	first := crypto.CreateAddress(p.Owner.Addr, 0)
	second := crypto.CreateAddress(p.Owner.Addr, 1)
	callFirst := (bytes.Compare(first[:], second[:]) < 0) != cfg.Inverted
	deployCall := func() { p.CallAsset = c.Deploy(Token, "Wrapped Ether", "WETH", cfg.CallDecimals) }
	deployPut := func() { p.PutAsset = c.Deploy(Token, "USD Coin", "USDC", cfg.PutDecimals) }
	if callFirst {
		deployCall()
		deployPut()
	} else {
		deployPut()
		deployCall()
	}
	p.Token0, p.Token1 = p.CallAsset, p.PutAsset
	if cfg.Inverted {
		p.Token0, p.Token1 = p.PutAsset, p.CallAsset
	}

	factory, npm, router, quoter := mustUni(t, "factory"), mustUni(t, "npm"), mustUni(t, "router"), mustUni(t, "quoter")
	p.Factory = c.Deploy(factory)
	p.NPM = c.Deploy(npm, p.Factory, p.CallAsset, common.Address{})
	p.Router = c.Deploy(router, p.Factory, p.CallAsset)
	p.Quoter = c.Deploy(quoter, p.Factory, p.CallAsset)

	// Start price as a tick on the spacing grid: token1 per token0 in base units.
	raw := cfg.Price * math.Pow(10, float64(cfg.PutDecimals)-float64(cfg.CallDecimals))
	if cfg.Inverted {
		raw = 1 / raw
	}
	tick := int(math.Floor(math.Log(raw)/math.Log(1.0001))) / p.TickSpacing * p.TickSpacing
	p.Pool = p.CreatePool(cfg.Fee, tick)

	p.PositionManager = c.Deploy(PositionManager)
	p.Handler = c.Deploy(HandlerV2, p.Factory, p.Router)
	p.Market = c.Deploy(MarketV2, p.PositionManager, p.CallAsset, p.PutAsset, p.Pool)
	p.Swapper = c.Deploy(SwapRouterSwap, p.Router)
	p.OneInchRouter = c.Deploy(OneInchRouter, p.Router)
	p.OneInchSwapper = c.Deploy(OneInchSwap, p.OneInchRouter)
	p.Hook24h = c.Deploy(TTLHook, big.NewInt(24*3600))
	p.Hook1Week = c.Deploy(TTLHook, big.NewInt(7*24*3600))
	p.AutoExercise = c.Deploy(AutoExercise)

	for addr, a := range map[common.Address]Artifact{p.CallAsset: Token, p.PutAsset: Token, p.PositionManager: PositionManager,
		p.Handler: HandlerV2, p.Market: MarketV2, p.Swapper: SwapRouterSwap, p.OneInchRouter: OneInchRouter,
		p.OneInchSwapper: OneInchSwap, p.Hook24h: TTLHook, p.Hook1Week: TTLHook, p.AutoExercise: AutoExercise} {
		p.register(addr, a.ABI)
	}
	c.MustSend(p.Owner, p.PositionManager, PositionManager.ABI, "updateWhitelistHandler", p.Handler, true)
	p.WhitelistApp(p.Handler, p.Market, true)
	c.MustSend(p.Owner, p.Handler, HandlerV2.ABI, "updateWhitelistedApps", p.PositionManager, true)
	p.ApprovePool(p.Market, p.Pool, true)
	for _, h := range []common.Address{p.Hook24h, p.Hook1Week} {
		c.MustSend(p.Owner, h, TTLHook.ABI, "updateWhitelistedAppsStatus", p.Market, true)
	}

	for _, a := range c.Accounts {
		p.Fund(a)
	}
	p.AddBackgroundLiquidity(p.Pool, tick-6000, tick+6000)
	return p
}

// mustUni is the Uniswap artifact by key; without the npm artifacts the
// test skips, naming them (prereq).
func mustUni(t testing.TB, key string) Artifact {
	t.Helper()
	a, err := Uniswap(key)
	prereq.Need(t, "the Uniswap V3 artifacts from npm", err)
	return a
}

// Fund mints a billion whole units of both assets to a and approves the
// position manager, the market, the SwapRouter and the NPM to spend them.
func (p *Protocol) Fund(a *Account) {
	for _, tok := range []struct {
		addr common.Address
		dec  uint8
	}{{p.CallAsset, p.CallDecimals}, {p.PutAsset, p.PutDecimals}} {
		amount := new(big.Int).Mul(big.NewInt(1e9), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(tok.dec)), nil))
		p.Chain.MustSend(a, tok.addr, Token.ABI, "mint", a.Addr, amount)
		for _, spender := range []common.Address{p.PositionManager, p.Market, p.Router, p.NPM} {
			if spender != (common.Address{}) {
				p.Chain.MustSend(a, tok.addr, Token.ABI, "approve", spender, maxUint)
			}
		}
	}
}

// CreatePool creates and initializes the (call, put) pool of a fee tier at
// exactly the sqrt price of tick, and returns its address.
func (p *Protocol) CreatePool(fee uint32, tick int) common.Address {
	sqrt, err := clamm.SqrtRatioAtTick(tick)
	if err != nil {
		p.Chain.T.Fatal(err)
	}
	npm := mustUni(p.Chain.T, "npm")
	p.Chain.MustSend(p.Owner, p.NPM, npm.ABI, "createAndInitializePoolIfNecessary", p.Token0, p.Token1, big.NewInt(int64(fee)), sqrt)
	return p.Chain.Call(p.Factory, mustUni(p.Chain.T, "factory").ABI, "getPool", p.Token0, p.Token1, big.NewInt(int64(fee)))[0].(common.Address)
}

// AddBackgroundLiquidity adds the owner's NPM position over [lower, upper]
// with up to 1,000 call-asset units and 3,000,000 put-asset units.
func (p *Protocol) AddBackgroundLiquidity(pool common.Address, lower, upper int) {
	c := p.Chain
	fee := c.Call(pool, mustUni(c.T, "pool").ABI, "fee")[0].(*big.Int)
	callAmt := new(big.Int).Mul(big.NewInt(1000), pow10(p.CallDecimals))
	putAmt := new(big.Int).Mul(big.NewInt(3_000_000), pow10(p.PutDecimals))
	a0, a1 := callAmt, putAmt
	if p.Token0 == p.PutAsset {
		a0, a1 = putAmt, callAmt
	}
	type mintParams struct {
		Token0         common.Address
		Token1         common.Address
		Fee            *big.Int
		TickLower      *big.Int
		TickUpper      *big.Int
		Amount0Desired *big.Int
		Amount1Desired *big.Int
		Amount0Min     *big.Int
		Amount1Min     *big.Int
		Recipient      common.Address
		Deadline       *big.Int
	}
	c.MustSend(p.Owner, p.NPM, mustUni(c.T, "npm").ABI, "mint", mintParams{p.Token0, p.Token1, fee,
		big.NewInt(int64(lower)), big.NewInt(int64(upper)), a0, a1, new(big.Int), new(big.Int), p.Owner.Addr, big.NewInt(1 << 40)})
}

func pow10(d uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil) }

// WhitelistApp sets whitelistedHandlersWithApp[keccak256(abi.encode(handler, app))].
func (p *Protocol) WhitelistApp(handler, app common.Address, status bool) {
	p.Chain.MustSend(p.Owner, p.PositionManager, PositionManager.ABI, "updateWhitelistHandlerWithApp", handler, app, status)
}

// AddPool is NewPool approved on the V2 market (and the V1 market when
// deployed): legs may then use ranges of it.
func (p *Protocol) AddPool(fee uint32, tick int) common.Address {
	pool := p.NewPool(fee, tick)
	p.ApprovePool(p.Market, pool, true)
	if p.MarketV1 != (common.Address{}) {
		p.ApprovePool(p.MarketV1, pool, true)
	}
	return pool
}

// NewPool creates the (call, put) pool of another fee tier starting at
// tick (on that tier's spacing) and adds the owner's background liquidity
// over ±6,000 ticks. No market approves it: handlers take deposits in it,
// a purchase of its ranges reverts PoolNotApproved until ApprovePool.
func (p *Protocol) NewPool(fee uint32, tick int) common.Address {
	spacing := map[uint32]int{100: 1, 500: 10, 3000: 60, 10000: 200}[fee]
	tick = tick / spacing * spacing
	pool := p.CreatePool(fee, tick)
	p.register(pool, mustUni(p.Chain.T, "pool").ABI)
	lower, upper := (tick-6000)/spacing*spacing, (tick+6000)/spacing*spacing
	p.AddBackgroundLiquidity(pool, lower, upper)
	return pool
}

// ApprovePool sets market's approvedPools[pool] the one way the real
// markets can: updateAddress, as an owner sends it, with the market's
// current feeTo, tokenURIFetcher, dpFee and optionPricing (read from its
// getters, so only the approval changes) and no settler change. It emits
// LogUpdateAddress, which names no pool.
func (p *Protocol) ApprovePool(market, pool common.Address, status bool) {
	c := p.Chain
	get := func(name string) common.Address { return c.Call(market, MarketV2.ABI, name)[0].(common.Address) }
	c.MustSend(p.Owner, market, MarketV2.ABI, "updateAddress", get("feeTo"), get("tokenURIFetcher"), get("dpFee"), get("optionPricing"),
		common.Address{}, false, pool, status)
}

// DeployMarket deploys another V2 market on the same position manager,
// assets and prime pool (the pool approved), paired with no handler: a
// second app for WhitelistApp, to tell a handler's pairing with one market
// from its pairing with another.
func (p *Protocol) DeployMarket() common.Address {
	m := p.Chain.Deploy(MarketV2, p.PositionManager, p.CallAsset, p.PutAsset, p.Pool)
	p.register(m, MarketV2.ABI)
	p.ApprovePool(m, p.Pool, true)
	return m
}

// ExecutorRole is AutoExerciseTimeBased's EXECUTOR_ROLE, keccak256("EXECUTOR").
var ExecutorRole = [32]byte(crypto.Keccak256([]byte("EXECUTOR")))

// DeployOpenSettlement deploys TestOpenSettlement (as stryke-xyz/clamm's
// OpenSettlement) and makes it a settler of the V2 market.
func (p *Protocol) DeployOpenSettlement() common.Address {
	p.OpenSettlement = p.Chain.Deploy(OpenSettlement)
	p.register(p.OpenSettlement, OpenSettlement.ABI)
	p.MakeSettler(p.OpenSettlement, true)
	return p.OpenSettlement
}

// MakeSettler sets settlers[settler] on the V2 market (the real market
// sets it through updateAddress).
func (p *Protocol) MakeSettler(settler common.Address, status bool) {
	p.Chain.MustSend(p.Owner, p.Market, MarketV2.ABI, "updateSettler", settler, status)
}
