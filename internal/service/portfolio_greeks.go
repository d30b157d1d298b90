package service

import (
	"context"
	"math/big"
	"strconv"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
)

// greeks sets the market's Greeks from the user's positions on it (the
// market side's PortfolioGreeks: one pricing read for the market).
func (s *Service) greeks(ctx context.Context, req PortfolioRequest, m market.TradedMarket, r *marketReads) error {
	held, err := heldOptions(r.positions)
	if err != nil {
		return err
	}
	r.greeks, r.greeksUnknown, err = s.PortfolioGreeks(ctx, req.ChainID, m, held)
	return err
}

// heldOptions are the positions' records as the Greeks read them: the
// strike tick is the legs' (mintOption holds every leg to the option's).
func heldOptions(ps []trade.PositionRecord) ([]market.HeldOption, error) {
	out := make([]market.HeldOption, 0, len(ps))
	for _, p := range ps {
		expiry, err := strconv.ParseUint(p.Expiry, 10, 64)
		if err != nil || p.TTL < 0 || len(p.Legs) == 0 {
			return nil, problem.New(problem.RPCError, "option %s: expiry %q, ttl %d, %d legs", p.OptionID, p.Expiry, p.TTL, len(p.Legs))
		}
		h := market.HeldOption{IsCall: p.Type == "call", StrikeTick: p.Legs[0].TickLower, Expiry: expiry, TTL: uint64(p.TTL)}
		if h.IsCall {
			h.StrikeTick = p.Legs[0].TickUpper
		}
		for _, l := range p.Legs {
			liq, ok := new(big.Int).SetString(l.Liquidity, 10)
			if !ok {
				return nil, problem.New(problem.RPCError, "option %s: leg liquidity %q", p.OptionID, l.Liquidity)
			}
			h.Legs = append(h.Legs, market.HeldLeg{TickLower: l.TickLower, TickUpper: l.TickUpper, Liquidity: liq})
		}
		out = append(out, h)
	}
	return out, nil
}
