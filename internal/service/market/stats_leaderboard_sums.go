package market

import (
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// boardFlows are one trader's amounts in one token, or (as big.Rat) in USD.
type boardFlows[T any] struct {
	volume, premiums, fees, realised T
}

// traderSums are one trader's counts and flows.
type traderSums struct {
	purchases, exercises int
	tokens               map[common.Address]*boardFlows[*big.Int]
	usd                  boardFlows[*big.Rat]
}

// boardSums sums the window's events per trader.
type boardSums struct {
	markets map[common.Address]boardMarket
	tokens  map[common.Address]vocab.Token // every market's two assets, as answered
	traders map[common.Address]*traderSums
}

func newBoardSums(markets map[common.Address]boardMarket) *boardSums {
	tokens := map[common.Address]vocab.Token{}
	for _, m := range markets {
		tokens[m.info.CallAsset.Address], tokens[m.info.PutAsset.Address] = vocab.TokenOf(m.info.CallAsset), vocab.TokenOf(m.info.PutAsset)
	}
	return &boardSums{markets: markets, tokens: tokens, traders: map[common.Address]*traderSums{}}
}

func (b *boardSums) trader(a common.Address) *traderSums {
	t := b.traders[a]
	if t == nil {
		t = &traderSums{tokens: map[common.Address]*boardFlows[*big.Int]{},
			usd: boardFlows[*big.Rat]{new(big.Rat), new(big.Rat), new(big.Rat), new(big.Rat)}}
		b.traders[a] = t
	}
	return t
}

func (t *traderSums) token(a common.Address) *boardFlows[*big.Int] {
	f := t.tokens[a]
	if f == nil {
		f = &boardFlows[*big.Int]{new(big.Int), new(big.Int), new(big.Int), new(big.Int)}
		t.tokens[a] = f
	}
	return f
}

// usdOf is an amount of the market's call asset (isCallAsset) or put asset
// in USD: a call-asset amount valued in the put asset at sqrtP first,
// floored once (the statistics' rule); nil where the put asset is not a
// USD stablecoin.
func (m boardMarket) usdOf(amount, sqrtP *big.Int, isCallAsset bool) *big.Rat {
	if !m.v.usd {
		return nil
	}
	if isCallAsset {
		amount = m.v.inPut(amount, sqrtP)
	}
	return m.v.usdOf(amount)
}

func addRat(sum, v *big.Rat) {
	if v != nil {
		sum.Add(sum, v)
	}
}

// purchase counts a purchase for its buyer: volume, premium and fees in
// the asset the option is of (the call asset for calls, the put asset for
// puts).
func (b *boardSums) purchase(p subgraph.BoardPurchase) {
	m := b.markets[p.Market.Addr()]
	t := b.trader(p.Buyer.Addr())
	t.purchases++
	asset := m.info.PutAsset.Address
	if p.IsCall {
		asset = m.info.CallAsset.Address
	}
	f := t.token(asset)
	f.volume.Add(f.volume, p.TotalAssetWithdrawn.Int)
	f.premiums.Add(f.premiums, p.Premium.Int)
	f.fees.Add(f.fees, p.ProtocolFees.Int)
	addRat(t.usd.volume, m.usdOf(p.TotalAssetWithdrawn.Int, p.SqrtPriceX96.Int, p.IsCall))
	addRat(t.usd.premiums, m.usdOf(p.Premium.Int, p.SqrtPriceX96.Int, p.IsCall))
	addRat(t.usd.fees, m.usdOf(p.ProtocolFees.Int, p.SqrtPriceX96.Int, p.IsCall))
}

// exercise counts an exercise for the option's owner: what reached the
// owner (profitToOwner; none where the subgraph found no payment to the
// owner of a delegated exercise), in the profit token (the put asset for
// calls, the call asset for puts).
func (b *boardSums) exercise(x subgraph.BoardExercise) {
	m := b.markets[x.Market.Addr()]
	t := b.trader(x.User.Addr())
	t.exercises++
	if x.ProfitToOwner == nil {
		return
	}
	asset := m.info.CallAsset.Address
	if x.Option.IsCall {
		asset = m.info.PutAsset.Address
	}
	f := t.token(asset)
	f.realised.Add(f.realised, x.ProfitToOwner.Int)
	addRat(t.usd.realised, m.usdOf(x.ProfitToOwner.Int, x.SqrtPriceX96.Int, !x.Option.IsCall))
}

// ranking is the page [skip, skip+first) of the traders by USD net,
// highest first, ties by address ascending; and how many traders there are.
func (b *boardSums) ranking(first, skip int) ([]LeaderboardEntry, int) {
	type ranked struct {
		addr common.Address
		net  *big.Rat
		t    *traderSums
	}
	all := make([]ranked, 0, len(b.traders))
	for a, t := range b.traders {
		net := new(big.Rat).Sub(t.usd.realised, t.usd.premiums)
		all = append(all, ranked{a, net.Sub(net, t.usd.fees), t})
	}
	sort.Slice(all, func(i, j int) bool {
		if c := all[i].net.Cmp(all[j].net); c != 0 {
			return c > 0
		}
		return all[i].addr.Cmp(all[j].addr) < 0 // as comparing lower-case hex
	})
	out := []LeaderboardEntry{}
	for i := skip; i < len(all) && i < skip+first; i++ {
		r := all[i]
		out = append(out, LeaderboardEntry{Rank: i + 1, Trader: r.addr.Hex(), Purchases: r.t.purchases, Exercises: r.t.exercises,
			USD:    BoardUSD{Volume: ratString(r.t.usd.volume), Premiums: ratString(r.t.usd.premiums), ProtocolFees: ratString(r.t.usd.fees), Realised: ratString(r.t.usd.realised), Net: ratString(r.net)},
			Tokens: b.tokenFigures(r.t)})
	}
	return out, len(all)
}

// tokenFigures are a trader's flows by token address, ascending.
func (b *boardSums) tokenFigures(t *traderSums) []BoardTokenFigures {
	out := make([]BoardTokenFigures, 0, len(t.tokens))
	for a, f := range t.tokens {
		net := new(big.Int).Sub(f.realised, f.premiums)
		out = append(out, BoardTokenFigures{Token: b.tokens[a], Volume: f.volume.String(), Premiums: f.premiums.String(),
			ProtocolFees: f.fees.String(), Realised: f.realised.String(), Net: net.Sub(net, f.fees).String()})
	}
	sort.Slice(out, func(i, j int) bool {
		return strings.ToLower(out[i].Token.Address) < strings.ToLower(out[j].Token.Address)
	})
	return out
}

// ratString is an exact decimal (the denominators are powers of ten).
func ratString(r *big.Rat) string { return decimalSum{r}.String() }
