package trade

import (
	"context"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// ExpiringRequest is a validated expiring-options request: the options of
// Market in the money now that expire within Within seconds of the
// answer's block, First of them after Skip.
type ExpiringRequest struct {
	ChainID     uint64
	Market      common.Address
	Within      int64
	First, Skip int
}

// ExpiringOptions is one page of expiring options and the block behind it.
type ExpiringOptions struct {
	Records ExpiringPage
	Block   uint64
}

// ExpiringPage is a page of expiring options as the route answers it.
type ExpiringPage []ExpiringRecord

// Degraded: a record left an add-on unknown (PositionPage.Degraded).
func (p ExpiringPage) Degraded() bool {
	for i := range p {
		if p[i].degraded() {
			return true
		}
	}
	return false
}

// ExpiringRecord is an expiring option in the money: its owner now and
// the position as the owner's positions show it (value, expiry risk,
// whether the auto-exerciser will act).
type ExpiringRecord struct {
	Owner string `json:"owner"`
	PositionRecord
}

// MaxExpiringCandidates bounds the options of one market expiring in one
// window that an answer reads (Graph Node's page): a wider window is the
// client's to narrow.
const MaxExpiringCandidates = subgraph.MaxFirst

// ExpiringOptions returns the market's options that expire within the
// window and are in the money now, soonest expiry first (ties by token
// id), paged over those. The answer's block time (read from the chain at
// that block: the gateway pins the answer to the subgraph's indexed head)
// opens the window; the subgraph names every option of the market not
// settled whose expiry lies in [block time, block time + within]; the
// chain, at the same block, has the last word on owner and liquidity left;
// each candidate's value is what the prepared exercise would pay (quoted
// and simulated, as positions compute it), asked in expiry order until
// the page is full.
func (s *Trade) ExpiringOptions(ctx context.Context, req ExpiringRequest) (ExpiringOptions, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return ExpiringOptions{}, err
	}
	now, err := up.Chain.BlockTime(ctx)
	if err != nil {
		return ExpiringOptions{}, err
	}
	c, err := expiringCandidates(ctx, up, req, now)
	if c.delegates != nil {
		defer c.delegates.End()
	}
	if err != nil {
		return ExpiringOptions{}, err
	}
	page, values, err := inTheMoneyPage(ctx, up, c.mk, c.list, req)
	if err != nil {
		return ExpiringOptions{}, err
	}
	if err := s.expiryRisks(ctx, up, c.mk, page, riskReads{values: values, delegates: c.delegates.read}); err != nil {
		return ExpiringOptions{}, err
	}
	byOwner := map[common.Address][]*PositionRecord{} // each owner's take-profits, as their positions show them
	for _, in := range page {
		byOwner[in.pos.Owner] = append(byOwner[in.pos.Owner], in.rec)
	}
	for owner, recs := range byOwner {
		sellOrders(ctx, up, req.Market, owner, recs)
	}
	out := make([]ExpiringRecord, len(page))
	for i, in := range page {
		out[i] = ExpiringRecord{Owner: in.pos.Owner.Hex(), PositionRecord: *in.rec}
	}
	return ExpiringOptions{Records: out, Block: c.meta.Block}, nil
}

// expiring are the candidates of one expiring-options answer: the market
// and options read at its block, and the read of their owners' delegates
// begun once the chain named the owners.
type expiring struct {
	mk        marketAt
	list      []riskInput
	meta      subgraph.Meta
	delegates *earlyDelegates
}

// expiringCandidates reads the market and the options expiring in the
// window (subgraph), then their positions (chain), and keeps those with
// liquidity left that an exercise would pay before price impact, in
// expiry order. Once the positions name the owners it begins the read of
// their delegates, which then runs alongside the chain reads that value
// the options (a second subgraph round trip the data needs, but not after
// those).
func expiringCandidates(ctx context.Context, up *vocab.Upstreams, req ExpiringRequest, now int64) (expiring, error) {
	var (
		c    = expiring{mk: marketAt{addr: req.Market}}
		list []subgraph.ExpiringOption
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { c.mk.info, c.mk.pool, err = up.Chain.MarketSnapshot(gctx, req.Market); return })
	g.Go(func() (err error) {
		list, c.meta, err = up.Subgraph.ExpiringOptions(gctx, subgraph.ExpiringQuery{Market: req.Market, After: now, Until: now + req.Within, First: MaxExpiringCandidates})
		return
	})
	if err := g.Wait(); err != nil {
		return c, err
	}
	// soonest expiry first, ties by token id (the subgraph ties by its
	// string id, in which option 10 sorts before option 9)
	sort.SliceStable(list, func(i, j int) bool {
		if c := list[i].Expiry.Cmp(list[j].Expiry.Int); c != 0 {
			return c < 0
		}
		return list[i].TokenID.Cmp(list[j].TokenID.Int) < 0
	})
	if len(list) == MaxExpiringCandidates {
		return c, problem.InvalidParam("within", "at least %d options of the market expire within %d seconds, more than one answer reads: ask a shorter window", MaxExpiringCandidates, req.Within)
	}
	mk := &c.mk
	tok0, tok1 := mk.info.TokenByAddress(mk.info.Token0), mk.info.TokenByAddress(mk.info.Token1)
	mk.m = clamm.Market{Token0IsCall: mk.info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
	ids := make([]*big.Int, len(list))
	for i, o := range list {
		ids[i] = o.TokenID.Int
	}
	pos, err := up.Chain.Positions(ctx, req.Market, ids)
	if err != nil {
		return c, err
	}
	c.delegates = startDelegates(ctx, up, req.Market, liveOwners(pos))
	// each leg re-mints at its own pool's price, as positions judge it
	if mk.pools, err = legPools(ctx, up, mk.info.Pool, mk.pool, pos); err != nil {
		return c, err
	}
	c.list, err = exercisableCandidates(list, pos, *mk)
	return c, err
}

// exercisableCandidates are the options whose position has liquidity
// left, is not expired and could be exercised, in list's order.
func exercisableCandidates(list []subgraph.ExpiringOption, pos []chain.PositionResult, mk marketAt) ([]riskInput, error) {
	var out []riskInput
	for i, o := range list {
		p, err := pos[i].Position, pos[i].Err
		if err != nil && problem.As(err).Code == problem.OptionNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !live(p) {
			continue
		}
		r, err := positionRecord(o.HeldOption, p, mk)
		if err != nil {
			return nil, err
		}
		if r.Exercisable {
			out = append(out, riskInput{rec: &r, id: o.TokenID.Int, pos: p, fate: o.Fate})
		}
	}
	return out, nil
}

// live: the position has liquidity left and has not expired at its
// block, so it may be a candidate.
func live(p *chain.Position) bool {
	return hasLiquidity(p) && p.Data.Expiry.Cmp(p.BlockTimestamp) >= 0
}

// liveOwners are the distinct owners of the live positions, in address
// order: every candidate's owner is among them.
func liveOwners(pos []chain.PositionResult) []common.Address {
	var owners []common.Address
	for _, r := range pos {
		if r.Err == nil && r.Position != nil && live(r.Position) {
			owners = append(owners, r.Position.Owner)
		}
	}
	return sortedDistinct(owners)
}

// earlyDelegates is a read of owners' enabled delegates begun before the
// page that needs them is known.
type earlyDelegates struct {
	*vocab.Early[[]subgraph.ExerciseDelegate]
	up     *vocab.Upstreams
	market common.Address
}

// startDelegates begins the read of the owners' delegates on market (none
// when there is no owner: no candidate, no page to name delegates in).
func startDelegates(ctx context.Context, up *vocab.Upstreams, market common.Address, owners []common.Address) *earlyDelegates {
	return &earlyDelegates{up: up, market: market, Early: vocab.Begin(ctx, func(ctx context.Context) ([]subgraph.ExerciseDelegate, error) {
		if len(owners) == 0 {
			return nil, nil
		}
		return ownersDelegates(ctx, up, market, owners)
	})}
}

// read waits for the read begun early (riskReads.delegates). A full page
// may be cut short (Graph Node's first), so then the page's owners, fewer,
// are asked on their own.
func (d *earlyDelegates) read(ctx context.Context, owners []common.Address) ([]subgraph.ExerciseDelegate, error) {
	dels, err := d.Wait(ctx)
	if err == nil && len(dels) >= subgraph.MaxFirst {
		return ownersDelegates(ctx, d.up, d.market, owners)
	}
	return dels, err
}

// inTheMoneyPage values the candidates in order, valueConcurrency at a
// time, until the request's skip+first of them are in the money (or none
// is left), and returns the page of those and their values. Without an
// on-chain swapper the value before price impact judges.
func inTheMoneyPage(ctx context.Context, up *vocab.Upstreams, mk marketAt, cands []riskInput, req ExpiringRequest) ([]riskInput, []valueOf, error) {
	skip, first := req.Skip, req.First
	var itm []riskInput
	var values []valueOf
	for start := 0; start < len(cands) && len(itm) < skip+first; start += valueConcurrency {
		chunk := cands[start:min(start+valueConcurrency, len(cands))]
		vs, err := exerciseValues(ctx, up, mk, chunk)
		if err != nil {
			return nil, nil, err
		}
		for i, v := range vs {
			if v.value == nil || v.value.Sign() > 0 {
				itm, values = append(itm, chunk[i]), append(values, v)
			}
		}
	}
	if skip >= len(itm) {
		return []riskInput{}, []valueOf{}, nil
	}
	end := min(skip+first, len(itm))
	return itm[skip:end], values[skip:end], nil
}
