package market

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// OptionMarkets is a chain's option markets and the subgraph block behind them.
type OptionMarkets struct {
	Markets []OptionMarket
	Block   uint64
	time    int64 // the subgraph block's timestamp (the hosted 24h sums end there)
}

// OptionMarket is one option market: what it trades, the pool it prices
// against, what a purchase on it can use now, and its sums.
type OptionMarket struct {
	Address string `json:"address"`
	// Version is "V1" (DopexV2OptionMarket, deprecated) or "V2".
	Version   string      `json:"version"`
	CallAsset vocab.Token `json:"callAsset"`
	PutAsset  vocab.Token `json:"putAsset"`
	PrimePool Pool        `json:"primePool"`
	// Pools are the pools the market approves now (approvedPools), which
	// its purchases, strikes and TVL cover: the prime pool first when
	// approved, then the others by address.
	Pools []Pool `json:"pools"`
	// Handlers are the chain's registered handlers the market can buy
	// from now (buyable: whitelisted for it, not paused, its version).
	Handlers []MarketHandler `json:"handlers"`
	// Hooks are the chain's registered hooks a V2 market's ranges may sit
	// behind, whether each admits the market now, and what each requires
	// of a purchase (none for V1, whose handlers have no hooks).
	Hooks  []MarketHook `json:"hooks"`
	Totals MarketTotals `json:"totals"`
	// Swappers are the chain's swappers an exercise of the market's
	// options can go through, the list (and order) the exercise prepare's
	// swapperChoices gives: the configured ones by id, then those the
	// chain's own exercises used, with their note. The same on every
	// market of the chain, read at the answer's block. When the learned
	// ones could not be read, the configured ones alone, SwappersUnknown
	// saying why: an add-on never fails the list. The service fills them
	// (the trade side's list; this side cannot read it).
	Swappers        []MarketSwapper `json:"swappers"`
	SwappersUnknown string          `json:"swappersUnknown,omitempty"`
}

// MarketSwapper is one swapper of the chain: what swapperId takes to
// choose it (the configured id, or a learned contract's address), its
// kind and address, where the gateway knows it from ("configured" or
// "learned"), a learned one's first exercise and note, whether the
// gateway can prepare an exercise through it, and why auto leaves it out.
type MarketSwapper struct {
	ID            string `json:"id"`
	Kind          string `json:"kind"`
	Address       string `json:"address"`
	Source        string `json:"source"`
	FirstExercise string `json:"firstExercise,omitempty"`
	Note          string `json:"note,omitempty"`
	Usable        bool   `json:"usable"`
	// Error is, as on the exercise prepare's swapperChoices, why auto and
	// direct leave a configured swapper out: it failed the swapper check
	// (no code, or not its kind). Named by its id it is still prepared
	// through, so it stays usable.
	Error string `json:"error,omitempty"`
}

// MarketList is the markets list as /clamm/option-markets answers it: a
// JSON array, degraded (cached briefly, never stale) when a market's
// swappers are unknown.
type MarketList []OptionMarket

// Degraded says whether an add-on of the list was left unknown.
func (l MarketList) Degraded() bool {
	for _, m := range l {
		if m.SwappersUnknown != "" {
			return true
		}
	}
	return false
}

// Pool is a pool of the market's pair: its fee tier (hundredths of a
// basis point) and tick spacing. Inverted is true when the call asset is
// the pool's token1 (higher ticks are then a cheaper call asset).
type Pool struct {
	Address     string `json:"address"`
	Fee         uint32 `json:"fee"`
	TickSpacing int    `json:"tickSpacing"`
	Inverted    bool   `json:"inverted"`
}

// MarketHandler is a handler a purchase on the market can use now.
type MarketHandler struct {
	Name       string `json:"name"`
	Address    string `json:"address"`
	Deprecated bool   `json:"deprecated"`
}

// MarketHook is a registered hook, whether it admits the market now, and
// the rules it enforces.
type MarketHook struct {
	Address string `json:"address"`
	// AdmitsMarket: onPositionUse, called as the market's mintOption
	// would call it through a handler for an option of the hook's longest
	// ttl (one day when it has no bound) on the call side now, does not
	// revert. False as well for an address without a hook deployed.
	AdmitsMarket bool `json:"admitsMarket"`
	vocab.HookRules
}

// MarketTotals are the market's sums since it was created and over the
// last complete UTC day before the subgraph's block.
type MarketTotals struct {
	AllTime MarketSums `json:"allTime"`
	LastDay DaySums    `json:"lastDay"`
}

// MarketSums are purchase and exercise counts and raw amounts: call
// figures in the call asset's base units, put figures in the put asset's.
// Volume is the collateral the options locked (LogMintOption's
// totalAssetWithdrawn).
type MarketSums struct {
	Purchases        int    `json:"purchases"`
	Exercises        int    `json:"exercises"`
	CallVolume       string `json:"callVolume"`
	PutVolume        string `json:"putVolume"`
	CallPremium      string `json:"callPremium"`
	PutPremium       string `json:"putPremium"`
	CallProtocolFees string `json:"callProtocolFees"`
	PutProtocolFees  string `json:"putProtocolFees"`
}

// DaySums are one UTC day's sums; Start is the day's start, unix seconds.
type DaySums struct {
	Start string `json:"start"`
	MarketSums
}

// OptionMarkets returns every option market the chain's subgraph indexes,
// ordered by address, each with its chain facts read at the head (assets,
// prime pool, which registered handlers it can use now) in one round trip
// per market, as the strikes chain reads them, and every registered hook's
// admission of every V2 market in one more round trip for the chain.
func (s *Market) OptionMarkets(ctx context.Context, chainID uint64) (OptionMarkets, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return OptionMarkets{}, err
	}
	markets, meta, err := up.Subgraph.OptionMarkets(ctx)
	if err != nil {
		return OptionMarkets{}, err
	}
	if meta.Block == 0 {
		// An index before its first commit, or one that failed before
		// it (/readyz says why): not the query document's fault.
		return OptionMarkets{}, block.NoBlockYet()
	}
	if meta.Timestamp <= 0 {
		// Without the indexed block's time there is no "last complete
		// day" (an operator's query document may have dropped it).
		return OptionMarkets{}, problem.New(problem.SubgraphError, "the subgraph's _meta names no block timestamp; the option-markets document must select _meta { block { number timestamp } }")
	}
	handlers := registryHandlers(up.Config)
	markets, views, err := marketViews(ctx, up, markets, handlers)
	if err != nil {
		return OptionMarkets{}, err
	}
	for i, m := range markets {
		if err := sameMarket(m, views[i]); err != nil {
			return OptionMarkets{}, err // before asking the hooks about it
		}
	}
	if err := approvedPools(ctx, up, markets, views); err != nil {
		return OptionMarkets{}, err
	}
	hooks := sortedAddresses(up.Config.Hooks)
	admits, err := s.probeHooks(ctx, up, views, hooks)
	if err != nil {
		return OptionMarkets{}, err
	}
	f := marketFacts{up: up, handlers: handlers, hooks: hooks, admits: admits, day: lastCompleteDay(meta.Timestamp)}
	out := make([]OptionMarket, len(markets))
	for i, m := range markets {
		out[i] = f.market(m, views[i])
	}
	return OptionMarkets{Markets: out, Block: meta.Block, time: meta.Timestamp}, nil
}

// marketViews reads every market's chain facts at the head in one round
// trip (chain.Reader.StrikesViews: one aggregate3 per market, one JSON-RPC
// batch; a market seen for the first time is read once on its own), and
// returns the markets it could read with their views. A market the
// subgraph lists but the chain does not show as an option market is left
// out rather than failing the page (one such market among a thousand made
// the whole list 502 on every miss); the reader remembers it for a while
// and does not read it meanwhile. Any other failure fails the page.
func marketViews(ctx context.Context, up *vocab.Upstreams, markets []subgraph.Market, handlers []common.Address) ([]subgraph.Market, []*chain.StrikesView, error) {
	addrs := make([]common.Address, len(markets))
	for i, m := range markets {
		addrs[i] = m.ID.Addr()
	}
	views, errs, err := up.Chain.StrikesViews(ctx, addrs, handlers)
	if err != nil {
		return nil, nil, err
	}
	kept, keptViews := markets[:0:0], views[:0:0]
	for i, err := range errs {
		switch {
		case err == nil:
			kept, keptViews = append(kept, markets[i]), append(keptViews, views[i])
		case notCounted(err): // left out, as chain-wide answers leave it out
		default:
			return nil, nil, err
		}
	}
	return kept, keptViews, nil
}

// marketFacts are what every market's answer is built from beside its own
// view: the chain's registries, the hooks' admissions, the last complete day.
type marketFacts struct {
	up       *vocab.Upstreams
	handlers []common.Address
	hooks    []common.Address
	admits   map[[2]common.Address]bool
	day      int64
}

// market is one market's answer: its assets and prime pool, the registered
// handlers it can use now, every hook's admission (V2), its totals.
func (f marketFacts) market(m subgraph.Market, v *chain.StrikesView) OptionMarket {
	info := v.Info
	om := OptionMarket{
		Address:   m.ID.Addr().Hex(),
		Version:   "V" + strconv.Itoa(m.Version),
		CallAsset: vocab.TokenOf(info.CallAsset),
		PutAsset:  vocab.TokenOf(info.PutAsset),
		PrimePool: Pool{Address: info.Pool.Hex(), Fee: info.Fee, TickSpacing: info.TickSpacing, Inverted: !info.Token0IsCall()},
		Pools:     []Pool{},
		Handlers:  []MarketHandler{},
		Hooks:     []MarketHook{},
		Totals:    MarketTotals{AllTime: sums(m.MarketSums), LastDay: DaySums{Start: strconv.FormatInt(f.day, 10), MarketSums: zeroSums}},
	}
	for _, p := range v.ApprovedPools() {
		pv := v.Pools[p]
		om.Pools = append(om.Pools, Pool{Address: p.Hex(), Fee: pv.Fee, TickSpacing: pv.TickSpacing, Inverted: !info.Token0IsCall()})
	}
	for _, h := range f.handlers {
		if buyable(v, h) {
			hi := f.up.Config.HandlerInfo(h)
			om.Handlers = append(om.Handlers, MarketHandler{Name: hi.Name, Address: h.Hex(), Deprecated: hi.Deprecated})
		}
	}
	if v.Version == chain.MarketV2 {
		for _, h := range f.hooks {
			om.Hooks = append(om.Hooks, MarketHook{Address: h.Hex(), AdmitsMarket: f.admits[[2]common.Address{info.Market, h}], HookRules: vocab.HookRulesOf(f.up.Config, h)})
		}
	}
	for _, d := range m.DayData {
		if d.Start == f.day {
			om.Totals.LastDay.MarketSums = sums(d.MarketSums)
		}
	}
	return om
}

// approvedPools completes each market's view with the pools the subgraph
// names as approved that the view lacks, and the approvals it has not read
// (a market read for the first time): chain.Reader.CompleteView, for every
// market at once, each a round trip only when it has something to read.
func approvedPools(ctx context.Context, up *vocab.Upstreams, markets []subgraph.Market, views []*chain.StrikesView) error {
	g, gctx := errgroup.WithContext(ctx)
	for i, m := range markets {
		g.Go(func() error { return up.Chain.CompleteView(gctx, views[i], m.ApprovedPools(), nil) })
	}
	return g.Wait()
}

// sameMarket refuses a subgraph Market the chain contradicts: another
// version, prime pool or asset than the contract's own getters answer.
func sameMarket(m subgraph.Market, v *chain.StrikesView) error {
	info := v.Info
	if m.Version == v.Version && info.Pool == m.PrimePool.ID.Addr() && info.CallAsset.Address == m.CallAsset.Addr() && info.PutAsset.Address == m.PutAsset.Addr() {
		return nil
	}
	return problem.New(problem.SubgraphError,
		"the subgraph's market %s (V%d, pool %s, call %s, put %s) is not the chain's (V%d, pool %s, call %s, put %s)",
		m.ID.Addr().Hex(), m.Version, m.PrimePool.ID.Addr().Hex(), m.CallAsset.Addr().Hex(), m.PutAsset.Addr().Hex(),
		v.Version, info.Pool.Hex(), info.CallAsset.Address.Hex(), info.PutAsset.Address.Hex())
}

// probeHooks asks every registered hook, for every V2 market, whether it
// admits the market now, in one round trip for the chain: an option of the
// hook's longest ttl (a day when it has none) on the first call-side range
// of the market's prime pool.
func (s *Market) probeHooks(ctx context.Context, up *vocab.Upstreams, views []*chain.StrikesView, hooks []common.Address) (map[[2]common.Address]bool, error) {
	var qs []chain.HookQuestion
	for _, v := range views {
		if v.Version != chain.MarketV2 {
			continue
		}
		info, pv := v.Info, v.Pools[v.Info.Pool]
		lo, hi := callRange(pv, info.Token0IsCall())
		for _, h := range hooks {
			ttl := uint64(86400)
			if r := vocab.HookRulesOf(up.Config, h); r.MaxTTL != nil {
				ttl = uint64(*r.MaxTTL)
			}
			qs = append(qs, chain.HookQuestion{Hook: h, Market: info.Market, Pool: info.Pool, TTL: ttl, TickLower: lo, TickUpper: hi})
		}
	}
	if len(qs) == 0 {
		return nil, nil
	}
	answers, err := up.Chain.ProbeHooks(ctx, qs)
	if err != nil {
		return nil, err
	}
	if len(answers) != len(qs) {
		return nil, fmt.Errorf("%d hook answers for %d questions", len(answers), len(qs))
	}
	out := make(map[[2]common.Address]bool, len(qs))
	for i, q := range qs {
		out[[2]common.Address{q.Market, q.Hook}] = answers[i].Admits
	}
	return out, nil
}

// callRange is the first range of a pool on the call side of its current
// tick: above it when the call asset is token0, below it otherwise.
func callRange(pv chain.PoolView, token0IsCall bool) (lo, hi int) {
	base, sp := alignedTick(pv)
	if token0IsCall {
		return base + sp, base + 2*sp
	}
	return base - sp, base
}

var zeroSums = MarketSums{CallVolume: "0", PutVolume: "0", CallPremium: "0", PutPremium: "0", CallProtocolFees: "0", PutProtocolFees: "0"}

func sums(s subgraph.MarketSums) MarketSums {
	return MarketSums{
		Purchases: s.Purchases, Exercises: s.Exercises,
		CallVolume: s.CallVolume.String(), PutVolume: s.PutVolume.String(),
		CallPremium: s.CallPremium.String(), PutPremium: s.PutPremium.String(),
		CallProtocolFees: s.CallProtocolFees.String(), PutProtocolFees: s.PutProtocolFees.String(),
	}
}
