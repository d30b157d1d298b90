package chain

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// StrikesView is what the strikes chain reads from the chain on every miss:
// the market's immutables, the slot0 of each pool whose ranges it lists,
// and, per handler, whether the market can use it now.
type StrikesView struct {
	Info *MarketInfo
	// Version is MarketV1 or MarketV2, by name() (position.go's rule).
	Version         int
	PositionManager common.Address
	// Pools holds the prime pool and every other pool asked for (or
	// remembered for the market: pools.go), each with whether the market
	// approves it now.
	Pools map[common.Address]PoolView
	// Handlers holds every handler asked for.
	Handlers map[common.Address]HandlerView
}

// PoolView is a pool's current tick and price, its immutables, and
// whether the view's market approves it now (approvedPools(pool): mintOption
// reverts PoolNotApproved for a leg in a pool it does not approve).
type PoolView struct {
	PoolState
	TickSpacing    int
	Fee            uint32 // fee(): the pool's fee tier, hundredths of a basis point; 0 when it has no fee()
	Token0, Token1 common.Address
	Approved       bool
	// approvalRead: Approved was read in this view's round trips (it is
	// not, for the prime pool of a market read for the first time, until
	// CompleteView).
	approvalRead bool
}

// Handler payload formats, by the size of a tokenIds answer.
const (
	HandlerFormatUnknown = 0 // tokenIds reverted or answered another size
	HandlerFormatV1      = 1 // (pool, tickLower, tickUpper, liquidity): usable by V1 markets only
	HandlerFormatV2      = 2 // (pool, hook, tickLower, tickUpper, liquidity, hookData): V2 markets only
)

// HandlerView is what decides whether the market can use a handler now.
type HandlerView struct {
	Format int
	// Paused is the handler's paused(); a handler without one is not paused.
	Paused bool
	// Whitelisted is the market's position manager's
	// whitelistedHandlersWithApp(keccak256(abi.encode(handler, market))).
	Whitelisted bool
}

// fact is an immutable the strikes chain reads once per immutables TTL: a
// market's position manager and version, a pool's spacing and tokens, a
// handler's format (contract code does not change).
type fact struct {
	pm      common.Address
	version int
	pool    PoolView
	format  int
}

func (r *Reader) fact(key string) (fact, bool) {
	f, age, ok := r.facts.Peek(key)
	return f, ok && age < r.ttl
}

func marketFactKey(a common.Address) string  { return "m" + a.Hex() }
func poolFactKey(a common.Address) string    { return "p" + a.Hex() }
func handlerFactKey(a common.Address) string { return "h" + a.Hex() }

// strikesRead is one round of reads and where each answer sits.
type strikesRead struct {
	calls      []contracts.ChainedCall
	marketN    int // marketReads at the front when the immutables were not cached
	pmAt       int // positionManager(), then name(), when not cached; -1 otherwise
	pools      []poolAt
	approvals  []approvalAt // approvedPools(pool) of the market (pools.go)
	handlers   []handlerAt
	view       *StrikesView
	pmFromCall bool // whitelist calls target the answer of pmAt
}

type poolAt struct {
	pool              common.Address
	slot0, immutables int // immutables: tickSpacing, token0, token1, fee from here; -1 when cached
}

type handlerAt struct {
	handler                      common.Address
	paused, whitelisted, tokenID int // tokenID -1 when the format is cached
}

// StrikesView reads, in one round trip, the prime pool's slot0 and the
// market's immutables (when not cached), the slot0 of each of pools, and
// each handler's pause flag, whitelisting for this market and (once)
// payload format. Handlers seen in earlier answers for this market (see
// CompleteView) are read too, so a market's handlers cost no extra round
// trip after the first time they appear.
//
// Pause and whitelist can change at any block and are read afresh on every
// call, in the round trip the pool price needs anyway: they are as fresh as
// the strikes chain's own cache TTL (CLAMM_STRIKES_TTL), no separate TTL.
// Everything else read here is immutable and cached for the immutables TTL.
func (r *Reader) StrikesView(ctx context.Context, market common.Address, pools, handlers []common.Address) (*StrikesView, error) {
	return r.readStrikesView(ctx, market, r.newStrikesRead(market, pools, handlers))
}

// readStrikesView runs rd's round on its own and decodes it.
func (r *Reader) readStrikesView(ctx context.Context, market common.Address, rd *strikesRead) (*StrikesView, error) {
	res, err := r.runStrikesRead(ctx, rd)
	if err != nil {
		return nil, notAMarket(market, err)
	}
	return r.decodeStrikesView(market, rd, res)
}

// StrikesViews is StrikesView for several markets (no pools beyond their
// own) in one round trip: each market whose immutables are cached is one
// Multicall3 aggregate3, all of them in one JSON-RPC batch. A market seen
// for the first time needs a ChainedRead of its own and is read alone
// (once per immutables TTL). errs[i] is market i's own failure (not a
// market, another contract kind, a state that cannot be); err is the
// round trip's. A market the chain does not answer as an option market
// (MARKET_NOT_FOUND, MARKET_UNSUPPORTED) is remembered for
// unreadableMarketAge and not read again meanwhile: its error is given
// again at once (a list naming one such market among a thousand read it
// alone on every miss).
func (r *Reader) StrikesViews(ctx context.Context, markets, handlers []common.Address) (views []*StrikesView, errs []error, err error) {
	views, errs = make([]*StrikesView, len(markets)), make([]error, len(markets))
	reads := make([]*strikesRead, len(markets))
	var warm []int
	var batches [][]Call
	var cold sync.WaitGroup
	limit := make(chan struct{}, coldMarketReads)
	defer func() { r.rememberUnreadable(markets, reads, errs) }()
	for i, m := range markets {
		if e, age, ok := r.unreadable.Peek(m.Hex()); ok && age < unreadableMarketAge {
			errs[i] = e
			continue
		}
		reads[i] = r.newStrikesRead(m, nil, handlers)
		if !reads[i].chained() {
			warm = append(warm, i)
			batches = append(batches, reads[i].plain())
			continue
		}
		cold.Add(1)
		go func() {
			defer cold.Done()
			limit <- struct{}{}
			defer func() { <-limit }()
			views[i], errs[i] = r.readStrikesView(ctx, m, reads[i])
		}()
	}
	res, err := r.aggregateBatch(ctx, batches)
	cold.Wait()
	if err != nil {
		return nil, nil, err
	}
	for k, i := range warm {
		views[i], errs[i] = r.decodeStrikesView(markets[i], reads[i], res[k])
	}
	return views, errs, nil
}

// unreadableMarketAge is how long StrikesViews remembers a market the
// chain does not answer as an option market: long enough that a list
// served from the subgraph does not read it on every miss, short enough
// that a market the node could not show yet (one just created, a node
// behind) is read again soon.
const unreadableMarketAge = time.Minute

// rememberUnreadable remembers the markets read (reads[i] set: not those
// remembered already, whose age runs on) whose errs say the chain does not
// answer them as option markets.
func (r *Reader) rememberUnreadable(markets []common.Address, reads []*strikesRead, errs []error) {
	for i, err := range errs {
		if err == nil || reads[i] == nil {
			continue
		}
		if c := problem.As(err).Code; c == problem.MarketNotFound || c == problem.MarketUnsupported {
			r.unreadable.Set(markets[i].Hex(), err, cache.Policy{TTL: unreadableMarketAge})
		}
	}
}

// coldMarketReads bounds the markets seen for the first time that
// StrikesViews reads at once, each in its own ChainedRead.
const coldMarketReads = 4

// newStrikesRead lays out StrikesView's one round of reads.
func (r *Reader) newStrikesRead(market common.Address, pools, handlers []common.Address) *strikesRead {
	rd := &strikesRead{pmAt: -1, view: &StrikesView{Pools: map[common.Address]PoolView{}, Handlers: map[common.Address]HandlerView{}}}
	info, age, cached := r.immutables.Peek(market.Hex())
	if cached && age < r.ttl {
		rd.view.Info = info
		rd.calls = append(rd.calls, contracts.ChainedCall{Target: info.Pool, Data: pack(contracts.Pool, "slot0")})
		rd.addApproval(market, info.Pool)
	} else {
		rd.calls = marketReads(market)
		rd.marketN = len(rd.calls)
	}
	if f, ok := r.fact(marketFactKey(market)); ok {
		rd.view.PositionManager, rd.view.Version = f.pm, f.version
	} else {
		rd.pmAt = len(rd.calls)
		rd.pmFromCall = true
		rd.calls = append(rd.calls,
			contracts.ChainedCall{Target: market, Data: pack(contracts.MarketPositionManager, "positionManager")},
			contracts.ChainedCall{Target: market, Data: pack(contracts.OptionMarketV2, "name")})
	}
	for _, p := range r.poolsFor(market, pools) {
		rd.addPool(r, market, p)
	}
	rd.addHandlers(r, market, r.handlersFor(market, handlers))
	return rd
}

// decodeStrikesView reads the answers to rd's round into its view.
func (r *Reader) decodeStrikesView(market common.Address, rd *strikesRead, res []Result) (*StrikesView, error) {
	v := rd.view
	if rd.marketN > 0 {
		info, st, err := r.decodeMarket(market, rd.calls[:rd.marketN], res[:rd.marketN])
		if err != nil {
			return nil, err
		}
		v.Info = info
		v.Pools[info.Pool] = PoolView{PoolState: st, TickSpacing: info.TickSpacing, Fee: info.Fee, Token0: info.Token0, Token1: info.Token1}
	} else {
		if !res[0].OK {
			return nil, badMarketState(&CallFailedError{Index: 0, Target: v.Info.Pool, Revert: res[0].Data})
		}
		st, err := r.decodeSlot0(v.Info.Pool, res[0].Data)
		if err != nil {
			return nil, upstreamGarbage(fmt.Errorf("slot0 of %s: %w", v.Info.Pool.Hex(), err))
		}
		v.Pools[v.Info.Pool] = PoolView{PoolState: st, TickSpacing: v.Info.TickSpacing, Fee: v.Info.Fee, Token0: v.Info.Token0, Token1: v.Info.Token1}
	}
	if rd.pmAt >= 0 {
		if err := r.decodeMarketFacts(market, res[rd.pmAt], res[rd.pmAt+1], v); err != nil {
			return nil, err
		}
	}
	if err := r.decodePools(rd, res); err != nil {
		return nil, err
	}
	if err := rd.decodeApprovals(res); err != nil {
		return nil, err
	}
	return v, r.decodeHandlers(rd, res)
}

func (rd *strikesRead) addPool(r *Reader, market, p common.Address) {
	if p == (common.Address{}) || slices.ContainsFunc(rd.pools, func(x poolAt) bool { return x.pool == p }) {
		return
	}
	if rd.view.Info != nil && p == rd.view.Info.Pool {
		return // the prime pool is read with the market
	}
	at := poolAt{pool: p, slot0: len(rd.calls), immutables: -1}
	rd.calls = append(rd.calls, contracts.ChainedCall{Target: p, Data: pack(contracts.Pool, "slot0")})
	if f, ok := r.fact(poolFactKey(p)); ok {
		rd.view.Pools[p] = f.pool
	} else {
		at.immutables = len(rd.calls)
		rd.calls = append(rd.calls,
			contracts.ChainedCall{Target: p, Data: pack(contracts.Pool, "tickSpacing")},
			contracts.ChainedCall{Target: p, Data: pack(contracts.Pool, "token0")},
			contracts.ChainedCall{Target: p, Data: pack(contracts.Pool, "token1")},
			contracts.ChainedCall{Target: p, Data: pack(contracts.Pool, "fee")})
	}
	rd.pools = append(rd.pools, at)
	rd.addApproval(market, p)
}

func (rd *strikesRead) addHandlers(r *Reader, market common.Address, handlers []common.Address) {
	for _, h := range handlers {
		at := handlerAt{handler: h, paused: len(rd.calls), tokenID: -1}
		rd.calls = append(rd.calls, contracts.ChainedCall{Target: h, Data: pack(contracts.Handler, "paused")})
		at.whitelisted = len(rd.calls)
		wl := contracts.ChainedCall{Target: rd.view.PositionManager,
			Data: pack(contracts.PositionManager, "whitelistedHandlersWithApp", contracts.WhitelistKey(h, market))}
		if rd.pmFromCall {
			wl.Target, wl.TargetFrom = common.Address{}, big.NewInt(int64(rd.pmAt+1))
		}
		rd.calls = append(rd.calls, wl)
		if _, ok := r.fact(handlerFactKey(h)); !ok {
			at.tokenID = len(rd.calls)
			rd.calls = append(rd.calls, contracts.ChainedCall{Target: h, Data: pack(contracts.Handler, "tokenIds", new(big.Int))})
		}
		rd.handlers = append(rd.handlers, at)
	}
}

// runStrikesRead sends the round: as a ChainedRead when a target comes
// from an earlier answer (a market seen for the first time), else as one
// Multicall3 aggregate3.
func (r *Reader) runStrikesRead(ctx context.Context, rd *strikesRead) ([]Result, error) {
	if rd.chained() {
		return r.chainedReadOrRounds(ctx, rd.calls)
	}
	return r.AggregateResults(ctx, rd.plain())
}

// chained says whether a target of the round comes from an earlier answer.
func (rd *strikesRead) chained() bool {
	return slices.ContainsFunc(rd.calls, func(c contracts.ChainedCall) bool { return c.TargetFrom != nil && c.TargetFrom.Sign() != 0 })
}

// plain is the round as Multicall3 calls (when it is not chained).
func (rd *strikesRead) plain() []Call {
	calls := make([]Call, len(rd.calls))
	for i, c := range rd.calls {
		calls[i] = Call{Target: c.Target, Data: c.Data}
	}
	return calls
}

func (r *Reader) decodeMarketFacts(market common.Address, pm, name Result, v *StrikesView) error {
	if !pm.OK || len(pm.Data) == 0 {
		return unsupported(market, "the market does not answer positionManager()", &CallFailedError{Target: market, Revert: pm.Data})
	}
	addr, err := unpackAddress(contracts.MarketPositionManager, "positionManager", pm.Data)
	if err != nil || addr == (common.Address{}) {
		return unsupported(market, "the market's positionManager() is not an address", err)
	}
	v.PositionManager, v.Version = addr, marketVersion(name, Result{})
	r.facts.Set(marketFactKey(market), fact{pm: addr, version: v.Version}, cache.Policy{TTL: r.ttl})
	return nil
}

func (r *Reader) decodePools(rd *strikesRead, res []Result) error {
	v := rd.view
	for _, at := range rd.pools {
		pv := v.Pools[at.pool]
		if at.immutables >= 0 {
			var err error
			if pv, err = decodePoolFacts(res[at.immutables : at.immutables+3]); err != nil {
				return unsupported(v.Info.Market, fmt.Sprintf("market pool %s does not answer tickSpacing/token0/token1", at.pool.Hex()), err)
			}
			// The fee only describes the pool (option markets): a DEX
			// whose pools have no fee() getter is listed with 0.
			pv.Fee, _ = decodePoolFee(res[at.immutables+3])
			pair := map[common.Address]bool{v.Info.Token0: true, v.Info.Token1: true}
			if !pair[pv.Token0] || !pair[pv.Token1] || pv.Token0 == pv.Token1 {
				return unsupported(v.Info.Market, fmt.Sprintf("market pool %s does not hold the market's assets", at.pool.Hex()), nil)
			}
			r.facts.Set(poolFactKey(at.pool), fact{pool: pv}, cache.Policy{TTL: r.ttl})
		}
		if !res[at.slot0].OK {
			return unsupported(v.Info.Market, fmt.Sprintf("market pool %s does not answer slot0", at.pool.Hex()), nil)
		}
		st, err := r.decodeSlot0(at.pool, res[at.slot0].Data)
		if err != nil {
			return upstreamGarbage(fmt.Errorf("slot0 of %s: %w", at.pool.Hex(), err))
		}
		pv.PoolState = st
		v.Pools[at.pool] = pv
	}
	return nil
}

func decodePoolFacts(res []Result) (PoolView, error) {
	var pv PoolView
	for i, r := range res {
		if !r.OK {
			return pv, &CallFailedError{Index: i, Revert: r.Data}
		}
	}
	spacing, err := unpackOne[*big.Int](contracts.Pool, "tickSpacing", res[0].Data)
	if err != nil {
		return pv, err
	}
	if pv.TickSpacing = int(spacing.Int64()); !spacing.IsInt64() || pv.TickSpacing <= 0 {
		return pv, fmt.Errorf("tick spacing %s", spacing)
	}
	if pv.Token0, err = unpackAddress(contracts.Pool, "token0", res[1].Data); err != nil {
		return pv, err
	}
	pv.Token1, err = unpackAddress(contracts.Pool, "token1", res[2].Data)
	return pv, err
}

// decodePoolFee is a pool's fee() answer: its fee tier, below 100%.
func decodePoolFee(r Result) (uint32, error) {
	if !r.OK {
		return 0, &CallFailedError{Revert: r.Data}
	}
	fee, err := unpackOne[*big.Int](contracts.Pool, "fee", r.Data)
	if err != nil {
		return 0, err
	}
	if !fee.IsUint64() || fee.Uint64() >= 1_000_000 {
		return 0, fmt.Errorf("fee %s", fee)
	}
	return uint32(fee.Uint64()), nil
}

func (r *Reader) decodeHandlers(rd *strikesRead, res []Result) error {
	v := rd.view
	for _, at := range rd.handlers {
		var hv HandlerView
		// A handler whose paused() reverts or answers something other than
		// a bool has no OpenZeppelin pause (no whenNotPaused to stop a
		// purchase): not paused. Failing the whole chain for one such
		// remembered handler would last the immutables TTL.
		if p := res[at.paused]; p.OK {
			paused, _ := unpackOne[bool](contracts.Handler, "paused", p.Data)
			hv.Paused = paused
		}
		wl := res[at.whitelisted]
		if !wl.OK || len(wl.Data) == 0 {
			return unsupported(v.Info.Market, fmt.Sprintf("the market's position manager %s does not answer whitelistedHandlersWithApp", v.PositionManager.Hex()),
				&CallFailedError{Index: at.whitelisted, Target: v.PositionManager, Revert: wl.Data})
		}
		ok, err := unpackOne[bool](contracts.PositionManager, "whitelistedHandlersWithApp", wl.Data)
		if err != nil {
			return upstreamGarbage(fmt.Errorf("whitelistedHandlersWithApp: %w", err))
		}
		hv.Whitelisted = ok
		if at.tokenID >= 0 {
			hv.Format = handlerFormat(res[at.tokenID])
			r.facts.Set(handlerFactKey(at.handler), fact{format: hv.Format}, cache.Policy{TTL: r.ttl})
		} else {
			f, _ := r.fact(handlerFactKey(at.handler))
			hv.Format = f.format
		}
		v.Handlers[at.handler] = hv
	}
	return nil
}

// handlerFormat tells the handler's generation by the size of its
// tokenIds(0) answer: V1's TokenIdInfo has 12 static words, V2's and V3's 13.
func handlerFormat(res Result) int {
	if !res.OK {
		return HandlerFormatUnknown
	}
	switch len(res.Data) {
	case contracts.HandlerV1Words * 32:
		return HandlerFormatV1
	case contracts.HandlerV2Words * 32:
		return HandlerFormatV2
	}
	return HandlerFormatUnknown
}

// handlersFor is the handlers asked for plus those remembered for the market.
func (r *Reader) handlersFor(market common.Address, handlers []common.Address) []common.Address {
	seen, _, _ := r.seenHandlers.Peek(market.Hex())
	out := make([]common.Address, 0, len(handlers)+len(seen))
	for _, h := range append(append([]common.Address{}, handlers...), seen...) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// maxSeenHandlers bounds the handlers remembered per market, so a subgraph
// answering garbage cannot grow the first round without bound.
const maxSeenHandlers = 64

func (r *Reader) rememberHandlers(market common.Address, handlers []common.Address) {
	seen, _, _ := r.seenHandlers.Peek(market.Hex())
	next := append([]common.Address{}, seen...)
	for _, h := range handlers {
		if len(next) < maxSeenHandlers && !slices.Contains(next, h) {
			next = append(next, h)
		}
	}
	r.seenHandlers.Set(market.Hex(), next, cache.Policy{TTL: r.ttl})
}

func unsupported(market common.Address, msg string, err error) error {
	if err == nil {
		err = fmt.Errorf("%s", msg)
	}
	return problem.Wrap(problem.MarketUnsupported, err, "market %s: %s", market.Hex(), msg).On("optionMarket")
}

// factsCacheEntries bounds the strikes chain's immutables: a market, its
// pools and its handlers each take one entry.
const factsCacheEntries = 8192

func newFactCaches(fill time.Duration) (*cache.Cache[fact], *cache.Cache[[]common.Address], *cache.Cache[error]) {
	return cache.New[fact](cache.Options{MaxEntries: factsCacheEntries, FillTimeout: fill}),
		cache.New[[]common.Address](cache.Options{MaxEntries: 4096, FillTimeout: fill}),
		cache.New[error](cache.Options{MaxEntries: 4096, FillTimeout: fill})
}
