package protocoltest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// V3Stack is the 2025 generation DeployV3 adds beside the 2024 one, as
// Stryke's current Arbitrum deployment has it: a position manager V2, a
// V3 single-tick handler whitelisted on it (with it as its app, the prime
// pool in its whitelistedPools) and an option market V2 whose position
// manager it is, paired with the handler.
type V3Stack struct {
	PositionManager common.Address // TestPositionManagerV2
	Handler         common.Address // TestSingleTickHandlerV3
	Market          common.Address // TestOptionMarketV2 on PositionManager
}

// DeployV3 deploys and wires the V3 stack (p.V3) on the same assets and
// prime pool, the market's hooks allowing it, every account's approvals
// of the new position manager and market given.
func (p *Protocol) DeployV3() { p.deployV3(PositionManagerV2) }

// DeployV3Jan2025 is DeployV3 with the position manager V2 of
// stryke-xyz/clamm 80766cc, whose withdrawReserveLiquidity calls the
// handler's reserveLiquidity (corrected in 5c270f8): which of the two a
// chain runs cannot be told from its ABI.
func (p *Protocol) DeployV3Jan2025() { p.deployV3(PositionManagerV2Jan2025) }

func (p *Protocol) deployV3(pm Artifact) {
	c := p.Chain
	v := &p.V3
	v.PositionManager = c.Deploy(pm)
	v.Handler = c.Deploy(HandlerV3, p.Factory, p.Router)
	v.Market = c.Deploy(MarketV2, v.PositionManager, p.CallAsset, p.PutAsset, p.Pool)
	p.register(v.PositionManager, PositionManagerV2.ABI)
	p.register(v.Handler, HandlerV3.ABI)
	p.register(v.Market, MarketV2.ABI)
	c.MustSend(p.Owner, v.PositionManager, PositionManagerV2.ABI, "updateWhitelistHandler", v.Handler, true)
	c.MustSend(p.Owner, v.PositionManager, PositionManagerV2.ABI, "updateWhitelistHandlerWithApp", v.Handler, v.Market, true)
	c.MustSend(p.Owner, v.Handler, HandlerV3.ABI, "updateWhitelistedApps", v.PositionManager, true)
	p.WhitelistPool(v.Handler, p.Pool, true)
	p.ApprovePool(v.Market, p.Pool, true)
	for _, h := range []common.Address{p.Hook24h, p.Hook1Week} {
		c.MustSend(p.Owner, h, TTLHook.ABI, "updateWhitelistedAppsStatus", v.Market, true)
	}
	for _, a := range c.Accounts {
		for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
			for _, spender := range []common.Address{v.PositionManager, v.Market} {
				c.MustSend(a, tok, Token.ABI, "approve", spender, maxUint)
			}
		}
	}
}

// WhitelistPool sets a V3 handler's whitelistedPools[pool]
// (updateWhitelistedPools): its mints accept only listed pools.
func (p *Protocol) WhitelistPool(handler, pool common.Address, status bool) {
	p.Chain.MustSend(p.Owner, handler, HandlerV3.ABI, "updateWhitelistedPools", pool, status)
}

// ManagerOf is the position manager a range's handler is reached through
// (the V3 handler's is the position manager V2) and its artifact.
func (p *Protocol) ManagerOf(handler common.Address) (common.Address, Artifact) {
	if handler == p.V3.Handler && handler != (common.Address{}) {
		return p.V3.PositionManager, PositionManagerV2
	}
	return p.PositionManager, PositionManager
}

// normV3 fills a range's zero handler with the V3 handler.
func (p *Protocol) normV3(r Range) Range { return p.fill(r, p.V3.Handler) }

// DepositV3 is Deposit on the V3 handler (through the position manager V2).
func (p *Protocol) DepositV3(lp *Account, r Range, liquidity *big.Int) (*big.Int, *big.Int, error) {
	return p.Deposit(lp, p.normV3(r), liquidity)
}

// BuyV3 mints an option on the V3 stack's market; legs default to the V3 handler.
func (p *Protocol) BuyV3(buyer *Account, o Option) (*big.Int, *types.Receipt, error) {
	ticks := make([]optionTicks, len(o.Legs))
	for i, l := range o.Legs {
		r := p.normV3(l.Range)
		ticks[i] = optionTicks{r.Handler, r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
	}
	return mintOption(p, buyer, p.V3.Market, MarketV2.ABI, ticks, o)
}

// ExerciseV3 exercises an option of the V3 stack's market.
func (p *Protocol) ExerciseV3(sender *Account, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	return p.Chain.Send(sender, p.V3.Market, MarketV2.ABI, "exerciseOption", ExerciseArgs(id, legs))
}
