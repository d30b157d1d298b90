package subgraph

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// marketPool is a MarketPool as a document's marketPools selects it.
type marketPool struct {
	ID   string `json:"id"`
	Pool struct {
		ID Address `json:"id"`
	} `json:"pool"`
}

// namedPools reads a document's marketPools root field: the pools the
// subgraph last read a market as approving (MarketPool.approved), asked
// beside the document's own list (strikes, ranges) at the same block.
type namedPools struct {
	market common.Address
	pools  []common.Address
}

// marketPoolsOf sets the $market variable of a document that asks the
// market's pools (none for the zero address: the document's marketPools
// then matches nothing) and returns the reader of its answer.
func marketPoolsOf(market common.Address, vars map[string]any) *namedPools {
	vars["market"] = LowerHex(market)
	return &namedPools{market: market}
}

// read takes the pools from the first page; a document without
// marketPools names none.
func (n *namedPools) read(page map[string]json.RawMessage) error {
	raw, ok := page["marketPools"]
	if !ok || n.market == (common.Address{}) {
		return nil
	}
	var list []marketPool
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("marketPools: %w", err)
	}
	if len(list) > maxMarketPools {
		return fmt.Errorf("marketPools: %d pools, at most %d asked", len(list), maxMarketPools)
	}
	prefix := LowerHex(n.market) + "-"
	for _, p := range list {
		if p.Pool.ID == (Address{}) || p.ID != prefix+LowerHex(p.Pool.ID.Addr()) {
			return fmt.Errorf("market pool %q is not of market %s and its pool", p.ID, n.market.Hex())
		}
		n.pools = append(n.pools, p.Pool.ID.Addr())
	}
	return nil
}

// maxMarketPools is how many approved pools a document asks per market
// (the marketPools field's first).
const maxMarketPools = 32

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
// or reserved, paging by id until a short page, and the pools the
// subgraph last read market as approving (none for the zero address).
func (c *Client) StatsRanges(ctx context.Context, market common.Address, pools []common.Address) ([]StatsRange, []common.Address, Meta, error) {
	ps := make([]string, len(pools))
	for i, p := range pools {
		ps[i] = LowerHex(p)
	}
	vars := map[string]any{"pools": ps}
	named := marketPoolsOf(market, vars)
	ranges, meta, err := idPages(ctx, c, idQuery[StatsRange]{doc: queries.StatsRanges, field: "strikes", vars: vars, id: func(r StatsRange) string { return r.ID }, check: func(r StatsRange) error {
		if r.TotalLiquidity.Int == nil || r.UsedLiquidity.Int == nil || r.ReservedLiquidity.Int == nil {
			return fmt.Errorf("range %s lacks its liquidity", r.ID)
		}
		return nil
	}, firstPage: named.read})
	return ranges, named.pools, meta, err
}
