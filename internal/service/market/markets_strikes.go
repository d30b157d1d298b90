package market

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sort"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// StrikesRequest is a validated strikes-chain request.
type StrikesRequest struct {
	ChainID    uint64
	Market     common.Address
	CallsReach int
	PutsReach  int
	// FilterDeprecated leaves out the strikes of handlers the registry
	// marks deprecated (the hosted API's filterDeprecated=true).
	FilterDeprecated bool
}

// StrikesChain is the answer: entries in response order and the subgraph
// block they reflect.
type StrikesChain struct {
	Entries []StrikeEntry
	Block   uint64
}

// StrikeEntry is one element of the response array: an object with exactly
// one key, the strike price, whose value is the strike.
type StrikeEntry map[string]Strike

// Strike is one handler range seen as a strike.
type Strike struct {
	// Type is "call" or "put": an additive field, so clients need not
	// re-derive the side from the token.
	Type               string        `json:"type"`
	TotalLiquidity     string        `json:"totalLiquidity"`
	AvailableLiquidity string        `json:"availableLiquidity"`
	Utilization        string        `json:"utilization"`
	APR                string        `json:"apr"`
	Handler            vocab.Handler `json:"handler"`
	Meta               StrikeMeta    `json:"meta"`
	Token              vocab.Token   `json:"token"`
}

// StrikeMeta holds the raw figures behind a strike.
type StrikeMeta struct {
	Hook                    string `json:"hook"`
	TickLower               int    `json:"tickLower"`
	TickUpper               int    `json:"tickUpper"`
	TotalTokenLiquidity     string `json:"totalTokenLiquidity"`
	AvailableTokenLiquidity string `json:"availableTokenLiquidity"`
	TotalLiquidity          string `json:"totalLiquidity"`
	AvailableLiquidity      string `json:"availableLiquidity"`
	// HookRules say what buying from this range requires beyond liquidity.
	HookRules vocab.HookRules `json:"hookRules"`
}

const day = 86400

// StrikesChain lists the strikes of a market within reach of the current
// tick (domain.md section 6) that the market can buy now: the typed
// strikes (StrikesOf), each rendered under its price's key.
//
// Each pool's ranges are placed by that pool's own tick and tick spacing:
// reach counts tick-spacing steps from the pool's spacing-aligned current
// tick, the k-th range above starts at base + k*spacing, the k-th below at
// base - k*spacing, k from 1 to the side's reach. The range holding a pool's
// current tick is neither a call nor a put and is left out, as are ranges
// without liquidity and ranges the market cannot use now: in a pool it does
// not approve (approvedPools; the pools come from marketView), of a handler its
// position manager has not whitelisted for it, of a paused handler, of a
// handler whose payload format is the other market version's, or behind a
// hook that does not admit the market (hookAdmission).
func (s *Market) StrikesChain(ctx context.Context, req StrikesRequest) (StrikesChain, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return StrikesChain{}, err
	}
	set, err := s.StrikesOf(ctx, up, vocab.StrikesAsk{Market: req.Market, CallsReach: req.CallsReach, PutsReach: req.PutsReach})
	if err != nil {
		return StrikesChain{}, err
	}
	aprDay := lastCompleteDay(set.Meta.Timestamp)
	entries := make([]StrikeEntry, 0, len(set.Strikes))
	for _, st := range set.Strikes {
		w, err := renderStrike(&st, up.Config, aprDay)
		if err != nil {
			return StrikesChain{}, err
		}
		if req.FilterDeprecated && w.Handler.Deprecated {
			continue
		}
		entries = append(entries, StrikeEntry{clamm.FormatPrice(st.Price): w})
	}
	return StrikesChain{Entries: entries, Block: set.Meta.Block}, nil
}

// StrikesOf reads the strikes an ask names: the market's view (pool
// prices and approvals, which handlers it can use), the ranges of its pools
// from the subgraph with the pools the subgraph has the market approving
// (markets_pools.go), which hooks admit it (unless keepHooked), and each range of
// a pool it approves placed on its side of its own pool's tick.
func (s *Market) StrikesOf(ctx context.Context, up *vocab.Upstreams, ask vocab.StrikesAsk) (*vocab.StrikeSet, error) {
	p := &strikesPlan{up: up, byPool: map[common.Address]window{}}
	var err error
	if p.view, err = marketView(ctx, up, ask.Market); err != nil {
		return nil, err
	}
	q, ok := p.windows(ask, p.view.PoolsToRead())
	if !ok {
		return &vocab.StrikeSet{View: p.view}, nil // no tick has that price: no strike
	}
	if err := p.fetch(ctx, ask, q); err != nil {
		return nil, err
	}
	p.admitted = func(common.Address) bool { return true }
	if !ask.KeepHooked {
		if p.admitted, err = s.hookAdmission(ctx, up, p.view, p.ranges); err != nil {
			return nil, err
		}
	}
	placed, err := p.place(ask.At)
	if err != nil {
		return nil, err
	}
	order(placed)
	return &vocab.StrikeSet{Strikes: placed, Meta: p.meta, View: p.view}, nil
}

// strikesPlan is what StrikesOf carries from phase to phase: the market's
// view, each pool's window, and the ranges the subgraph returned.
type strikesPlan struct {
	up     *vocab.Upstreams
	view   *chain.StrikesView        // with the pools the market approves (markets_pools.go)
	byPool map[common.Address]window // each pool's window
	ranges []subgraph.Strike
	meta   subgraph.Meta
	// admitted says whether a range's hook admits the market now.
	admitted func(hook common.Address) bool
}

// market is the market's pair as clamm prices it.
func (p *strikesPlan) market() clamm.Market {
	info := p.view.Info
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	return clamm.Market{Token0IsCall: info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
}

// windows places each of pools' window by its own tick and spacing and
// returns the one subgraph query over their union. Above a pool's tick a
// range holds token0; below, token1. Calls are the side holding the call
// asset. A strike asked by price (at) has every pool's window span the
// ticks and the query ask for the ranges struck at its tick alone; false
// when no tick has that price.
func (p *strikesPlan) windows(ask vocab.StrikesAsk, pools []common.Address) (subgraph.StrikesQuery, bool) {
	info := p.view.Info
	reachAbove, reachBelow := ask.CallsReach, ask.PutsReach
	if !info.Token0IsCall() {
		reachAbove, reachBelow = ask.PutsReach, ask.CallsReach
	}
	var q subgraph.StrikesQuery
	for i, pool := range pools {
		w := poolWindow(p.view.Pools[pool], reachAbove, reachBelow)
		if ask.At != nil {
			w.lo, w.hi = clamm.MinTick, clamm.MaxTick
		}
		p.byPool[pool] = w
		if i == 0 || w.lo < q.TickLowerMin {
			q.TickLowerMin = w.lo
		}
		if i == 0 || w.hi > q.TickLowerMax {
			q.TickLowerMax = w.hi
		}
		if !slices.Contains(q.Pools, pool) {
			q.Pools = append(q.Pools, pool)
		}
	}
	if ask.At == nil {
		return q, true
	}
	t, ok := p.market().StrikeTick(ask.At.Price)
	if !ok {
		return q, false
	}
	// A call is struck at its range's upper tick, a put at its lower.
	if ask.At.IsCall {
		q.TickLowerMax, q.TickUpper = t-1, &[2]int{t, t}
	} else {
		q.TickLowerMin, q.TickLowerMax, q.TickUpper = t, t, &[2]int{t + 1, clamm.MaxTick}
	}
	return q, true
}

// fetch runs the one query over the union of the pools' windows (each
// range is then placed in its own pool's window), with the pools the
// subgraph has the market approving; then, one more round only when
// something is new, what the answer named that the view lacks (pools,
// approvals, handlers: completeView) and, for an approved pool named for
// the first time, its ranges in its own window (one more query).
func (p *strikesPlan) fetch(ctx context.Context, ask vocab.StrikesAsk, q subgraph.StrikesQuery) error {
	q.Market = ask.Market
	var named []common.Address
	var err error
	if p.ranges, named, p.meta, err = p.up.Subgraph.Strikes(ctx, q); err != nil {
		return err
	}
	fresh, err := completeView(ctx, p.up, p.view, q.Pools, namedBy{named, rangeHandlers(p.ranges)})
	if err != nil || len(fresh) == 0 {
		return err
	}
	q2, _ := p.windows(ask, fresh)
	more, _, _, err := p.up.Subgraph.Strikes(ctx, q2)
	if err != nil {
		return err
	}
	p.ranges = append(p.ranges, more...)
	_, err = completeView(ctx, p.up, p.view, nil, namedBy{handlers: rangeHandlers(more)})
	return err
}

// rangeHandlers are the handlers of ranges.
func rangeHandlers(ranges []subgraph.Strike) []common.Address {
	out := make([]common.Address, len(ranges))
	for i, r := range ranges {
		out[i] = r.Handler.Addr()
	}
	return out
}

// place turns each range the market can buy into a strike on its side of
// its pool's tick; ranges holding the tick or outside the window are left
// out, and a range that cannot be is the subgraph's garbage. With at, only
// the strikes at its price and side are kept (a subgraph document that
// does not bound tickUpper returns more).
func (p *strikesPlan) place(at *vocab.StrikeAt) ([]vocab.StrikeRange, error) {
	info := p.view.Info
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := p.market()
	out := make([]vocab.StrikeRange, 0, len(p.ranges))
	for i := range p.ranges {
		r := &p.ranges[i]
		if r.TickLower >= r.TickUpper || r.TickLower < clamm.MinTick || r.TickUpper > clamm.MaxTick {
			return nil, vocab.SubgraphGarbage(fmt.Errorf("strike %s has ticks [%d, %d]", r.ID, r.TickLower, r.TickUpper))
		}
		w, ok := p.byPool[r.Pool.Addr()]
		if !ok {
			return nil, vocab.SubgraphGarbage(fmt.Errorf("strike %s is on pool %s, which was not asked for", r.ID, r.Pool.Addr().Hex()))
		}
		if !p.view.Pools[r.Pool.Addr()].Approved || !buyable(p.view, r.Handler.Addr()) || !p.admitted(r.Hook.Addr()) {
			continue // a pool the market does not approve (its approval read after the query)
		}
		var held chain.Token
		var heldIs0 bool
		switch {
		case r.TickLower > w.tick && r.TickLower <= w.hi:
			held, heldIs0 = tok0, true
		case r.TickUpper <= w.tick && r.TickLower >= w.lo:
			held, heldIs0 = tok1, false
		default:
			continue // holds the pool's current tick, or outside its window
		}
		st, err := p.strike(r, held, heldIs0)
		if err != nil {
			return nil, err
		}
		if st.Price = m.TickPrice(st.Tick); at != nil && (at.IsCall != st.IsCall || at.Price != st.Price) {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// strike is range r seen as a strike on the side holding held.
func (p *strikesPlan) strike(r *subgraph.Strike, held chain.Token, heldIs0 bool) (vocab.StrikeRange, error) {
	st := vocab.StrikeRange{
		IsCall: held.Address == p.view.Info.CallAsset.Address, Tick: clamm.PutStrikeTick(r.TickLower, r.TickUpper),
		Handler: r.Handler.Addr(), Pool: r.Pool.Addr(), Hook: r.Hook.Addr(), HandlerInfo: p.up.Config.HandlerInfo(r.Handler.Addr()),
		TickLower: r.TickLower, TickUpper: r.TickUpper, Token: held, HeldIs0: heldIs0,
		Liquidity: r.TotalLiquidity.Int, Donations: r.DailyDonations, Compounds: r.DailyFeeCompounds,
	}
	if st.IsCall {
		st.Tick = clamm.CallStrikeTick(r.TickLower, r.TickUpper)
	}
	st.Free = new(big.Int).Sub(st.Liquidity, r.UsedLiquidity.Int)
	if st.Free.Sign() < 0 {
		// used above total is a legitimate on-chain state: reserveLiquidity
		// moves L out of totalLiquidity without checking liquidityUsed
		// (contract-behaviour.md 3.3). Nothing is buyable then, as the
		// handler's checked subtraction would revert.
		st.Free.SetInt64(0)
	}
	var err error
	if st.Amount, err = clamm.RangeAmount(r.TickLower, r.TickUpper, st.Liquidity, heldIs0); err != nil {
		return vocab.StrikeRange{}, vocab.SubgraphGarbage(err)
	}
	if st.FreeAmount, err = clamm.RangeAmount(r.TickLower, r.TickUpper, st.Free, heldIs0); err != nil {
		return vocab.StrikeRange{}, vocab.SubgraphGarbage(err)
	}
	return st, nil
}

// order sorts strikes by price, then handler name, handler, hook and pool
// (the same sort a client would need for a stable list; addresses compare
// as the checksummed text the answer shows).
func order(out []vocab.StrikeRange) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Price != b.Price {
			return a.Price < b.Price
		}
		if a.HandlerInfo.Name != b.HandlerInfo.Name {
			return a.HandlerInfo.Name < b.HandlerInfo.Name
		}
		if a.Handler != b.Handler {
			return a.Handler.Hex() < b.Handler.Hex()
		}
		if a.Hook != b.Hook {
			return a.Hook.Hex() < b.Hook.Hex()
		}
		return a.Pool.Hex() < b.Pool.Hex()
	})
}

// render is the strike as the strikes chain shows it: figures in the held
// token, the hook's rules, the APR of the last complete day before aprDay.
func renderStrike(st *vocab.StrikeRange, c *config.Chain, aprDay int64) (Strike, error) {
	apr, err := strikeAPR(st, aprDay)
	if err != nil {
		return Strike{}, vocab.SubgraphGarbage(err)
	}
	kind := "put"
	if st.IsCall {
		kind = "call"
	}
	dec := int(st.Token.Decimals)
	used := new(big.Int).Sub(st.Liquidity, st.Free)
	return Strike{
		Type:               kind,
		TotalLiquidity:     clamm.FormatUnits(st.Amount, dec),
		AvailableLiquidity: clamm.FormatUnits(st.FreeAmount, dec),
		Utilization:        clamm.Percent(used, st.Liquidity),
		APR:                apr,
		Handler:            vocab.Handler{Name: st.HandlerInfo.Name, Deprecated: st.HandlerInfo.Deprecated, Handler: vocab.HandlerRef{Address: st.Handler.Hex()}, Pool: st.Pool.Hex()},
		Token:              vocab.TokenOf(st.Token),
		Meta: StrikeMeta{
			Hook:                    st.Hook.Hex(),
			TickLower:               st.TickLower,
			TickUpper:               st.TickUpper,
			TotalTokenLiquidity:     st.Amount.String(),
			AvailableTokenLiquidity: st.FreeAmount.String(),
			TotalLiquidity:          st.Liquidity.String(),
			AvailableLiquidity:      st.Free.String(),
			HookRules:               vocab.HookRulesOf(c, st.Hook),
		},
	}, nil
}

// window is where a pool's strikes within reach lie: ranges whose tickLower
// is in [lo, hi], placed on either side of tick.
type window struct{ tick, lo, hi int }

func poolWindow(pv chain.PoolView, reachAbove, reachBelow int) window {
	base, sp := alignedTick(pv)
	return window{tick: pv.Tick, lo: max(base-reachBelow*sp, clamm.MinTick), hi: min(base+reachAbove*sp, clamm.MaxTick)}
}

// buyable reports whether the market can use the handler's liquidity now:
// whitelisted for this market by its position manager, not paused, and
// speaking the market's payload format (a V2 market sends the hook, which a
// V1 handler cannot decode, and the reverse). A handler whose format the
// gateway cannot tell is judged by the whitelist and pause alone.
func buyable(v *chain.StrikesView, handler common.Address) bool {
	h, ok := v.Handlers[handler]
	if !ok || !h.Whitelisted || h.Paused {
		return false
	}
	switch h.Format {
	case chain.HandlerFormatV1:
		return v.Version == chain.MarketV1
	case chain.HandlerFormatV2:
		return v.Version == chain.MarketV2
	}
	return true
}

// registryHandlers are the chain's registered handlers, read with the pool
// price so the common case needs no round trip after the subgraph's.
func registryHandlers(c *config.Chain) []common.Address { return sortedAddresses(c.Handlers) }

// sortedAddresses are a registry's addresses in ascending order.
func sortedAddresses[V any](m map[common.Address]V) []common.Address {
	out := make([]common.Address, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
	return out
}

// apr is the strike's APR in percent:
//
//	apr = (donated + compounded) / totalTokenLiquidity * 365 * 100
//
// where donated and compounded are the range's premium donations and fee
// compounds of the last complete UTC day before the subgraph's indexed block,
// each converted from liquidity units to the held token at the day's recorded
// sqrtPriceX96 (LiquidityAmounts.getAmountsForLiquidity, then the other
// token's part valued at that price). "0" when there is no record for that day.
func strikeAPR(st *vocab.StrikeRange, aprDay int64) (string, error) {
	if aprDay <= 0 || st.Amount.Sign() == 0 {
		return "0", nil
	}
	sa, err := clamm.SqrtRatioAtTick(st.TickLower)
	if err != nil {
		return "", err
	}
	sb, err := clamm.SqrtRatioAtTick(st.TickUpper)
	if err != nil {
		return "", err
	}
	earned := new(big.Int)
	add := func(l, sqrtP *big.Int, start int64) {
		if start < aprDay || start >= aprDay+day || l.Sign() <= 0 || sqrtP.Sign() <= 0 {
			return
		}
		a0, a1 := clamm.AmountsForLiquidity(sqrtP, sa, sb, l)
		earned.Add(earned, valueIn(a0, a1, sqrtP, st.HeldIs0))
	}
	for _, d := range st.Donations {
		add(d.Donation.Int, d.SqrtPriceX96.Int, d.Start)
	}
	for _, c := range st.Compounds {
		add(c.Compound.Int, c.SqrtPriceX96.Int, c.Start)
	}
	return clamm.Percent(earned.Mul(earned, big.NewInt(365)), st.Amount), nil
}

// valueIn expresses amounts (a0, a1) in token0 (heldIs0) or token1 at the
// pool price sqrtP, converting the other token's part at that price.
func valueIn(a0, a1, sqrtP *big.Int, heldIs0 bool) *big.Int {
	if heldIs0 {
		return new(big.Int).Add(a0, clamm.SwapAtPrice(a1, sqrtP, false))
	}
	return new(big.Int).Add(a1, clamm.SwapAtPrice(a0, sqrtP, true))
}

// lastCompleteDay is the start of the UTC day before the one holding ts.
func lastCompleteDay(ts int64) int64 {
	if ts <= 0 {
		return 0
	}
	return ts/day*day - day
}

// alignedTick is the start of the tick-spacing range holding the pool's
// current tick, and the spacing.
func alignedTick(pv chain.PoolView) (base, spacing int) {
	return floorDiv(pv.Tick, pv.TickSpacing) * pv.TickSpacing, pv.TickSpacing
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
