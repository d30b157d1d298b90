package subgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Strike is one handler range from the subgraph.
type Strike struct {
	ID                string          `json:"id"`
	Handler           Address         `json:"handler"`
	Pool              Address         `json:"pool"`
	Hook              Address         `json:"hook"`
	TickLower         int             `json:"tickLower"`
	TickUpper         int             `json:"tickUpper"`
	TotalLiquidity    BigInt          `json:"totalLiquidity"`
	UsedLiquidity     BigInt          `json:"usedLiquidity"`
	DailyDonations    []DailyRecord   `json:"dailyDonations"`
	DailyFeeCompounds []DailyCompound `json:"dailyFeeCompounds"`
}

// DailyRecord is a day's donated liquidity (premiums) to a range.
type DailyRecord struct {
	Donation     BigInt `json:"donation"`
	SqrtPriceX96 BigInt `json:"sqrtPriceX96"`
	Start        int64  `json:"start"`
}

// DailyCompound is a day's compounded fee liquidity of a range.
type DailyCompound struct {
	Compound     BigInt `json:"compound"`
	SqrtPriceX96 BigInt `json:"sqrtPriceX96"`
	Start        int64  `json:"start"`
}

// StrikesQuery selects the ranges of some pools whose tickLower is inside
// [TickLowerMin, TickLowerMax] and, when TickUpper is set, whose tickUpper
// is inside [TickUpper[0], TickUpper[1]] (nil: any): a purchase quote asks
// for the ranges of one strike only.
type StrikesQuery struct {
	Pools        []common.Address
	TickLowerMin int
	TickLowerMax int
	TickUpper    *[2]int
	// Market, when set, also asks which pools the subgraph last read the
	// market as approving (MarketPool), in the same document and at the
	// same block: the candidates the gateway confirms on chain.
	Market common.Address
}

// Uniswap's tick bounds: tickUpper unbounded is tickUpper in [minTick, maxTick].
const minTick, maxTick = -887272, 887272

// Strikes returns every strike matching q, paging by id until a short page,
// and the pools the subgraph last read q.Market as approving (none without
// q.Market, or from a document that does not select marketPools). Meta is
// that of the first page: the block the answer reflects.
func (c *Client) Strikes(ctx context.Context, q StrikesQuery) ([]Strike, []common.Address, Meta, error) {
	pools := make([]string, len(q.Pools))
	for i, p := range q.Pools {
		pools[i] = LowerHex(p)
	}
	upper := [2]int{minTick, maxTick}
	if q.TickUpper != nil {
		upper = *q.TickUpper
	}
	vars := map[string]any{"pools": pools, "tickLowerMin": q.TickLowerMin, "tickLowerMax": q.TickLowerMax, "tickUpperMin": upper[0], "tickUpperMax": upper[1]}
	named := marketPoolsOf(q.Market, vars)
	strikes, meta, err := idPages(ctx, c, idQuery[Strike]{doc: queries.Strikes, field: "strikes", vars: vars, id: func(s Strike) string { return s.ID }, check: func(s Strike) error {
		if s.TotalLiquidity.Int == nil || s.UsedLiquidity.Int == nil {
			return garbage(fmt.Errorf("strike %s lacks liquidity fields", s.ID))
		}
		return s.check()
	}, firstPage: named.read})
	return strikes, named.pools, meta, err
}

// idQuery is a query paged by id: its document, the field its entities
// come under, its variables (without after and first), each entity's id,
// and the check each entity must pass.
type idQuery[T any] struct {
	doc, field string
	vars       map[string]any
	id         func(T) string
	check      func(T) error
	// firstPage, when set, reads more of the first page (other root
	// fields of the document, asked once, at the answer's block).
	firstPage func(page map[string]json.RawMessage) error
}

// idPages runs q's doc (vars plus after and first) one page after another,
// ordered by id, until a page comes back short: the list under field,
// each entity checked by check (a failure is garbage from the subgraph),
// the next page after the last entity's id. It stops with garbage after
// maxPages pages or maxBytes of answers, so a subgraph paging without end
// cannot hold a request. Meta is that of the first page: the block the
// answer reflects.
func idPages[T any](ctx context.Context, c *Client, q idQuery[T]) ([]T, Meta, error) {
	doc, field, vars, id, check := q.doc, q.field, q.vars, q.id, q.check
	var (
		all   []T
		meta  Meta
		after = ""
		total int64
		seen  = map[string]bool{}
	)
	for page := 0; ; page++ {
		if page == c.maxPages {
			return nil, Meta{}, garbage(fmt.Errorf("more than %d pages of %s", c.maxPages, field))
		}
		v := make(map[string]any, len(vars)+2)
		for k, x := range vars {
			v[k] = x
		}
		v["after"], v["first"] = after, c.pageSize
		var out map[string]json.RawMessage
		at := time.Now()
		n, err := c.execSized(ctx, doc, v, &out)
		if err != nil {
			return nil, Meta{}, err
		}
		if total += int64(n); total > c.maxBytes {
			return nil, Meta{}, garbage(fmt.Errorf("%s answer of more than %d bytes over %d pages", field, c.maxBytes, page+1))
		}
		if page == 0 {
			var m metaJSON
			if err := json.Unmarshal(out["_meta"], &m); err != nil {
				return nil, Meta{}, garbage(fmt.Errorf("%s: _meta: %w", doc, err))
			}
			meta = answerMeta(ctx, m)
			c.sawHead(out["head"], at)
			if q.firstPage != nil {
				if err := q.firstPage(out); err != nil {
					return nil, Meta{}, garbage(fmt.Errorf("%s: %w", doc, err))
				}
			}
		}
		var list []T
		if err := json.Unmarshal(out[field], &list); err != nil {
			return nil, Meta{}, garbage(fmt.Errorf("%s: %s: %w", doc, field, err))
		}
		if list == nil {
			return nil, Meta{}, garbage(fmt.Errorf("%s: %s missing or null", doc, field))
		}
		if len(list) > c.pageSize {
			return nil, Meta{}, garbage(fmt.Errorf("%s: a page of %d %s for first %d", doc, len(list), field, c.pageSize))
		}
		for _, e := range list {
			if err := check(e); err != nil {
				if pe := (*problem.Error)(nil); !errors.As(err, &pe) {
					err = garbage(err)
				}
				return nil, Meta{}, err
			}
			if k := id(e); seen[k] {
				return nil, Meta{}, garbage(fmt.Errorf("%s: %s %s listed twice", doc, field, k)) // see identified
			} else {
				seen[k] = true
			}
		}
		all = append(all, list...)
		if len(list) < c.pageSize {
			return all, meta, nil
		}
		after = id(list[len(list)-1])
	}
}

// check refuses what a strike's fields cannot hold on chain: a record
// without its numbers, a price no pool can have. (Negative numbers never
// decode: BigInt. Used liquidity above the total is a legitimate state.)
func (s Strike) check() error {
	for _, d := range s.DailyDonations {
		if d.Donation.Int == nil || d.SqrtPriceX96.Int == nil {
			return garbage(fmt.Errorf("strike %s: donation lacks fields", s.ID))
		}
		if err := checkSqrtPrice("strike "+s.ID, d.SqrtPriceX96.Int); err != nil {
			return err
		}
	}
	for _, c := range s.DailyFeeCompounds {
		if c.Compound.Int == nil || c.SqrtPriceX96.Int == nil {
			return garbage(fmt.Errorf("strike %s: compound lacks fields", s.ID))
		}
		if err := checkSqrtPrice("strike "+s.ID, c.SqrtPriceX96.Int); err != nil {
			return err
		}
	}
	return nil
}
