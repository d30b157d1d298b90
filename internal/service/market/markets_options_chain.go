package market

import (
	"context"
	"math"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// OptionsChainRequest is a validated options-chain request: the strikes
// chain's request and the ttls (seconds) to price each strike for.
type OptionsChainRequest struct {
	StrikesRequest
	TTLs []uint64
}

// OptionsChain is every strike of the strikes chain priced for each ttl.
type OptionsChain struct {
	// MarkPrice is the market's getCurrentPricePerCallAsset: put-asset
	// units per one call asset, exact decimal; MarkPriceRaw in base units.
	MarkPrice    string      `json:"markPrice"`
	MarkPriceRaw string      `json:"markPriceRaw"`
	CallAsset    vocab.Token `json:"callAsset"`
	PutAsset     vocab.Token `json:"putAsset"`
	Pricing      string      `json:"pricing"`
	Block        uint64      `json:"block"`
	Timestamp    uint64      `json:"timestamp"`
	Expiries     []Expiry    `json:"expiries"`
	subgraph     uint64      // the strikes chain's subgraph block
}

// Expiry is one ttl's column of the chain.
type Expiry struct {
	TTL uint64 `json:"ttl"`
	// YearsToExpiry is the T the pricing contracts use: floor(ttl / 864) / 36500.
	YearsToExpiry float64       `json:"yearsToExpiry"`
	Options       []ChainOption `json:"options"`
}

// ChainOption is one strike and side at one ttl. Premium, IV and the
// Greeks are null when the market's pricing has no IV for the ttl, its
// getOptionPrice reverts, or its price is past what a purchase can pay
// (payable).
type ChainOption struct {
	Strike     string `json:"strike"`
	Type       string `json:"type"`
	StrikeTick int    `json:"strikeTick"`
	// Premium is getOptionPrice(isPut, now + ttl, strike, markPrice): the
	// option's price per one call asset in put-asset units (exact
	// decimal); PremiumRaw in put-asset base units.
	Premium    *string `json:"premium"`
	PremiumRaw *string `json:"premiumRaw"`
	// IV is the volatility the strike is priced at (percent), from the
	// pricing's own volatility function, or the ttl's table IV on
	// OptionPricingV2, which prices at it (IVSource: which; "none": the
	// gateway cannot read it, and IV and the Greeks are null); BaseIV the
	// ttl's table entry. All three are null when the option is not priced.
	IV       *string `json:"iv"`
	BaseIV   *string `json:"baseIv"`
	IVSource *string `json:"ivSource"`
	// AvailableLiquidity sums the strike's buyable ranges' free liquidity
	// in the token they hold (whole tokens; raw in AvailableTokenLiquidity).
	AvailableLiquidity      string      `json:"availableLiquidity"`
	AvailableTokenLiquidity string      `json:"availableTokenLiquidity"`
	Token                   vocab.Token `json:"token"`
	Greeks                  *Greeks     `json:"greeks"`
}

// Greeks are Black-Scholes sensitivities from the contract's priced IV and mark
// price (r = 0, T as the contracts compute it): delta per call asset,
// gamma per put-asset unit of price, theta in put-asset units per day
// (365-day year), vega in put-asset units per IV point, all per one call
// asset of the option.
type Greeks struct {
	Delta float64 `json:"delta"`
	Gamma float64 `json:"gamma"`
	Theta float64 `json:"theta"`
	Vega  float64 `json:"vega"`
}

// chainRow is one strike and side of the strikes chain, ranges summed.
type chainRow struct {
	isPut bool
	tick  int
	price float64
	avail *big.Int // free, in token
	token chain.Token
}

// OptionsChain prices the strikes chain: after the strikes chain's own
// reads (the typed strikes, StrikesOf), one eth_call
// (contracts.PricingRead) asks the market's pricing contract for every
// strike and ttl at one block; the Greeks are computed from its IV and
// price. No premium is computed here.
func (s *Market) OptionsChain(ctx context.Context, req OptionsChainRequest) (OptionsChain, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return OptionsChain{}, err
	}
	set, err := s.StrikesOf(ctx, up, vocab.StrikesAsk{Market: req.Market, CallsReach: req.CallsReach, PutsReach: req.PutsReach})
	if err != nil {
		return OptionsChain{}, err
	}
	info := set.View.Info
	rows := chainRows(set.Strikes)
	asks := make([]contracts.PricingAsk, 0, len(rows)*len(req.TTLs))
	for _, ttl := range req.TTLs {
		for _, r := range rows {
			asks = append(asks, contracts.PricingAsk{IsPut: r.isPut, StrikeTick: big.NewInt(int64(r.tick)), Ttl: new(big.Int).SetUint64(ttl), Total: new(big.Int)})
		}
	}
	head, answers, err := up.Chain.ReadPricing(ctx, req.Market, common.Address{}, asks)
	if err != nil {
		return OptionsChain{}, vocab.PricingReadError(err)
	}
	if head.Pricing == (common.Address{}) {
		return OptionsChain{}, vocab.NoPricing()
	}
	putDec := int(info.PutAsset.Decimals)
	out := OptionsChain{
		MarkPrice: clamm.FormatUnits(head.LastPrice, putDec), MarkPriceRaw: head.LastPrice.String(),
		CallAsset: vocab.TokenOf(info.CallAsset), PutAsset: vocab.TokenOf(info.PutAsset), Pricing: head.Pricing.Hex(),
		Block: head.BlockNumber.Uint64(), Timestamp: head.Timestamp.Uint64(), subgraph: set.Meta.Block,
	}
	for i, ttl := range req.TTLs {
		out.Expiries = append(out.Expiries, expiry(ttl, rows, answers[i*len(rows):(i+1)*len(rows)], head.LastPrice, units{call: int(info.CallAsset.Decimals), put: putDec}))
	}
	return out, nil
}

// SubgraphBlock is the block the strikes chain's subgraph data reflects.
func (c OptionsChain) SubgraphBlock() uint64 { return c.subgraph }

// chainRows groups the strikes by strike tick and side, in the chain's
// order (ascending strike).
func chainRows(strikes []vocab.StrikeRange) []chainRow {
	var rows []chainRow
	type id struct {
		isCall bool
		tick   int
	}
	at := map[id]int{}
	for _, st := range strikes {
		k := id{st.IsCall, st.Tick}
		if i, ok := at[k]; ok {
			rows[i].avail.Add(rows[i].avail, st.FreeAmount)
			continue
		}
		at[k] = len(rows)
		rows = append(rows, chainRow{isPut: !st.IsCall, tick: st.Tick, price: st.Price, avail: new(big.Int).Set(st.FreeAmount), token: st.Token})
	}
	return rows
}

// yearsToExpiry is the T of clamm's BlackScholes.calculate:
// floor(ttl / 864) / 36500 (days * 100 over 365 * 100).
func yearsToExpiry(ttl uint64) float64 { return float64(ttl/864) / 36500 }

// units are the market's two assets' decimals.
type units struct{ call, put int }

// payable reports whether one call asset of the option can be bought at
// price (put-asset base units per call asset). The market's premium
// arithmetic multiplies the amount by the price in checked uint256: for a
// call the amount is in call-asset base units, for a put it is the size
// in call assets scaled by the put asset's decimals, so one call asset is
// 10^decimals of one or the other. Past 2^256-1 mintOption reverts
// whatever the buyer pays; such a price is shown as no price, as the
// quote and prepare refuse it (attack 5, S12).
func payable(isPut bool, price *big.Int, u units) bool {
	dec := u.call
	if isPut {
		dec = u.put
	}
	one := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dec)), nil)
	return one.Mul(one, price).BitLen() <= 256
}

func expiry(ttl uint64, rows []chainRow, answers []contracts.PricingAnswer, last *big.Int, u units) Expiry {
	e := Expiry{TTL: ttl, YearsToExpiry: yearsToExpiry(ttl), Options: make([]ChainOption, len(rows))}
	putDec := u.put
	scale := math.Pow(10, float64(putDec))
	spot, _ := new(big.Float).SetInt(last).Float64()
	for i, r := range rows {
		a := answers[i]
		o := ChainOption{Strike: clamm.FormatPrice(r.price), StrikeTick: r.tick, Type: "call", Token: vocab.TokenOf(r.token),
			AvailableTokenLiquidity: r.avail.String(), AvailableLiquidity: clamm.FormatUnits(r.avail, int(r.token.Decimals))}
		if r.isPut {
			o.Type = "put"
		}
		if a.VolOk && a.BaseVol.Sign() > 0 && a.PriceOk && payable(r.isPut, a.OptionPrice, u) {
			o.Premium, o.PremiumRaw = vocab.Ptr(clamm.FormatUnits(a.OptionPrice, putDec)), vocab.Ptr(a.OptionPrice.String())
			o.IV, o.BaseIV, o.IVSource = vocab.PricedIV(a), vocab.Ptr(a.BaseVol.String()), vocab.Ptr(vocab.IVSource(a.VolFrom))
			if o.IV != nil {
				k, _ := new(big.Float).SetInt(a.Strike).Float64()
				v, _ := new(big.Float).SetInt(a.Vol).Float64()
				g := clamm.BlackScholes(clamm.BSInput{IsCall: !r.isPut, S: spot / scale, K: k / scale, T: e.YearsToExpiry, V: v / 100})
				o.Greeks = &Greeks{Delta: g.Delta, Gamma: g.Gamma, Theta: g.Theta, Vega: g.Vega}
			}
		}
		e.Options[i] = o
	}
	return e
}
