package market

import (
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// tokenSums sums amounts by token address.
type tokenSums struct {
	tokens map[common.Address]vocab.Token
	sums   map[common.Address]*big.Int
}

func newTokenSums(tokens map[common.Address]vocab.Token) tokenSums {
	return tokenSums{tokens: tokens, sums: map[common.Address]*big.Int{}}
}

func (t tokenSums) addInt(token common.Address, v *big.Int) {
	if t.sums[token] == nil {
		t.sums[token] = new(big.Int)
	}
	if v != nil {
		t.sums[token].Add(t.sums[token], v)
	}
}

// list is the sums by token address, ascending.
func (t tokenSums) list() []vocab.TokenAmount {
	out := make([]vocab.TokenAmount, 0, len(t.sums))
	for a, v := range t.sums {
		out = append(out, vocab.TokenAmount{Token: t.tokens[a], Amount: v.String()})
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ToLower(out[i].Token.Address) < strings.ToLower(out[j].Token.Address)
	})
	return out
}

// decimalSum adds exact decimals (the usd figures of valid answers).
type decimalSum struct{ r *big.Rat }

func (d *decimalSum) add(v *big.Rat) {
	if v == nil {
		return
	}
	if d.r == nil {
		d.r = new(big.Rat)
	}
	d.r.Add(d.r, v)
}

// String is the sum as an exact decimal: the sum of decimals with at most
// 77 fractional digits (a token's decimals, as the chain reader bounds
// them) has as many at most.
func (d decimalSum) String() string {
	if d.r == nil {
		return "0"
	}
	s := d.r.FloatString(77)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// figureSums sums StatsFigures of several markets.
type figureSums struct {
	purchases, exercises                       int
	volume, premiums, fees, profit             tokenSums
	usdVolume, usdPremiums, usdFees, usdProfit decimalSum
	usdMarkets                                 int
	buyers                                     map[common.Address]bool
}

func newFigureSums(tokens map[common.Address]vocab.Token) *figureSums {
	return &figureSums{volume: newTokenSums(tokens), premiums: newTokenSums(tokens), fees: newTokenSums(tokens), profit: newTokenSums(tokens), buyers: map[common.Address]bool{}}
}

// add adds one market's figures: callAsset amounts are of its call
// asset, putAsset amounts of its put asset.
func (f *figureSums) add(m MarketStats, fig StatsFigures, buyers map[common.Address]bool) {
	call, put := m.callAsset, m.putAsset
	f.purchases += fig.Purchases
	f.exercises += fig.Exercises
	for _, x := range []struct {
		sums tokenSums
		a    StatsAmounts
		usd  *decimalSum
	}{{f.volume, fig.Volume, &f.usdVolume}, {f.premiums, fig.Premiums, &f.usdPremiums}, {f.fees, fig.ProtocolFees, &f.usdFees}, {f.profit, fig.Profit, &f.usdProfit}} {
		x.sums.addInt(call, x.a.call)
		x.sums.addInt(put, x.a.put)
		x.usd.add(x.a.usd)
	}
	if m.USD {
		f.usdMarkets++
	}
	f.addBuyers(buyers)
}

// addBuyers adds buyers to the distinct buyers.
func (f *figureSums) addBuyers(buyers map[common.Address]bool) {
	for b := range buyers {
		f.buyers[b] = true
	}
}

func (f *figureSums) figures() ChainFigures {
	out := ChainFigures{Purchases: f.purchases, Exercises: f.exercises, Buyers: len(f.buyers),
		USD: ChainUSD{Markets: f.usdMarkets, Volume: f.usdVolume.String(), Premiums: f.usdPremiums.String(), ProtocolFees: f.usdFees.String(), Profit: f.usdProfit.String()}}
	vol, prem, fees, prof := f.volume.list(), f.premiums.list(), f.fees.list(), f.profit.list()
	for i := range vol {
		out.Tokens = append(out.Tokens, TokenFigures{Token: vol[i].Token, Volume: vol[i].Amount, Premiums: prem[i].Amount, ProtocolFees: fees[i].Amount, Profit: prof[i].Amount})
	}
	if out.Tokens == nil {
		out.Tokens = []TokenFigures{}
	}
	return out
}

// sum fills the chain's figures from its markets' answers.
func (c *ChainStats) sum() {
	tokens := map[common.Address]vocab.Token{}
	for _, m := range c.Markets {
		tokens[m.callAsset] = m.CallAsset
		tokens[m.putAsset] = m.PutAsset
	}
	total := newFigureSums(tokens)
	var days []*figureSums
	c.Days = []ChainDay{}
	for _, m := range c.Markets {
		for i, d := range m.Days {
			if i == len(days) {
				days = append(days, newFigureSums(tokens))
				c.Days = append(c.Days, ChainDay{Start: d.Start, From: d.From, To: d.To})
			}
			days[i].add(m, d.StatsFigures, m.buyers[d.start])
			total.addBuyers(m.buyers[d.start])
		}
		total.add(m, m.Totals, nil)
	}
	c.Totals = total.figures()
	for i := range c.Days {
		c.Days[i].ChainFigures = days[i].figures()
	}
	c.sumHoldings(tokens)
}

// sumHoldings fills open interest (the markets' summed), TVL (each
// distinct range once) and the pools' holdings.
func (c *ChainStats) sumHoldings(tokens map[common.Address]vocab.Token) {
	oi, expired, tvl := newTokenSums(tokens), newTokenSums(tokens), newTokenSums(tokens)
	type pool struct {
		tvl, oi tokenSums
		ranges  int
	}
	pools := map[common.Address]*pool{}
	poolOf := func(a common.Address) *pool {
		if pools[a] == nil {
			pools[a] = &pool{tvl: newTokenSums(tokens), oi: newTokenSums(tokens)}
		}
		return pools[a]
	}
	seen := map[string]bool{}
	for _, m := range c.Markets {
		call, put := m.callAsset, m.putAsset
		oi.addInt(call, m.OpenInterest.call)
		oi.addInt(put, m.OpenInterest.put)
		expired.addInt(call, m.ExpiredUnsettled.call)
		expired.addInt(put, m.ExpiredUnsettled.put)
		t0, t1 := call, put
		if strings.ToLower(put.Hex()) < strings.ToLower(call.Hex()) {
			t0, t1 = put, call
		}
		for a, sums := range m.held.pools {
			p := poolOf(a)
			p.oi.addInt(t0, sums[0])
			p.oi.addInt(t1, sums[1])
		}
		for id, r := range m.held.ranges {
			if seen[id] {
				continue // a range two markets reach: counted once
			}
			seen[id] = true
			p := poolOf(r.pool)
			p.ranges++
			for i := range 2 {
				p.tvl.addInt(r.tokens[i], r.amounts[i])
				tvl.addInt(r.tokens[i], r.amounts[i])
			}
		}
	}
	c.OpenInterest, c.ExpiredUnsettled, c.TVL = ChainHoldings{oi.list()}, ChainHoldings{expired.list()}, ChainHoldings{tvl.list()}
	c.Pools = []PoolHoldings{}
	for a, p := range pools {
		c.Pools = append(c.Pools, PoolHoldings{Pool: a.Hex(), TVL: p.tvl.list(), Ranges: p.ranges, OpenInterest: p.oi.list()})
	}
	sort.Slice(c.Pools, func(i, j int) bool { return strings.ToLower(c.Pools[i].Pool) < strings.ToLower(c.Pools[j].Pool) })
}
