package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// marketPool is a MarketPool as MarketPools reads it.
type marketPool struct {
	ID   string `json:"id"`
	Pool struct {
		ID Address `json:"id"`
	} `json:"pool"`
}

// MarketPools returns the pools the subgraph last read the market as
// approving (MarketPool.approved), in id order.
func (c *Client) MarketPools(ctx context.Context, market common.Address) ([]common.Address, Meta, error) {
	vars := map[string]any{"market": LowerHex(market)}
	prefix := LowerHex(market) + "-"
	list, meta, err := idPages(ctx, c, idQuery[marketPool]{doc: queries.MarketPools, field: "marketPools", vars: vars, id: func(p marketPool) string { return p.ID }, check: func(p marketPool) error {
		if p.Pool.ID == (Address{}) || p.ID != prefix+LowerHex(p.Pool.ID.Addr()) {
			return fmt.Errorf("market pool %q is not of market %s and its pool", p.ID, market.Hex())
		}
		return nil
	}})
	if err != nil {
		return nil, Meta{}, err
	}
	out := make([]common.Address, len(list))
	for i, p := range list {
		out[i] = p.Pool.ID.Addr()
	}
	return out, meta, nil
}

// OpenOption is an option that still holds collateral: some leg has
// liquidity left (Option.hasLiquidity), expired or not.
type OpenOption struct {
	ID     string    `json:"id"`
	IsCall bool      `json:"isCall"`
	Expiry BigInt    `json:"expiry"`
	Legs   []OpenLeg `json:"legs"`
}

// OpenLeg is one leg of an OpenOption with the liquidity it holds
// (opTickMap's liquidityToUse as the subgraph last read it).
type OpenLeg struct {
	Index         int     `json:"index"`
	Handler       Address `json:"handler"`
	Pool          Address `json:"pool"`
	Hook          Address `json:"hook"`
	TickLower     int     `json:"tickLower"`
	TickUpper     int     `json:"tickUpper"`
	LiquidityLeft BigInt  `json:"liquidityLeft"`
}

// maxOpenLegs is how many legs the OpenOptions document asks per option
// (chain.MaxLegs; mintOption takes at most 20).
const maxOpenLegs = 64

// OpenOptions returns the market's options that still hold collateral,
// paging by id until a short page.
func (c *Client) OpenOptions(ctx context.Context, market common.Address) ([]OpenOption, Meta, error) {
	vars := map[string]any{"market": LowerHex(market)}
	return idPages(ctx, c, idQuery[OpenOption]{doc: queries.OpenOptions, field: "options", vars: vars, id: func(o OpenOption) string { return o.ID }, check: func(o OpenOption) error {
		if o.Expiry.Int == nil || len(o.Legs) == 0 || len(o.Legs) >= maxOpenLegs {
			return fmt.Errorf("open option %s: expiry %v, %d legs", o.ID, o.Expiry.Int, len(o.Legs))
		}
		for i, l := range o.Legs {
			if l.LiquidityLeft.Int == nil || l.Index < 0 || (i > 0 && l.Index <= o.Legs[i-1].Index) || l.TickLower >= l.TickUpper {
				return fmt.Errorf("open option %s: leg %d (index %d, ticks [%d, %d]) out of order or without its liquidity", o.ID, i, l.Index, l.TickLower, l.TickUpper)
			}
		}
		return nil
	}})
}

// StatsRange is a handler range as the TVL reads it: its liquidity
// deposited (total), lent to options (used) and reserved by LPs who have
// not withdrawn it yet.
type StatsRange struct {
	ID                string  `json:"id"`
	Handler           Address `json:"handler"`
	Pool              Address `json:"pool"`
	Hook              Address `json:"hook"`
	TickLower         int     `json:"tickLower"`
	TickUpper         int     `json:"tickUpper"`
	TotalLiquidity    BigInt  `json:"totalLiquidity"`
	UsedLiquidity     BigInt  `json:"usedLiquidity"`
	ReservedLiquidity BigInt  `json:"reservedLiquidity"`
}

// StatsRanges returns every range of the pools with liquidity deposited
// or reserved, paging by id until a short page.
func (c *Client) StatsRanges(ctx context.Context, pools []common.Address) ([]StatsRange, Meta, error) {
	ps := make([]string, len(pools))
	for i, p := range pools {
		ps[i] = LowerHex(p)
	}
	return idPages(ctx, c, idQuery[StatsRange]{doc: queries.StatsRanges, field: "strikes", vars: map[string]any{"pools": ps}, id: func(r StatsRange) string { return r.ID }, check: func(r StatsRange) error {
		if r.TotalLiquidity.Int == nil || r.UsedLiquidity.Int == nil || r.ReservedLiquidity.Int == nil {
			return fmt.Errorf("range %s lacks its liquidity", r.ID)
		}
		return nil
	}})
}
