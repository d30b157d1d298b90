package protocoltest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
)

// Pricing is the market's pricing stack after DeployPricing: the option
// pricing contract (IV table, skew, xSYK discount from tx.origin), the fee
// strategy, the xSYK token the discount reads, where the fee goes, and a
// weekend hook whitelisted for the market.
type Pricing struct {
	Pricing, FeeStrategy, XSyk, FeeTo, WeekendHook common.Address
}

// PricingConfig chooses the pricing stack. IVs maps ttl seconds to the IV
// in percent; FeePercentage is in 1e6 (340000: 34% of the premium, the
// Arbitrum value); MinPricePercentage in 1e10 of the price.
type PricingConfig struct {
	IVs                map[uint64]uint64
	FeePercentage      int64
	MinPricePercentage int64
}

// DeployPricing deploys the pricing stack and points the V2 market at it,
// as the real market's updateAddress does: from then on mintOption prices
// through TestOptionPricing.getOptionPrice and charges
// TestFeeStrategy.onFeeReqReceive to feeTo (a fresh address).
func (p *Protocol) DeployPricing(cfg PricingConfig) *Pricing {
	xSyk := p.Chain.Deploy(Token, "xSYK", "xSYK", uint8(18))
	p.register(xSyk, Token.ABI)
	out := p.deployPricing(cfg, OptionPricing, p.Chain.Deploy(OptionPricing, big.NewInt(cfg.MinPricePercentage), xSyk))
	out.XSyk = xSyk
	return out
}

// DeployPricingLinearV2 is DeployPricing with TestOptionPricingLinearV2
// as the market's pricing: OptionPricingLinearV2's generation, whose
// getVolatility takes three arguments (no ttl, no xSYK discount), scaled
// by offset and multiplier (1e4 precision: 10000 and 0 leave the IV as
// set). There is no xSYK token.
func (p *Protocol) DeployPricingLinearV2(cfg PricingConfig, offset, multiplier int64) *Pricing {
	pricing := p.Chain.Deploy(PricingLinearV2, big.NewInt(offset), big.NewInt(multiplier), big.NewInt(cfg.MinPricePercentage))
	return p.deployPricing(cfg, PricingLinearV2, pricing)
}

// DeployPricingV2 is DeployPricing with TestOptionPricingV2 as the
// market's pricing: OptionPricingV2's surface (volatilityCap,
// minOptionPricePercentage, ttlToVol, ivSetter), pricing at the ttl's
// table IV with no volatility function. volatilityCap is stored, never
// applied, as in the real one. There is no xSYK token.
func (p *Protocol) DeployPricingV2(cfg PricingConfig, volatilityCap int64) *Pricing {
	pricing := p.Chain.Deploy(PricingV2, big.NewInt(volatilityCap), big.NewInt(cfg.MinPricePercentage))
	return p.deployPricing(cfg, PricingV2, pricing)
}

// deployPricing deploys the fee strategy and weekend hook around a
// deployed pricing contract and points the market at them.
func (p *Protocol) deployPricing(cfg PricingConfig, a Artifact, pricing common.Address) *Pricing {
	c := p.Chain
	out := &Pricing{Pricing: pricing, FeeTo: common.HexToAddress("0x00000000000000000000000000000000000fee70")}
	out.FeeStrategy = c.Deploy(FeeStrategy)
	out.WeekendHook = c.Deploy(WeekendHook)
	for addr, a := range map[common.Address]Artifact{out.Pricing: a, out.FeeStrategy: FeeStrategy, out.WeekendHook: WeekendHook} {
		p.register(addr, a.ABI)
	}
	c.MustSend(p.Owner, out.FeeStrategy, FeeStrategy.ABI, "registerOptionMarket", p.Market, big.NewInt(cfg.FeePercentage))
	c.MustSend(p.Owner, p.Market, MarketV2.ABI, "updatePricing", out.Pricing, out.FeeStrategy)
	c.MustSend(p.Owner, p.Market, MarketV2.ABI, "updateFees", out.FeeTo, big.NewInt(0))
	c.MustSend(p.Owner, out.WeekendHook, WeekendHook.ABI, "updateWhitelistedAppsStatus", p.Market, true)
	if len(cfg.IVs) > 0 {
		p.SetIVs(out, cfg.IVs)
	}
	return out
}

// SetIVs sets ttlToVol for each ttl (seconds) to the IV in percent (either
// pricing: both have the same updateIVs).
func (p *Protocol) SetIVs(pr *Pricing, ivs map[uint64]uint64) {
	ttls, vols := make([]*big.Int, 0, len(ivs)), make([]*big.Int, 0, len(ivs))
	for ttl, iv := range ivs {
		ttls = append(ttls, new(big.Int).SetUint64(ttl))
		vols = append(vols, new(big.Int).SetUint64(iv))
	}
	p.Chain.MustSend(p.Owner, pr.Pricing, OptionPricing.ABI, "updateIVs", ttls, vols)
}

// SetSkew sets the extra IV per 1% of distance between strike and price,
// in 1e4 of the IV, for one ttl.
func (p *Protocol) SetSkew(pr *Pricing, ttl uint64, perPercent int64) {
	p.Chain.MustSend(p.Owner, pr.Pricing, OptionPricing.ABI, "updateSkew", new(big.Int).SetUint64(ttl), big.NewInt(perPercent))
}

// SetDiscounts sets the xSYK tiers: holding at least balances[i] takes
// discounts[i] (1e4 precision) off the IV.
func (p *Protocol) SetDiscounts(pr *Pricing, balances, discounts []*big.Int) {
	p.Chain.MustSend(p.Owner, pr.Pricing, OptionPricing.ABI, "setXSykBalancesAndDiscounts", balances, discounts)
}

// MintXSyk gives a xSYK.
func (p *Protocol) MintXSyk(pr *Pricing, a common.Address, amount *big.Int) {
	p.Chain.MustSend(p.Owner, pr.XSyk, Token.ABI, "mint", a, amount)
}

// DeployMulticall3 deploys TestMulticall3 (aggregate3 and
// getCurrentBlockTimestamp with Multicall3's ABI): the simulated chain has
// none at the canonical address, and the gateway's chain reader batches
// its per-request reads through one (chain.Options.Multicall3).
func (p *Protocol) DeployMulticall3() common.Address {
	return p.Chain.Deploy(Multicall3)
}
