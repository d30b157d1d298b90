package vocab

import (
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// pricedIV is the IV the pricing contract prices at, as its own
// volatility function answered; nil when it has none the gateway knows
// (OptionPricingV2 prices at ttlToVol itself, another contract may skew:
// the gateway cannot tell, so it does not present the table entry as the
// priced IV).
func PricedIV(a contracts.PricingAnswer) *string {
	if a.VolFrom == contracts.VolNone {
		return nil
	}
	return Ptr(a.Vol.String())
}

// ivSource names the volatility function that gave the IV.
func IVSource(v contracts.VolSource) string {
	switch v {
	case contracts.Vol4:
		return "getVolatility4"
	case contracts.Vol3:
		return "getVolatility3"
	case contracts.VolTable:
		return "ttlToVol"
	}
	return "none"
}

func NoPricing() error {
	return problem.New(problem.MarketV1Unsupported, "the market has no optionPricing(): a V1 market (it holds its own IVs), which the gateway does not price")
}

// pricingReadError: a PricingRead that reverts as a whole is a market that
// does not answer the getters every V2 market has.
func PricingReadError(err error) error {
	if rev, ok := err.(*chain.RevertError); ok {
		return problem.Wrap(problem.MarketUnsupported, err, "the market does not answer the pricing getters of DopexV2OptionMarketV2 (%s)", rev.Reason)
	}
	return err
}
