package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

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
// [TickLowerMin, TickLowerMax].
type StrikesQuery struct {
	Pools        []common.Address
	TickLowerMin int
	TickLowerMax int
}

// Strikes returns every strike matching q, paging by id until a short page.
// Meta is that of the first page: the block the answer reflects.
func (c *Client) Strikes(ctx context.Context, q StrikesQuery) ([]Strike, Meta, error) {
	pools := make([]string, len(q.Pools))
	for i, p := range q.Pools {
		pools[i] = LowerHex(p)
	}
	var (
		all   []Strike
		meta  Meta
		after = ""
		total int64
	)
	for page := 0; ; page++ {
		if page == c.maxPages {
			return nil, Meta{}, garbage(fmt.Errorf("more than %d pages of strikes", c.maxPages))
		}
		var out struct {
			Meta    metaJSON `json:"_meta"`
			Strikes []Strike `json:"strikes"`
		}
		vars := map[string]any{
			"pools": pools, "tickLowerMin": q.TickLowerMin, "tickLowerMax": q.TickLowerMax,
			"after": after, "first": c.pageSize,
		}
		n, err := c.execSized(ctx, queries.Strikes, vars, &out)
		if err != nil {
			return nil, Meta{}, err
		}
		if total += int64(n); total > c.maxBytes {
			return nil, Meta{}, garbage(fmt.Errorf("strikes answer of more than %d bytes over %d pages", c.maxBytes, page+1))
		}
		if page == 0 {
			meta = out.Meta.meta()
		}
		for _, s := range out.Strikes {
			if s.TotalLiquidity.Int == nil || s.UsedLiquidity.Int == nil {
				return nil, Meta{}, garbage(fmt.Errorf("strike %s lacks liquidity fields", s.ID))
			}
			if err := s.check(); err != nil {
				return nil, Meta{}, err
			}
		}
		all = append(all, out.Strikes...)
		if len(out.Strikes) < c.pageSize {
			return all, meta, nil
		}
		after = out.Strikes[len(out.Strikes)-1].ID
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
