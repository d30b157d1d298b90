package market

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// HeldOption is an option the user holds with liquidity left, as the
// portfolio's Greeks read it from the positions' record.
type HeldOption struct {
	IsCall bool
	// StrikeTick is the option's strike tick: every leg's tickUpper for a
	// call, tickLower for a put (mintOption refuses a leg whose tick is
	// not the option's).
	StrikeTick int
	// Expiry is opData's expiry (unix seconds); TTL the ttl it was bought
	// for (expiry - mint time), the ttl the pricing priced it at.
	Expiry, TTL uint64
	Legs        []HeldLeg
}

// HeldLeg is one leg's range and the liquidity it has left.
type HeldLeg struct {
	TickLower, TickUpper int
	Liquidity            *big.Int
}

// PortfolioGreeks are the Black-Scholes Greeks of the user's open options
// of one market, summed (clamm.HeldGreeks per option): delta in call
// assets (calls add, puts subtract), gamma in call assets per put-asset
// unit of price, theta in put-asset units per day, vega in put-asset units
// per IV point. Options counts the options summed: those held with
// liquidity left and not expired at the answer's block.
type PortfolioGreeks struct {
	Delta   float64 `json:"delta"`
	Gamma   float64 `json:"gamma"`
	Theta   float64 `json:"theta"`
	Vega    float64 `json:"vega"`
	Options int     `json:"options"`
}

// greekKey is what an option's IV depends on: its purchase ttl, and its
// side and strike for a pricing that skews (getVolatility).
type greekKey struct {
	ttl        uint64
	isPut      bool
	strikeTick int
}

// PortfolioGreeks sums the Greeks of held on market m at the answer's
// block, from one pricing read (contracts.PricingRead, one eth_call per
// 48 asks) asking once per distinct (ttl, side, strike tick): the mark
// price, the block's time and, per ask, the strike and the IV the pricing
// prices that ttl at, as the options chain reads it.
//
// Each option's IV is its own purchase ttl's, not one interpolated for the
// time it has left: the contract priced the option at that ttl's IV, and
// an IV for the remaining time is a figure no contract states. Its time is
// what is left (expiry - the block's timestamp), its spot the mark price.
//
// The answer is nil with the reason (unknown) when an input cannot be
// read for an option that counts: the market has no pricing, its pricing
// has no IV for the ttl (or one the gateway cannot read), no mark price.
// A sum missing an option would read as the whole. A failed read (the
// node, a timeout) is the error.
func (s *Market) PortfolioGreeks(ctx context.Context, chainID uint64, m TradedMarket, held []HeldOption) (g *PortfolioGreeks, unknown string, err error) {
	if len(held) == 0 {
		return &PortfolioGreeks{}, "", nil
	}
	up, err := s.chains.Of(chainID, false)
	if err != nil {
		return nil, "", err
	}
	keys := greekKeys(held)
	asks := make([]contracts.PricingAsk, len(keys))
	for i, k := range keys {
		asks[i] = contracts.PricingAsk{IsPut: k.isPut, StrikeTick: big.NewInt(int64(k.strikeTick)), Ttl: new(big.Int).SetUint64(k.ttl), Total: new(big.Int)}
	}
	head, answers, err := up.Chain.ReadPricing(ctx, m.Address, common.Address{}, asks)
	if err != nil {
		var rev *chain.RevertError
		if errors.As(err, &rev) {
			return nil, problem.As(vocab.PricingReadError(err)).Message, nil
		}
		return nil, "", err
	}
	switch {
	case head.Pricing == (common.Address{}):
		return nil, problem.As(vocab.NoPricing()).Message, nil
	case head.Timestamp == nil:
		return nil, "", problem.New(problem.RPCError, "the pricing read of market %s names no block time", m.Address.Hex())
	case head.LastPrice == nil || head.LastPrice.Sign() <= 0:
		return nil, "the market's mark price (getCurrentPricePerCallAsset) is 0", nil
	}
	byKey := make(map[greekKey]contracts.PricingAnswer, len(keys))
	for i, k := range keys {
		byKey[k] = answers[i]
	}
	return m.sumGreeks(held, head, byKey)
}

// greekKeys are the distinct keys of held, sorted: the asks of one read,
// in an order that does not depend on the positions' (a recorded read is
// replayed by its calldata).
func greekKeys(held []HeldOption) []greekKey {
	var keys []greekKey
	for _, h := range held {
		k := greekKey{ttl: h.TTL, isPut: !h.IsCall, strikeTick: h.StrikeTick}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b greekKey) int {
		switch {
		case a.ttl != b.ttl:
			return cmpOf(a.ttl < b.ttl)
		case a.isPut != b.isPut:
			return cmpOf(b.isPut)
		}
		return a.strikeTick - b.strikeTick
	})
	return keys
}

func cmpOf(less bool) int {
	if less {
		return -1
	}
	return 1
}

// sumGreeks sums the Greeks of the options not expired at the read's
// block; nil and why for the first whose IV or strike is not known.
func (m TradedMarket) sumGreeks(held []HeldOption, head contracts.PricingHead, byKey map[greekKey]contracts.PricingAnswer) (*PortfolioGreeks, string, error) {
	now := head.Timestamp.Uint64()
	out := &PortfolioGreeks{}
	for _, h := range held {
		if h.Expiry <= now {
			continue // expired: nothing left to be sensitive to
		}
		a := byKey[greekKey{ttl: h.TTL, isPut: !h.IsCall, strikeTick: h.StrikeTick}]
		iv := vocab.PricedIV(a)
		switch {
		case !a.VolOk || a.BaseVol == nil || a.BaseVol.Sign() == 0:
			return nil, fmt.Sprintf("the market's pricing has no IV for ttl %d (ttlToVol is 0 or does not answer), the ttl an open option was bought for", h.TTL), nil
		case iv == nil:
			return nil, fmt.Sprintf("the market's pricing prices ttl %d through a volatility function the gateway cannot read", h.TTL), nil
		case a.Strike == nil || a.Strike.Sign() <= 0:
			return nil, fmt.Sprintf("the market prices strike tick %d at 0", h.StrikeTick), nil
		}
		collateral, err := m.collateral(h)
		if err != nil {
			return nil, "", err
		}
		g := clamm.HeldGreeks(clamm.HeldOption{IsCall: h.IsCall, Spot: head.LastPrice, Strike: a.Strike, Collateral: collateral,
			Remaining: h.Expiry - now, IV: a.Vol, CallDecimals: decimalsOf(m.CallAsset), PutDecimals: decimalsOf(m.PutAsset)})
		out.Delta += g.Delta
		out.Gamma += g.Gamma
		out.Theta += g.Theta
		out.Vega += g.Vega
		out.Options++
	}
	return out, "", nil
}

// collateral is what the option's legs hold now, in the collateral's base
// units (the call asset for a call): each leg's liquidity left over its
// range, as an exercise would swap it (clamm.ExerciseLeg).
func (m TradedMarket) collateral(h HeldOption) (*big.Int, error) {
	collateralIs0 := m.callIs0 == h.IsCall
	sum := new(big.Int)
	for i, l := range h.Legs {
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.Liquidity, collateralIs0)
		if err != nil {
			return nil, problem.Wrap(problem.RPCError, err, "leg %d has invalid ticks [%d, %d]", i, l.TickLower, l.TickUpper)
		}
		sum.Add(sum, leg.AmountToSwap)
	}
	return sum, nil
}
