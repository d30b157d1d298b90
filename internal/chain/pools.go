package chain

import (
	"context"
	"fmt"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// A market buys from every pool it approved (approvedPools(pool), set by
// updateAddress) and from no other: mintOption reverts PoolNotApproved for
// a leg elsewhere. Which pools to ask about comes from outside (the
// subgraph's MarketPool records, the configuration's marketPools); whether
// the market approves each is read here, in the round trip that reads the
// pool's price, so a pool is listed exactly when the market would buy from
// it at the answer's block.

// approvalAt is where a pool's approvedPools answer sits in a round.
type approvalAt struct {
	pool common.Address
	at   int
}

func (rd *strikesRead) addApproval(market, pool common.Address) {
	rd.approvals = append(rd.approvals, approvalAt{pool: pool, at: len(rd.calls)})
	rd.calls = append(rd.calls, contracts.ChainedCall{Target: market, Data: pack(contracts.MarketPools, "approvedPools", pool)})
}

// decodeApprovals sets each asked pool's Approved. A market that does not
// answer approvedPools (reverts, or answers nothing) approves nothing: its
// mintOption could not check the pool either.
func (rd *strikesRead) decodeApprovals(res []Result) error {
	for _, a := range rd.approvals {
		pv, ok := rd.view.Pools[a.pool]
		if !ok {
			continue // a pool whose own reads failed was refused before
		}
		pv.Approved = false
		if r := res[a.at]; r.OK && len(r.Data) > 0 {
			approved, err := unpackOne[bool](contracts.MarketPools, "approvedPools", r.Data)
			if err != nil {
				return upstreamGarbage(fmt.Errorf("approvedPools(%s): %w", a.pool.Hex(), err))
			}
			pv.Approved = approved
		}
		pv.approvalRead = true
		rd.view.Pools[a.pool] = pv
	}
	return nil
}

// CompleteView completes v with what a later read (the subgraph's
// answer) named that v lacks, in one round trip, none when there is
// nothing to read: each pool not in v (its price, immutables and
// approval: the subgraph's approved pools of the market), the approval of
// any pool of v not read yet (the prime pool of a market read for the
// first time, whose address that read's own answer gave), and each
// handler not in v (pause, whitelisting, format). The new pools and
// handlers are remembered for the market, so the next StrikesView reads
// them in its own round trip.
func (r *Reader) CompleteView(ctx context.Context, v *StrikesView, pools, handlers []common.Address) error {
	market := v.Info.Market
	rd := &strikesRead{pmAt: -1, view: v}
	var added, todo []common.Address
	for _, p := range pools {
		if _, ok := v.Pools[p]; !ok && p != (common.Address{}) && !slices.Contains(added, p) {
			added = append(added, p)
			rd.addPool(r, market, p)
		}
	}
	for _, p := range viewPools(v) {
		if pv := v.Pools[p]; !pv.approvalRead && !slices.Contains(added, p) {
			rd.addApproval(market, p)
		}
	}
	for _, h := range handlers {
		if _, ok := v.Handlers[h]; !ok && !slices.Contains(todo, h) {
			todo = append(todo, h)
		}
	}
	rd.addHandlers(r, market, todo)
	if len(rd.calls) == 0 {
		return nil
	}
	// As a ChainedRead, which needs no Multicall3: this round mostly
	// completes a market's first read, which is one too.
	res, err := r.chainedReadOrRounds(ctx, rd.calls)
	if err != nil {
		return err
	}
	if err := r.decodePools(rd, res); err != nil {
		return err
	}
	if err := rd.decodeApprovals(res); err != nil {
		return err
	}
	if err := r.decodeHandlers(rd, res); err != nil {
		return err
	}
	r.rememberPools(market, added)
	r.rememberHandlers(market, todo)
	return nil
}

// PoolsToRead are the pools whose ranges a read of v's market may list:
// those the market approves and those whose approval is not read yet (the
// answer's completion reads it: CompleteView), the prime pool first, the
// others in ascending order.
func (v *StrikesView) PoolsToRead() []common.Address {
	var out []common.Address
	for _, p := range viewPools(v) {
		if pv := v.Pools[p]; !pv.approvalRead || pv.Approved {
			out = append(out, p)
		}
	}
	return out
}

// ApprovedPools are the pools of v the market approves now: the prime
// pool first, then the others in ascending order. A pool whose approval
// was never read (see CompleteView) is not among them.
func (v *StrikesView) ApprovedPools() []common.Address {
	var out []common.Address
	for _, p := range viewPools(v) {
		if pv := v.Pools[p]; pv.approvalRead && pv.Approved {
			out = append(out, p)
		}
	}
	return out
}

// viewPools are v's pools, the prime pool first, the others ascending.
func viewPools(v *StrikesView) []common.Address {
	out := make([]common.Address, 0, len(v.Pools))
	for p := range v.Pools {
		if v.Info == nil || p != v.Info.Pool {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b common.Address) int { return a.Cmp(b) })
	if v.Info != nil {
		if _, ok := v.Pools[v.Info.Pool]; ok {
			out = append([]common.Address{v.Info.Pool}, out...)
		}
	}
	return out
}

// poolsFor is the pools asked for plus those remembered for the market.
func (r *Reader) poolsFor(market common.Address, pools []common.Address) []common.Address {
	seen, _, _ := r.seenPools.Peek(market.Hex())
	out := make([]common.Address, 0, len(pools)+len(seen))
	for _, p := range append(append([]common.Address{}, pools...), seen...) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// maxSeenPools bounds the pools remembered per market, so a subgraph
// answering garbage cannot grow the first round without bound.
const maxSeenPools = 32

func (r *Reader) rememberPools(market common.Address, pools []common.Address) {
	if len(pools) == 0 {
		return
	}
	seen, _, _ := r.seenPools.Peek(market.Hex())
	next := append([]common.Address{}, seen...)
	for _, p := range pools {
		if len(next) < maxSeenPools && !slices.Contains(next, p) {
			next = append(next, p)
		}
	}
	r.seenPools.Set(market.Hex(), next, cache.Policy{TTL: r.ttl})
}

// PoolStates reads the slot0 of each pool in one round trip (Multicall3),
// at the answer's block: the prices positions judge legs in other pools
// than the prime pool by.
func (r *Reader) PoolStates(ctx context.Context, pools []common.Address) (map[common.Address]PoolState, error) {
	out := make(map[common.Address]PoolState, len(pools))
	if len(pools) == 0 {
		return out, nil
	}
	calls := make([]Call, len(pools))
	for i, p := range pools {
		calls[i] = Call{Target: p, Data: pack(contracts.Pool, "slot0")}
	}
	res, err := r.AggregateResults(ctx, calls)
	if err != nil {
		return nil, err
	}
	for i, p := range pools {
		if !res[i].OK {
			return nil, badMarketState(&CallFailedError{Index: i, Target: p, Revert: res[i].Data})
		}
		st, err := r.decodeSlot0(p, res[i].Data)
		if err != nil {
			return nil, upstreamGarbage(fmt.Errorf("slot0 of %s: %w", p.Hex(), err))
		}
		out[p] = st
	}
	return out, nil
}
