package scenario

import (
	"fmt"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// A scenario states a market's state at its head and the history of its
// options (mints, transfers, exercises) and of its ranges (daily donations
// and fee compounds). The subgraph's entities are what the compiled
// mappings make of the logs the real contracts emit for that history
// (index.go); this file writes those logs, in block and log order, with
// the contracts' own event signatures and argument order
// (stryke-xyz/clamm: DopexV2OptionMarketV2, DopexV2PositionManager,
// UniswapV3SingleTickLiquidityHandler(V2), ERC6909; Uniswap V3 pools;
// ERC20, ERC721). Where the scenario states an outcome without the
// transactions behind it, the history supplies the fewest transactions
// that produce it, by the rules below, and says so.
//
//   - Deposits: each range's liquidity is deposited by one of the named LPs
//     (LPs; shares as the handler mints them, ERC6909, or ERC1155 for the
//     V1 handler), two days before the scenario's first dated event: the
//     stated total less the donations and fee compounds that add to it
//     later. A
//     range an option used but the scenario does not list (its options
//     were all exercised) is deposited with what its options used and
//     emptied after its last exercise (a withdrawal of all shares but one,
//     which the handler's rounding leaves worth nothing); a listed range
//     with no liquidity is deposited with emptiedDeposit and emptied a day
//     later the same way.
//   - Fee compounds happen inside a later deposit by the other LP (the
//     handler compounds a range's fees before it mints), on the day stated,
//     at 02:00 UTC; donations at 04:00. Both are preceded by a swap that
//     moves the pool to the stated price (the scenario states prices, not
//     the trades that made them, so those swaps carry no amounts).
//   - Liquidity used beyond what the scenario's open options hold was
//     used by another app the position manager whitelisted for the handler
//     (OtherApp, which answers none of a market's getters, so the subgraph
//     records it and indexes nothing of it): its LogUsePosition just before
//     the head. The stated daily donations are OtherApp's too: unlike the
//     real mintOption, which donates each leg its share of the premium, the
//     scenario's purchases emit no LogDonation, so each range's donations
//     per day are exactly the stated ones.
//   - A purchase is mintOption's logs: the handlers' LogUsePosition per
//     leg, the ERC721 mint, LogMintOption. It is made at the prime pool's
//     head price (the scenario states no price at mint): a trade moves the
//     pool there just before. An option owned by another account than its
//     buyer moves an hour after its mint (or halfway to the head). An
//     exercise is exerciseOption's: per leg the collateral sent to the
//     swapper, the swap in the prime pool at the stated price (no fee, no
//     price impact), the proceeds back, LogUnusePosition; then the profit
//     to the owner and LogExerciseOption. A settlement is settleOption's
//     by the stated settler (expiry.go), an exercise delegate's update the
//     owner's updateExerciseDelegate.
//   - The market's owner approves its prime pool and each of its other
//     pools with updateAddress, one transaction each in the seconds after
//     the constructor: LogUpdateAddress (which names no pool; the
//     subgraph reads approvedPools, which the fake market answers at the
//     head).
//   - Every pool ends with a swap at its stated head price in the head block.

// LPs are the demo's liquidity providers: the accounts that deposit (and
// withdraw) every range of a scenario, in turn.
var LPs = []common.Address{
	common.HexToAddress("0xCA20100000000000000000000000000000000003"), // carol
	common.HexToAddress("0xDA7E000000000000000000000000000000000004"), // dave
}

// OtherApp is the app whose use of the scenario's ranges the scenario's
// options do not account for (see above).
var OtherApp = common.HexToAddress("0x00000000000000000000000000000000000A0A0A")

// trader moves pool prices between the scenario's events.
var trader = common.HexToAddress("0x0000000000000000000000000000000000007ade")

// emptiedDeposit is what an LP deposited in a listed range the scenario
// states empty, before withdrawing it (liquidity units).
var emptiedDeposit = big.NewInt(100000000000000000)

// blockRates are each chain's blocks per second as a fraction: Arbitrum
// One's 250 ms blocks, Mantle's 2 s. A scenario's exercises state their
// blocks by the same rule.
var blockRates = map[uint64][2]int64{42161: {4, 1}, 5000: {1, 2}}

const day = 86400

// tx is one transaction of the history. Its logs are written when the
// history is replayed in order (build), because a deposit's shares depend
// on the range's state at that moment.
type tx struct {
	ts       int64
	block    uint64 // 0: from ts
	hash     common.Hash
	from, to common.Address
	build    func(block uint64) ([]types.Log, error)
}

// rangeKey names a handler range.
type rangeKey struct {
	handler, pool, hook common.Address
	lo, hi              int
}

// position is a handler range's state as the handler keeps it.
type position struct {
	key                 rangeKey
	v1, listed          bool
	id                  *big.Int
	total, supply, used *big.Int
	stated              *Strike // the listed strike
	usedByOptions       *big.Int
	lastExercise        int64
	// shares are the LPs' balances; donated and lastDonation the
	// handler's donation lock (donatedLiquidity, lastDonation).
	shares       map[common.Address]*big.Int
	donated      *big.Int
	lastDonation uint64
}

// history collects a scenario's transactions.
type history struct {
	s       *Scenario
	txs     []*tx
	ranges  map[rangeKey]*position
	order   []rangeKey
	swapper common.Address
	static  map[common.Address]uint64 // manifest data sources: start blocks
}

func (h *history) add(t *tx) { h.txs = append(h.txs, t) }

func (s *Scenario) handlerV1(a common.Address) bool { return s.Handlers[a].Version == 1 }

// rangeOf returns the range, recording it the first time.
func (h *history) rangeOf(k rangeKey) *position {
	if p, ok := h.ranges[k]; ok {
		return p
	}
	p := &position{key: k, v1: h.s.handlerV1(k.handler), total: new(big.Int), supply: new(big.Int), used: new(big.Int), usedByOptions: new(big.Int),
		shares: map[common.Address]*big.Int{}}
	p.id = positionID(k, p.v1)
	h.ranges[k] = p
	h.order = append(h.order, k)
	return p
}

// positionID is the handler's ERC6909 id of a range:
// keccak256(abi.encode(handler, pool, hook, tickLower, tickUpper)) for V2
// handlers, keccak256(abi.encode(handler, pool, tickLower, tickUpper)) for V1.
func positionID(k rangeKey, v1 bool) *big.Int {
	enc := append(word(k.handler), word(k.pool)...)
	if !v1 {
		enc = append(enc, word(k.hook)...)
	}
	enc = append(append(enc, word(big.NewInt(int64(k.lo)))...), word(big.NewInt(int64(k.hi)))...)
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}

// blockAt is the block of a timestamp by the chain's block rate, counted
// back from the scenario's head.
func (s *Scenario) blockAt(ts int64) (uint64, error) {
	r, ok := blockRates[s.ChainID]
	if !ok {
		return 0, fmt.Errorf("no block rate for chain %d", s.ChainID)
	}
	back := (s.Block.Timestamp - ts) * r[0] / r[1]
	if ts > s.Block.Timestamp || back > int64(s.Block.Number) {
		return 0, fmt.Errorf("time %d is outside the chain up to the head", ts)
	}
	return s.Block.Number - uint64(back), nil
}

// timeAt is blockAt's inverse.
func (s *Scenario) timeAt(block uint64) int64 {
	r := blockRates[s.ChainID]
	return s.Block.Timestamp - int64(s.Block.Number-block)*r[1]/r[0]
}

// firstDated is the time of the scenario's first dated event.
func (s *Scenario) firstDated() int64 {
	first := s.Block.Timestamp
	for _, o := range s.Options {
		first = min(first, o.MintTimestamp)
	}
	for _, st := range s.Strikes {
		for _, d := range append(append([]Daily{}, st.DailyDonations...), st.DailyFeeCompounds...) {
			first = min(first, d.Start)
		}
	}
	for _, e := range s.Exercises {
		first = min(first, e.Timestamp)
	}
	for _, d := range s.Delegates {
		first = min(first, d.Timestamp)
	}
	return first
}

// buildHistory lays out the scenario's transactions (unordered; replay
// orders them).
func (s *Scenario) buildHistory(swapper common.Address, static map[common.Address]uint64) (*history, error) {
	h := &history{s: s, ranges: map[rangeKey]*position{}, swapper: swapper, static: static}
	for i := range s.Strikes {
		st := &s.Strikes[i]
		p := h.rangeOf(rangeKey{st.Handler, st.Pool, st.Hook, st.TickLower, st.TickUpper})
		p.listed, p.stated = true, st
	}
	closedAt := map[uint64]int64{} // exercised in full or settled, when
	for _, e := range s.Exercises {
		closedAt[e.TokenID] = e.Timestamp
	}
	for _, st := range s.Settlements {
		closedAt[st.TokenID] = st.Timestamp
	}
	for _, o := range s.Options {
		for _, l := range o.Legs {
			p := h.rangeOf(rangeKey{l.Handler, l.Pool, l.Hook, l.TickLower, l.TickUpper})
			liq, _ := new(big.Int).SetString(l.Liquidity, 10)
			p.usedByOptions.Add(p.usedByOptions, liq)
			if at, ok := closedAt[o.TokenID]; ok {
				p.lastExercise = max(p.lastExercise, at)
			} else if !p.listed {
				return nil, fmt.Errorf("option %d uses range %s, which is open at the head but not among the strikes", o.TokenID, rangeID(p.key))
			}
		}
	}
	t0 := s.firstDated() - 2*day
	h.setup(t0)
	for i, k := range h.order {
		if err := h.deposits(h.ranges[k], i, t0+int64(i)*12); err != nil {
			return nil, err
		}
	}
	for _, o := range s.Options {
		h.purchase(o)
	}
	for _, e := range s.Exercises {
		if err := h.exercise(e); err != nil {
			return nil, err
		}
	}
	for _, st := range s.Settlements {
		if err := h.settle(st); err != nil {
			return nil, err
		}
	}
	for _, d := range s.Delegates {
		h.delegate(d)
	}
	h.otherUse()
	for _, p := range s.Pools {
		h.headSwap(p)
	}
	return h, nil
}

func rangeID(k rangeKey) string {
	return Strike{Handler: k.handler, Pool: k.pool, Hook: k.hook, TickLower: k.lo, TickUpper: k.hi}.ID()
}

// handlers are the handlers the scenario names, sorted.
func (h *history) handlers() []common.Address {
	seen := map[common.Address]bool{}
	for a := range h.s.Handlers {
		seen[a] = true
	}
	for _, k := range h.order {
		seen[k.handler] = true
	}
	out := make([]common.Address, 0, len(seen))
	for a := range seen {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Cmp(out[j]) < 0 })
	return out
}

// setup: the market's constructor (at its manifest start block, when the
// manifest lists it), then the position manager whitelisting each handler,
// each (handler, market) pair the scenario has whitelisted and each
// (handler, OtherApp) pair of a handler whose ranges OtherApp uses.
func (h *history) setup(t0 int64) {
	s, m := h.s, h.s.Market
	if start, ok := h.static[m.Address]; ok {
		pricing := common.Address{}
		if m.Pricing != nil {
			pricing = m.Pricing.Address
		}
		h.add(&tx{ts: s.timeAt(start), block: start, from: trader, to: m.Address, build: func(uint64) ([]types.Log, error) {
			return logs(ev.log(m.Address, ev.marketInit, m.PrimePool, pricing, common.Address{}, m.CallAsset, m.PutAsset))
		}})
		for i := range m.approvedPools() {
			h.add(&tx{ts: s.timeAt(start) + 1 + int64(i), from: trader, to: m.Address, build: func(uint64) ([]types.Log, error) {
				return logs(ev.log(m.Address, ev.updateAddress, common.Address{}, common.Address{}, pricing))
			}})
		}
	}
	other := map[common.Address]bool{}
	for _, k := range h.order {
		if p := h.ranges[k]; p.listed && h.gap(p).Sign() > 0 {
			other[k.handler] = true
		}
	}
	for i, hd := range h.handlers() {
		hd := hd
		h.add(&tx{ts: t0 - 3600 + int64(i), from: trader, to: m.pm(), build: func(uint64) ([]types.Log, error) {
			out := []types.Log{ev.log(m.pm(), ev.whitelist, hd, true)}
			if !s.Handlers[hd].NotWhitelisted {
				out = append(out, ev.log(m.pm(), ev.whitelistApp, hd, m.Address, true))
			}
			if other[hd] {
				out = append(out, ev.log(m.pm(), ev.whitelistApp, hd, OtherApp, true))
			}
			return logs(out...)
		}})
	}
}

// gap is the liquidity of a listed range used at the head beyond its open
// options' legs: OtherApp's.
func (h *history) gap(p *position) *big.Int {
	used, _ := new(big.Int).SetString(p.stated.UsedLiquidity, 10)
	return used.Sub(used, h.openUse(p))
}

// openUse is what the scenario's options neither exercised nor settled
// hold of a range.
func (h *history) openUse(p *position) *big.Int {
	sum := new(big.Int)
	for _, o := range h.s.Options {
		for _, l := range o.Legs {
			if !h.s.closed(o.TokenID) && (rangeKey{l.Handler, l.Pool, l.Hook, l.TickLower, l.TickUpper}) == p.key {
				liq, _ := new(big.Int).SetString(l.Liquidity, 10)
				sum.Add(sum, liq)
			}
		}
	}
	return sum
}

func sumDaily(ds []Daily) *big.Int {
	sum := new(big.Int)
	for _, d := range ds {
		v, _ := new(big.Int).SetString(d.Liquidity, 10)
		sum.Add(sum, v)
	}
	return sum
}

// deposits lays out a range's deposits, fee compounds, donations and
// withdrawal (the rules above). The i-th range is deposited by LPs[i%2].
func (h *history) deposits(p *position, i int, at int64) error {
	lp, other := LPs[i%len(LPs)], LPs[(i+1)%len(LPs)]
	if !p.listed {
		h.add(h.mintTx(p, lp, at, new(big.Int).Set(p.usedByOptions), nil))
		h.add(h.burnAllTx(p, lp, p.lastExercise+3600))
		return nil
	}
	st := p.stated
	base, _ := new(big.Int).SetString(st.TotalLiquidity, 10)
	if base.Sign() == 0 {
		h.add(h.mintTx(p, lp, at, new(big.Int).Set(emptiedDeposit), nil))
		h.add(h.burnAllTx(p, lp, at+day))
		return nil
	}
	base.Sub(base, sumDaily(st.DailyDonations))
	base.Sub(base, sumDaily(st.DailyFeeCompounds))
	if h.gap(p).Sign() < 0 {
		return fmt.Errorf("strike %s: used %s is less than its open options hold", st.ID(), st.UsedLiquidity)
	}
	if base.Sign() <= 0 {
		return fmt.Errorf("strike %s: donations and fee compounds exceed its total", st.ID())
	}
	// With fee compounds, the first LP deposits half and the other LP the
	// rest in one deposit per compound (the deposit that compounds it).
	n := int64(len(st.DailyFeeCompounds))
	later := new(big.Int)
	if n > 0 {
		later.Quo(base, big.NewInt(2*n))
	}
	first := new(big.Int).Sub(base, new(big.Int).Mul(later, big.NewInt(n)))
	h.add(h.mintTx(p, lp, at, first, nil))
	for j, d := range st.DailyFeeCompounds {
		liq, _ := new(big.Int).SetString(d.Liquidity, 10)
		ts := d.Start + 2*3600 + int64(i)*60 + int64(j)
		h.add(h.priceTx(p.key.pool, d.Tick, ts))
		h.add(h.mintTx(p, other, ts, later, liq))
	}
	for j, d := range st.DailyDonations {
		liq, _ := new(big.Int).SetString(d.Liquidity, 10)
		ts := d.Start + 4*3600 + int64(i)*60 + int64(j)
		h.add(h.priceTx(p.key.pool, d.Tick, ts))
		h.add(h.donationTx(p, liq, ts))
	}
	return nil
}
