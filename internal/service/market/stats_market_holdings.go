package market

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Open interest and TVL, as a risk desk and an LP read them (docs/api.md
// and docs/figures.md state the same):
//
//   - Open interest is the options outstanding: the collateral the
//     market's options still hold and may still exercise, summed over
//     every leg of every option not expired at the answer's block (expiry
//     >= the block's time, as exerciseOption checks): the amount of the
//     option's collateral token (calls: the call asset; puts: the put
//     asset) the leg's liquidity left stands for over its range, which is
//     exactly what exercising all of it swaps (amountToSwap) and what the
//     market holds for it. It does not move with the price: it is the
//     options' size, in the units purchase volume is in. The liquidity
//     left is opTickMap's liquidityToUse (kept by the subgraph), so an
//     option exercised in full counts nothing, whatever dust of
//     liquidityUsed its exercise left in the handler.
//   - Expired and unsettled options (expiry passed, collateral still held
//     until a settler settles them) are reported apart, with the same
//     figures: they can no longer be exercised, and their liquidity goes
//     back to the LPs at settlement.
//   - TVL is what LPs have in the market's reach: over every range of a
//     pool the market approves whose handler it can buy from now, the
//     range's liquidity deposited and not withdrawn, reserved liquidity
//     included (reserveLiquidity moves liquidity out of totalLiquidity
//     into reservedLiquidity, still the LPs' until they withdraw it), as
//     tokens at the range's pool's price now (getAmountsForLiquidity): what
//     the LPs would hold if every option returned its liquidity now. The
//     reserved part is also reported alone.

// StatsOpenInterest is a set of options' collateral: calls' in the call
// asset, puts' in the put asset, the call asset valued at the prime
// pool's price at the answer's block for usd.
type StatsOpenInterest struct {
	StatsAmounts
	// Options counts the options summed.
	Options int `json:"options"`
	// Ranges counts the distinct handler ranges their legs hold liquidity
	// of.
	Ranges int `json:"ranges"`
}

// StatsTVL is the liquidity of the market's ranges as tokens at each
// pool's price, reserved liquidity included and also given alone.
type StatsTVL struct {
	StatsAmounts
	// Ranges counts the ranges summed (liquidity deposited or reserved).
	Ranges int `json:"ranges"`
	// Reserved is the part of the figures LPs reserved and have not
	// withdrawn yet.
	Reserved StatsAmounts `json:"reserved"`
}

// tvl sums the ranges of the pools the market approves (ranges: the
// subgraph's, of view.ApprovedPools()) whose handler the market can buy
// from now.
//
// held gets each range summed, as token0 and token1 amounts.
func tvl(view *chain.StrikesView, ranges []subgraph.StatsRange, v valuer, held map[string]rangeHeld) (StatsTVL, error) {
	var out StatsTVL
	sums := [2][2]*big.Int{{new(big.Int), new(big.Int)}, {new(big.Int), new(big.Int)}} // [all|reserved][call|put]
	for _, r := range ranges {
		pv, ok := view.Pools[r.Pool.Addr()]
		if !ok {
			return out, vocab.SubgraphGarbage(fmt.Errorf("range %s is on pool %s, which was not asked for", r.ID, r.Pool.Addr().Hex()))
		}
		total := new(big.Int).Add(r.TotalLiquidity.Int, r.ReservedLiquidity.Int)
		if !pv.Approved || !buyable(view, r.Handler.Addr()) || total.Sign() <= 0 {
			continue // a pool the market does not approve (its approval read after the query)
		}
		callIs0 := pv.Token0 == view.Info.CallAsset.Address
		for i, l := range []*big.Int{total, r.ReservedLiquidity.Int} {
			a0, a1, err := rangeAt(pv, r.ID, r.TickLower, r.TickUpper, l)
			if err != nil {
				return out, vocab.SubgraphGarbage(err)
			}
			if i == 0 {
				held[r.ID] = rangeHeld{pool: r.Pool.Addr(), tokens: [2]common.Address{pv.Token0, pv.Token1}, amounts: [2]*big.Int{a0, a1}}
			}
			if !callIs0 {
				a0, a1 = a1, a0
			}
			sums[i][0].Add(sums[i][0], a0)
			sums[i][1].Add(sums[i][1], a1)
		}
		out.Ranges++
	}
	price := view.Pools[view.Info.Pool].SqrtPriceX96
	out.StatsAmounts = v.amounts(sums[0][0], sums[0][1], v.inPut(sums[0][0], price))
	out.Reserved = v.amounts(sums[1][0], sums[1][1], v.inPut(sums[1][0], price))
	return out, nil
}

// rangeAt is liquidity l of range id's ticks as token0 and token1 at the
// pool's price.
func rangeAt(pv chain.PoolView, id string, tickLower, tickUpper int, l *big.Int) (a0, a1 *big.Int, err error) {
	if tickLower >= tickUpper {
		return nil, nil, fmt.Errorf("range %s has ticks [%d, %d]", id, tickLower, tickUpper)
	}
	sa, err := clamm.SqrtRatioAtTick(tickLower)
	if err != nil {
		return nil, nil, err
	}
	sb, err := clamm.SqrtRatioAtTick(tickUpper)
	if err != nil {
		return nil, nil, err
	}
	a0, a1 = clamm.AmountsForLiquidity(pv.SqrtPriceX96, sa, sb, l)
	return a0, a1, nil
}

// openInterest splits the options that hold collateral at blockTime (the
// answer's block's time) into those still exercisable and those expired,
// and sums each set's collateral. byPool gets the open set's collateral
// per pool of its legs, as token0 and token1 amounts.
func openInterest(view *chain.StrikesView, options []subgraph.OpenOption, blockTime int64, v valuer, byPool map[common.Address]*[2]*big.Int) (open, expired StatsOpenInterest, err error) {
	if blockTime <= 0 {
		// Without the block's time no option can be told expired or not.
		return open, expired, problem.New(problem.SubgraphError, "the subgraph's _meta names no block timestamp; the statistics documents must select _meta { block { number timestamp } }")
	}
	var sets [2]collateral // [open|expired]
	for i := range sets {
		sets[i] = collateral{call: new(big.Int), put: new(big.Int), ranges: map[string]bool{}}
	}
	sets[0].byPool = byPool
	collateralIs0 := [2]bool{view.Info.Token0IsCall(), !view.Info.Token0IsCall()} // [call|put]
	for _, o := range options {
		set := &sets[0]
		if o.Expiry.Cmp(big.NewInt(blockTime)) < 0 {
			set = &sets[1] // exerciseOption: expiry < block.timestamp reverts
		}
		side := 1
		if o.IsCall {
			side = 0
		}
		if err := set.add(o, collateralIs0[side]); err != nil {
			return open, expired, vocab.SubgraphGarbage(err)
		}
	}
	price := view.Pools[view.Info.Pool].SqrtPriceX96
	return sets[0].figures(v, price), sets[1].figures(v, price), nil
}

// collateral sums options' collateral by side.
type collateral struct {
	call, put *big.Int
	options   int
	ranges    map[string]bool
	byPool    map[common.Address]*[2]*big.Int // nil: not kept
}

// add adds option o's legs: each leg's liquidity left as the amount of its
// collateral token over its range (the exercise's amountToSwap).
func (c *collateral) add(o subgraph.OpenOption, collateralIs0 bool) error {
	sum := c.put
	if o.IsCall {
		sum = c.call
	}
	counted := false
	for _, l := range o.Legs {
		if l.LiquidityLeft.Sign() <= 0 {
			continue
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.LiquidityLeft.Int, collateralIs0)
		if err != nil {
			return fmt.Errorf("option %s leg %d: %w", o.ID, l.Index, err)
		}
		sum.Add(sum, leg.AmountToSwap)
		c.addPool(l.Pool.Addr(), collateralIs0, leg.AmountToSwap)
		c.ranges[rangeKey(l)] = true
		counted = true
	}
	if counted {
		c.options++
	}
	return nil
}

// addPool adds a leg's collateral to its pool's, token0's or token1's.
func (c *collateral) addPool(pool common.Address, is0 bool, amount *big.Int) {
	if c.byPool == nil {
		return
	}
	sums := c.byPool[pool]
	if sums == nil {
		sums = &[2]*big.Int{new(big.Int), new(big.Int)}
		c.byPool[pool] = sums
	}
	i := 1
	if is0 {
		i = 0
	}
	sums[i].Add(sums[i], amount)
}

func rangeKey(l subgraph.OpenLeg) string {
	return fmt.Sprintf("%s-%s-%s-%d-%d", l.Handler.Addr().Hex(), l.Pool.Addr().Hex(), l.Hook.Addr().Hex(), l.TickLower, l.TickUpper)
}

func (c *collateral) figures(v valuer, price *big.Int) StatsOpenInterest {
	return StatsOpenInterest{StatsAmounts: v.amounts(c.call, c.put, v.inPut(c.call, price)), Options: c.options, Ranges: len(c.ranges)}
}
