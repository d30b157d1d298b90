package service

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// StrikesRequest is a validated strikes-chain request.
type StrikesRequest struct {
	ChainID    uint64
	Market     common.Address
	CallsReach int
	PutsReach  int
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
	Type               string     `json:"type"`
	TotalLiquidity     string     `json:"totalLiquidity"`
	AvailableLiquidity string     `json:"availableLiquidity"`
	Utilization        string     `json:"utilization"`
	APR                string     `json:"apr"`
	Handler            Handler    `json:"handler"`
	Meta               StrikeMeta `json:"meta"`
	Token              Token      `json:"token"`
}

// Handler identifies where a strike's liquidity sits.
type Handler struct {
	Name       string     `json:"name"`
	Deprecated bool       `json:"deprecated"`
	Handler    HandlerRef `json:"handler"`
	Pool       string     `json:"pool"`
}

// HandlerRef is the inner handler object: the interface types it as an
// object, so it carries the handler contract's address.
type HandlerRef struct {
	Address string `json:"address"`
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
	HookRules HookRules `json:"hookRules"`
}

// HookRules is the machine-readable form of a range's hook: the rules its
// onPositionUse enforces at purchase (exercise is never gated by a hook).
type HookRules struct {
	// Name is "none" for a range without a hook, "unknown" for a hook the
	// gateway has no rules for, else the hook contract's name.
	Name string `json:"name"`
	// Known is false for an unknown hook: it may refuse any purchase.
	Known bool `json:"known"`
	// MaxTTL is the longest option ttl in seconds the hook accepts; nil: no bound.
	MaxTTL *int64 `json:"maxTtl"`
	// NoWeekends: purchases revert while the block's UTC day is a Saturday or Sunday.
	NoWeekends bool `json:"noWeekends"`
	// MinIV: purchases revert unless the market's optionPricing().ttlToVol(ttl)
	// is at least this; nil: no floor.
	MinIV *uint64 `json:"minIv"`
}

const day = 86400

// StrikesChain lists the strikes of a market within reach of the current
// tick (domain.md section 6) that the market can buy now: the typed
// strikes (strikesOf), each rendered under its price's key.
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
func (s *Service) StrikesChain(ctx context.Context, req StrikesRequest) (StrikesChain, error) {
	up, err := s.upstreams(req.ChainID, true)
	if err != nil {
		return StrikesChain{}, err
	}
	set, err := s.strikesOf(ctx, up, strikesAsk{market: req.Market, callsReach: req.CallsReach, putsReach: req.PutsReach})
	if err != nil {
		return StrikesChain{}, err
	}
	aprDay := lastCompleteDay(set.meta.Timestamp)
	entries := make([]StrikeEntry, len(set.strikes))
	for i, st := range set.strikes {
		w, err := st.render(up.Config, aprDay)
		if err != nil {
			return StrikesChain{}, err
		}
		entries[i] = StrikeEntry{clamm.FormatPrice(st.price): w}
	}
	return StrikesChain{Entries: entries, Block: set.meta.Block}, nil
}

// strikesAsk is what the typed strikes core reads: the strikes chain's
// windows (a reach each side), or the one strike a quote names (at).
type strikesAsk struct {
	market                common.Address
	callsReach, putsReach int
	// at, when set, asks for the ranges struck at one price on one side
	// only, wherever they lie: a quote reads no other strike.
	at *strikeAt
	// keepHooked keeps the ranges whose hook refuses the market now: a
	// purchase quote asks each hook itself, with the buyer's ttl, and says
	// which hook refuses and why instead of finding no liquidity.
	keepHooked bool
}

// strikeAt names a strike by its price (the strikes chain's key, put-asset
// units per call asset) and side.
type strikeAt struct {
	isCall bool
	price  float64
}

// strike is one range the market can buy, seen as a strike: the typed
// core the strikes chain renders and the quote and options chain consume.
type strike struct {
	isCall bool
	// tick is the strike tick: a call's upper tick, a put's lower tick
	// (the tick the market prices the strike at); price is the market's
	// price of it in whole put assets per call asset, the chain's key.
	tick                 int
	price                float64
	handler, pool, hook  common.Address
	handlerInfo          config.Handler
	tickLower, tickUpper int
	// token is the asset the range holds (token0 when heldIs0).
	token   chain.Token
	heldIs0 bool
	// liquidity and free are the range's total and free Uniswap liquidity
	// (free floored at 0); amount and freeAmount the same in token.
	liquidity, free    *big.Int
	amount, freeAmount *big.Int
	// daily are the range's premium donations and fee compounds (its APR).
	donations []subgraph.DailyRecord
	compounds []subgraph.DailyCompound
}

// strikeSet is the typed strikes of one ask, in the strikes chain's order,
// with the subgraph block they reflect and the market's view.
type strikeSet struct {
	strikes []strike
	meta    subgraph.Meta
	view    *chain.StrikesView
}

// strikesOf reads the strikes an ask names: the market's view (pool
// prices and approvals, which handlers it can use), the ranges of its pools
// from the subgraph with the pools the subgraph has the market approving
// (pools.go), which hooks admit it (unless keepHooked), and each range of
// a pool it approves placed on its side of its own pool's tick.
func (s *Service) strikesOf(ctx context.Context, up *Upstreams, ask strikesAsk) (*strikeSet, error) {
	p := &strikesPlan{up: up, byPool: map[common.Address]window{}}
	var err error
	if p.view, err = marketView(ctx, up, ask.market); err != nil {
		return nil, err
	}
	q, ok := p.windows(ask, p.view.PoolsToRead())
	if !ok {
		return &strikeSet{view: p.view}, nil // no tick has that price: no strike
	}
	if err := p.fetch(ctx, ask, q); err != nil {
		return nil, err
	}
	p.admitted = func(common.Address) bool { return true }
	if !ask.keepHooked {
		if p.admitted, err = s.hookAdmission(ctx, up, p.view, p.ranges); err != nil {
			return nil, err
		}
	}
	placed, err := p.place(ask.at)
	if err != nil {
		return nil, err
	}
	order(placed)
	return &strikeSet{strikes: placed, meta: p.meta, view: p.view}, nil
}

// strikesPlan is what strikesOf carries from phase to phase: the market's
// view, each pool's window, and the ranges the subgraph returned.
type strikesPlan struct {
	up     *Upstreams
	view   *chain.StrikesView        // with the pools the market approves (pools.go)
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
func (p *strikesPlan) windows(ask strikesAsk, pools []common.Address) (subgraph.StrikesQuery, bool) {
	info := p.view.Info
	reachAbove, reachBelow := ask.callsReach, ask.putsReach
	if !info.Token0IsCall() {
		reachAbove, reachBelow = ask.putsReach, ask.callsReach
	}
	var q subgraph.StrikesQuery
	for i, pool := range pools {
		w := poolWindow(p.view.Pools[pool], reachAbove, reachBelow)
		if ask.at != nil {
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
	if ask.at == nil {
		return q, true
	}
	t, ok := p.market().StrikeTick(ask.at.price)
	if !ok {
		return q, false
	}
	// A call is struck at its range's upper tick, a put at its lower.
	if ask.at.isCall {
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
func (p *strikesPlan) fetch(ctx context.Context, ask strikesAsk, q subgraph.StrikesQuery) error {
	q.Market = ask.market
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
func (p *strikesPlan) place(at *strikeAt) ([]strike, error) {
	info := p.view.Info
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := p.market()
	out := make([]strike, 0, len(p.ranges))
	for i := range p.ranges {
		r := &p.ranges[i]
		if r.TickLower >= r.TickUpper || r.TickLower < clamm.MinTick || r.TickUpper > clamm.MaxTick {
			return nil, subgraphGarbage(fmt.Errorf("strike %s has ticks [%d, %d]", r.ID, r.TickLower, r.TickUpper))
		}
		w, ok := p.byPool[r.Pool.Addr()]
		if !ok {
			return nil, subgraphGarbage(fmt.Errorf("strike %s is on pool %s, which was not asked for", r.ID, r.Pool.Addr().Hex()))
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
		if st.price = m.TickPrice(st.tick); at != nil && (at.isCall != st.isCall || at.price != st.price) {
			continue
		}
		out = append(out, st)
	}
	return out, nil
}

// strike is range r seen as a strike on the side holding held.
func (p *strikesPlan) strike(r *subgraph.Strike, held chain.Token, heldIs0 bool) (strike, error) {
	st := strike{
		isCall: held.Address == p.view.Info.CallAsset.Address, tick: clamm.PutStrikeTick(r.TickLower, r.TickUpper),
		handler: r.Handler.Addr(), pool: r.Pool.Addr(), hook: r.Hook.Addr(), handlerInfo: p.up.Config.HandlerInfo(r.Handler.Addr()),
		tickLower: r.TickLower, tickUpper: r.TickUpper, token: held, heldIs0: heldIs0,
		liquidity: r.TotalLiquidity.Int, donations: r.DailyDonations, compounds: r.DailyFeeCompounds,
	}
	if st.isCall {
		st.tick = clamm.CallStrikeTick(r.TickLower, r.TickUpper)
	}
	st.free = new(big.Int).Sub(st.liquidity, r.UsedLiquidity.Int)
	if st.free.Sign() < 0 {
		// used above total is a legitimate on-chain state: reserveLiquidity
		// moves L out of totalLiquidity without checking liquidityUsed
		// (contract-behaviour.md 3.3). Nothing is buyable then, as the
		// handler's checked subtraction would revert.
		st.free.SetInt64(0)
	}
	var err error
	if st.amount, err = clamm.RangeAmount(r.TickLower, r.TickUpper, st.liquidity, heldIs0); err != nil {
		return strike{}, subgraphGarbage(err)
	}
	if st.freeAmount, err = clamm.RangeAmount(r.TickLower, r.TickUpper, st.free, heldIs0); err != nil {
		return strike{}, subgraphGarbage(err)
	}
	return st, nil
}

// order sorts strikes by price, then handler name, handler, hook and pool
// (the same sort a client would need for a stable list; addresses compare
// as the checksummed text the answer shows).
func order(out []strike) {
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.price != b.price {
			return a.price < b.price
		}
		if a.handlerInfo.Name != b.handlerInfo.Name {
			return a.handlerInfo.Name < b.handlerInfo.Name
		}
		if a.handler != b.handler {
			return a.handler.Hex() < b.handler.Hex()
		}
		if a.hook != b.hook {
			return a.hook.Hex() < b.hook.Hex()
		}
		return a.pool.Hex() < b.pool.Hex()
	})
}

// render is the strike as the strikes chain shows it: figures in the held
// token, the hook's rules, the APR of the last complete day before aprDay.
func (st *strike) render(c *config.Chain, aprDay int64) (Strike, error) {
	apr, err := st.apr(aprDay)
	if err != nil {
		return Strike{}, subgraphGarbage(err)
	}
	kind := "put"
	if st.isCall {
		kind = "call"
	}
	dec := int(st.token.Decimals)
	used := new(big.Int).Sub(st.liquidity, st.free)
	return Strike{
		Type:               kind,
		TotalLiquidity:     clamm.FormatUnits(st.amount, dec),
		AvailableLiquidity: clamm.FormatUnits(st.freeAmount, dec),
		Utilization:        clamm.Percent(used, st.liquidity),
		APR:                apr,
		Handler:            Handler{Name: st.handlerInfo.Name, Deprecated: st.handlerInfo.Deprecated, Handler: HandlerRef{Address: st.handler.Hex()}, Pool: st.pool.Hex()},
		Token:              tokenJSON(st.token),
		Meta: StrikeMeta{
			Hook:                    st.hook.Hex(),
			TickLower:               st.tickLower,
			TickUpper:               st.tickUpper,
			TotalTokenLiquidity:     st.amount.String(),
			AvailableTokenLiquidity: st.freeAmount.String(),
			TotalLiquidity:          st.liquidity.String(),
			AvailableLiquidity:      st.free.String(),
			HookRules:               hookRules(c, st.hook),
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

// hookRules states what buying from a range with this hook requires: from
// the configuration's hooks registry; a hook not in it is "unknown" (its
// rules are not guessed).
func hookRules(c *config.Chain, hook common.Address) HookRules {
	if hook == (common.Address{}) {
		return HookRules{Name: "none", Known: true}
	}
	h, ok := c.Hooks[hook]
	if !ok {
		return HookRules{Name: "unknown", Known: false}
	}
	out := HookRules{Name: h.Name, Known: true, NoWeekends: h.NoWeekends}
	if h.MaxTTL > 0 {
		ttl := int64(h.MaxTTL.D() / time.Second)
		out.MaxTTL = &ttl
	}
	if h.MinIV > 0 {
		iv := h.MinIV
		out.MinIV = &iv
	}
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
func (st *strike) apr(aprDay int64) (string, error) {
	if aprDay <= 0 || st.amount.Sign() == 0 {
		return "0", nil
	}
	sa, err := clamm.SqrtRatioAtTick(st.tickLower)
	if err != nil {
		return "", err
	}
	sb, err := clamm.SqrtRatioAtTick(st.tickUpper)
	if err != nil {
		return "", err
	}
	earned := new(big.Int)
	add := func(l, sqrtP *big.Int, start int64) {
		if start < aprDay || start >= aprDay+day || l.Sign() <= 0 || sqrtP.Sign() <= 0 {
			return
		}
		a0, a1 := clamm.AmountsForLiquidity(sqrtP, sa, sb, l)
		earned.Add(earned, valueIn(a0, a1, sqrtP, st.heldIs0))
	}
	for _, d := range st.donations {
		add(d.Donation.Int, d.SqrtPriceX96.Int, d.Start)
	}
	for _, c := range st.compounds {
		add(c.Compound.Int, c.SqrtPriceX96.Int, c.Start)
	}
	return clamm.Percent(earned.Mul(earned, big.NewInt(365)), st.amount), nil
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

func subgraphGarbage(err error) error {
	return problem.Wrap(problem.SubgraphError, err, "the subgraph returned a strike that does not make sense")
}
