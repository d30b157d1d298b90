package chaintest

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// Pricing is a V2 market's optionPricing contract and fee strategy, as the
// test protocol's TestOptionPricing and TestFeeStrategy
// (internal/evmtest/protocoltest/sol/Pricing.sol) compute them, with no
// skew and no xSYK discount: the option price per call asset is the
// intrinsic value at the mark price plus 0.4 * mark * iv * sqrt(ttl / 365
// days), shrunk by mark / (mark + 4 * |strike - mark|), floored at
// MinPricePercentage (1e10 = 100%) of the mark; the fee is FeePercentage
// (1e6 = 100%) of the premium, charged only while the market's feeTo is
// set (FeeToZero: it is not). A ttl without an IV reverts. Volatility is
// the volatility function the pricing has: "" the 4-argument
// getVolatility of OptionPricingLinearV2_1, "3" the 3-argument one of
// OptionPricingLinearV2, "none" neither; with no skew each answers the
// ttl's IV.
type Pricing struct {
	Address            common.Address    `json:"address"`
	IVs                map[uint64]uint64 `json:"ivs"` // ttl seconds -> percent
	FeePercentage      uint64            `json:"feePercentage"`
	MinPricePercentage uint64            `json:"minPricePercentage"`
	FeeToZero          bool              `json:"feeToZero,omitempty"`
	Volatility         string            `json:"volatility,omitempty"`
}

// feeTo is where the fake market sends its protocol fee.
var feeTo = common.HexToAddress("0x00000000000000000000000000000000000fee70")

var (
	q192 = new(big.Int).Lsh(big.NewInt(1), 192)
	e18  = big.NewInt(1e18)
)

func pow10(d uint8) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d)), nil) }

// pricePerCallAsset is the market's _getPrice: put-asset base units per one
// call asset at sqrtPriceX96 (the fake's pools stay below 2^128).
func (n *Node) pricePerCallAsset(m *Market, p *Pool, sqrt *big.Int) *big.Int {
	one := pow10(n.Tokens[m.CallAsset].Decimals)
	sq := new(big.Int).Mul(sqrt, sqrt)
	if p.Token0 == m.CallAsset {
		return sq.Quo(sq.Mul(sq, one), q192)
	}
	return new(big.Int).Quo(new(big.Int).Mul(q192, one), sq)
}

// optionPrice is the pricing's getOptionPrice; false when the ttl has no IV.
func (pr *Pricing) optionPrice(isPut bool, ttl uint64, strike, last *big.Int) (*big.Int, bool) {
	iv := pr.IVs[ttl]
	if iv == 0 {
		return nil, false
	}
	years := new(big.Int).Quo(new(big.Int).Mul(new(big.Int).SetUint64(ttl), e18), big.NewInt(365*86400))
	atm := new(big.Int).Mul(last, new(big.Int).SetUint64(iv))
	atm.Mul(atm, years.Sqrt(years))
	atm.Mul(atm, big.NewInt(4))
	atm.Quo(atm, big.NewInt(10*100*1e9))
	dist := new(big.Int).Sub(strike, last)
	dist.Abs(dist)
	tv := new(big.Int).Mul(atm, last)
	tv.Quo(tv, new(big.Int).Add(last, new(big.Int).Mul(dist, big.NewInt(4))))
	if isPut && strike.Cmp(last) > 0 {
		tv.Add(tv, new(big.Int).Sub(strike, last))
	}
	if !isPut && last.Cmp(strike) > 0 {
		tv.Add(tv, new(big.Int).Sub(last, strike))
	}
	floor := new(big.Int).Mul(last, new(big.Int).SetUint64(pr.MinPricePercentage))
	floor.Quo(floor, big.NewInt(1e10))
	if tv.Cmp(floor) < 0 {
		return floor, true
	}
	return tv, true
}

// pricingRead answers contracts.PricingRead's creation code as the EVM
// would run it against the market at block at (the number it reports; the
// fake's state is the head's), with the user's allowances to the market and
// balances of the call then the put asset as the tokens keep them.
func (n *Node) pricingRead(marketAddr, user common.Address, asks []contracts.PricingAsk, at uint64) ([]byte, bool) {
	m, ok := n.Markets[marketAddr]
	if !ok || n.Pools[m.PrimePool] == nil || n.Tokens[m.CallAsset] == nil || n.Tokens[m.PutAsset] == nil {
		return ErrorString("PricingRead: a required read failed"), false
	}
	pool := n.Pools[m.PrimePool]
	h := contracts.PricingHead{BlockNumber: new(big.Int).SetUint64(at), Timestamp: new(big.Int).SetUint64(n.BlockTimestamp - (n.BlockNumber - at)),
		Pool: m.PrimePool, LastPrice: n.pricePerCallAsset(m, pool, pool.SqrtPriceX96), PutDecimals: big.NewInt(int64(n.Tokens[m.PutAsset].Decimals)),
		CallAsset: m.CallAsset, PutAsset: m.PutAsset, Account: [4]*big.Int{n.Tokens[m.CallAsset].allowance(user, marketAddr),
			n.Tokens[m.CallAsset].balanceOf(user), n.Tokens[m.PutAsset].allowance(user, marketAddr), n.Tokens[m.PutAsset].balanceOf(user)}}
	if m.Pricing != nil {
		h.Pricing = m.Pricing.Address
		if h.FeeToRead = true; !m.Pricing.FeeToZero {
			h.FeeTo = feeTo
		}
	}
	answers := make([]contracts.PricingAnswer, len(asks))
	for i, a := range asks {
		answers[i] = n.pricingAnswer(m, h, a)
	}
	out, err := contracts.PackPricingReadOutput(h, answers)
	if err != nil {
		panic(fmt.Sprintf("chaintest: pack PricingRead output: %v", err))
	}
	return out, true
}

func (n *Node) pricingAnswer(m *Market, h contracts.PricingHead, a contracts.PricingAsk) contracts.PricingAnswer {
	sqrt, _ := clamm.SqrtRatioAtTick(int(a.StrikeTick.Int64()))
	r := contracts.PricingAnswer{Strike: n.pricePerCallAsset(m, n.Pools[m.PrimePool], sqrt)}
	pr := m.Pricing
	if pr == nil {
		return r
	}
	ttl := a.Ttl.Uint64()
	r.VolOk, r.BaseVol, r.Vol = true, new(big.Int).SetUint64(pr.IVs[ttl]), new(big.Int)
	switch pr.Volatility {
	case "":
		r.VolFrom, r.Vol = contracts.Vol4, r.BaseVol
	case "3":
		r.VolFrom, r.Vol = contracts.Vol3, r.BaseVol
	}
	price, ok := pr.optionPrice(a.IsPut, ttl, r.Strike, h.LastPrice)
	r.PriceOk, r.OptionPrice = ok, price
	if !ok || a.Total.Sign() == 0 {
		return r
	}
	callDec, putDec := pow10(n.Tokens[m.CallAsset].Decimals), pow10(n.Tokens[m.PutAsset].Decimals)
	amount, dec := a.Total, callDec
	if a.IsPut {
		amount, dec = new(big.Int).Quo(new(big.Int).Mul(a.Total, putDec), r.Strike), putDec
	}
	premium := new(big.Int).Quo(new(big.Int).Mul(amount, price), dec)
	if !a.IsPut {
		premium.Quo(premium.Mul(premium, callDec), h.LastPrice)
	}
	fee := new(big.Int).Mul(premium, new(big.Int).SetUint64(pr.FeePercentage))
	r.PremiumOk, r.Premium, r.FeeOk, r.Fee = true, premium, true, fee.Quo(fee, big.NewInt(1e6))
	if pr.FeeToZero {
		r.NoFee, r.Fee = true, new(big.Int)
	}
	return r
}
