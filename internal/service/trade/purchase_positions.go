package trade

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// Positions is one page of open positions and the subgraph block behind it.
type Positions struct {
	Records PositionPage
	Block   uint64
	// Named is how many candidates the subgraph named for the page (at
	// most first): a reader of every page stops at a short one by this,
	// not by Records, which the chain thins (an option exercised in full,
	// transferred or burnt since the subgraph's block).
	Named int `json:"-"`
}

// PositionPage is a page of positions as the route answers it.
type PositionPage []PositionRecord

// Degraded: a record left an add-on unknown because its read failed
// (ExpiryRisk.Unknown, SellOrderUnknown): the gateway caches such a page
// only briefly, so it heals when the upstream answers again.
func (p PositionPage) Degraded() bool {
	for i := range p {
		if p[i].degraded() {
			return true
		}
	}
	return false
}

func (r *PositionRecord) degraded() bool { return len(r.Unknown) > 0 || r.SellOrderUnknown != "" }

// PositionRecord is an option the user owns now with liquidity left.
type PositionRecord struct {
	OptionID     string        `json:"optionId"`
	Type         string        `json:"type"`
	Strike       float64       `json:"strike"`
	Expiry       string        `json:"expiry"`
	TTL          int64         `json:"ttl"`
	Size         string        `json:"size"`
	SizeToken    vocab.Token   `json:"sizeToken"`
	Premium      string        `json:"premium"`
	ProtocolFees string        `json:"protocolFees"`
	PremiumToken vocab.Token   `json:"premiumToken"`
	Timestamp    string        `json:"timestamp"`
	TxHash       string        `json:"txHash"`
	Legs         []PositionLeg `json:"legs"`
	// Exercisable: prepare's option rule holds (a V2 market, liquidity
	// left, not expired at the head: optionExercisable, one code path),
	// and exercising now at the prime pool's price would pay something
	// from a leg whose re-mint fits at its own pool's price
	// (clamm.RemintFits: prepare's simulation leaves a leg out whose range
	// holds that price, and so does this value).
	Exercisable bool `json:"exercisable"`
	// NotExercisableReason says why not, when Exercisable is false.
	NotExercisableReason string `json:"notExercisableReason,omitempty"`
	// ValueIfExercised is what exercising every leg now would pay, in
	// profitToken: per leg max(swap of its collateral at the prime pool's
	// current price after the pool's fee - what its LPs are owed, 0), over
	// the legs whose re-mint fits at their own pool's current price. It is
	// before price impact; prepare quotes the swaps and gives the exact
	// figure. "0" whenever the option cannot be exercised (V1 market,
	// expired, no leg fits).
	ValueIfExercised string      `json:"valueIfExercised"`
	ProfitToken      vocab.Token `json:"profitToken"`
	ExpiryRisk
	// SellOrder is the take-profit the order book holds on the option by
	// its owner (the hosted API's sellOrder); null when none, or when the
	// chain has no book.
	SellOrder *vocab.SellOrder `json:"sellOrder"`
	// SellOrderUnknown says why SellOrder is null though the chain has a
	// book: its read failed (an add-on: it never fails the positions).
	SellOrderUnknown string `json:"sellOrderUnknown,omitempty"`
	// valueBefore is ValueIfExercised as a number, for the expiry risk
	// computed after it (never parsed back from the text).
	valueBefore *big.Int
}

// PositionLeg is one leg with the liquidity it has left (opTickMap at the head).
type PositionLeg struct {
	Handler   string `json:"handler"`
	Pool      string `json:"pool"`
	Hook      string `json:"hook"`
	TickLower int    `json:"tickLower"`
	TickUpper int    `json:"tickUpper"`
	Liquidity string `json:"liquidity"`
}

// PurchasePositions returns a page of the options the user owns on a market,
// newest first. The subgraph names the candidates (owner, not settled,
// first/skip passed through, and at most first of them read); the chain,
// read at the head in one round trip for the page (chain.Reader.Positions),
// has the last word: an option it shows owned by someone else (transferred
// after the subgraph's block), burnt, or with no liquidity left (exercised
// in full) is dropped, so a page may hold fewer than first records.
func (s *Trade) PurchasePositions(ctx context.Context, req HistoryRequest) (Positions, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return Positions{}, err
	}
	var (
		info *chain.MarketInfo
		pool chain.PoolState
		page subgraph.HeldPage
		meta subgraph.Meta
		pos  []chain.PositionResult
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { info, pool, err = up.Chain.MarketSnapshot(gctx, req.Market); return })
	g.Go(func() (err error) { page, meta, pos, err = heldPositions(gctx, up, req); return })
	if err := g.Wait(); err != nil {
		return Positions{}, err
	}
	held := page.Options
	pools, err := legPools(ctx, up, info.Pool, pool, pos)
	if err != nil {
		return Positions{}, err
	}
	tok0, tok1 := info.TokenByAddress(info.Token0), info.TokenByAddress(info.Token1)
	m := clamm.Market{Token0IsCall: info.Token0IsCall(), Decimals0: int(tok0.Decimals), Decimals1: int(tok1.Decimals)}
	records := make([]PositionRecord, 0, len(held))
	var risks []riskInput // per record: its position and fate (exercise_expiry_risk.go)
	for i, h := range held {
		p, err := pos[i].Position, pos[i].Err
		if err != nil && problem.As(err).Code == problem.OptionNotFound {
			continue // burnt since the subgraph's block
		}
		if err != nil {
			return Positions{}, err
		}
		if p.Owner != req.User || !hasLiquidity(p) {
			continue
		}
		r, err := positionRecord(h, p, marketAt{info: info, m: m, pool: pool, pools: pools, addr: req.Market})
		if err != nil {
			return Positions{}, err
		}
		records = append(records, r)
		risks = append(risks, riskInput{id: h.TokenID.Int, pos: p, fate: h.Fate})
	}
	for i := range risks {
		risks[i].rec = &records[i]
	}
	// Every record's owner is the user, whose delegates the page's
	// document read at its block: no second subgraph round trip.
	known := riskReads{}
	if page.DelegatesRead {
		known.delegates = func(context.Context, []common.Address) ([]subgraph.ExerciseDelegate, error) {
			return page.Delegates, nil
		}
	}
	if err := s.expiryRisks(ctx, up, marketAt{info: info, m: m, pool: pool, addr: req.Market}, risks, known); err != nil {
		return Positions{}, err
	}
	mine := make([]*PositionRecord, len(records))
	for i := range records {
		mine[i] = &records[i]
	}
	sellOrders(ctx, up, req.Market, req.User, mine)
	return Positions{Records: records, Block: meta.Block, Named: len(held)}, nil
}

// sellOrders gives each record, an option of owner on market, its
// take-profit from the chain's order book, if the chain has one; a failed
// read leaves them null and says why.
func sellOrders(ctx context.Context, up *vocab.Upstreams, market, owner common.Address, records []*PositionRecord) {
	if up.SellOrders == nil || len(records) == 0 {
		return
	}
	ids := make([]string, len(records))
	for i, r := range records {
		ids[i] = r.OptionID
	}
	found, err := up.SellOrders.SellOrders(ctx, up.Config.ID, market, owner, ids)
	for _, r := range records {
		if err != nil {
			r.SellOrderUnknown = "the order book was not read: " + problem.As(err).Message
			continue
		}
		r.SellOrder = found[r.OptionID]
	}
}

func hasLiquidity(p *chain.Position) bool {
	for _, l := range p.Legs {
		if l.LiquidityToUse.Sign() > 0 {
			return true
		}
	}
	return false
}

// marketAt is a market as one positions page reads it: its facts, its
// prime pool's state and that of every pool the page's legs are in, at the
// answer's block.
type marketAt struct {
	info  *chain.MarketInfo
	m     clamm.Market
	pool  chain.PoolState
	pools map[common.Address]chain.PoolState
	addr  common.Address
}

// heldPositions reads the page of options the user owns (subgraph) and
// then their positions (chain): the chain's read needs only the page's
// ids, so it runs alongside the market's snapshot, not after it.
func heldPositions(ctx context.Context, up *vocab.Upstreams, req HistoryRequest) (subgraph.HeldPage, subgraph.Meta, []chain.PositionResult, error) {
	page, meta, err := up.Subgraph.PurchasePositions(ctx, subgraph.HistoryQuery{User: req.User, Market: req.Market, First: req.First, Skip: req.Skip})
	if err != nil {
		return page, meta, nil, err
	}
	page.Options = page.Options[:min(len(page.Options), req.First)] // the subgraph client refuses longer pages; never read more than asked
	ids := make([]*big.Int, len(page.Options))
	for i, h := range page.Options {
		ids[i] = h.TokenID.Int
	}
	pos, err := up.Chain.Positions(ctx, req.Market, ids)
	return page, meta, pos, err
}

// legPools are the states of the pools the page's legs are in: the prime
// pool's (read with the market) and, in one more round trip only when a
// leg is in another pool, the others' (PoolStates).
func legPools(ctx context.Context, up *vocab.Upstreams, prime common.Address, primeState chain.PoolState, pos []chain.PositionResult) (map[common.Address]chain.PoolState, error) {
	var others []common.Address
	for _, r := range pos {
		if r.Err != nil || r.Position == nil {
			continue
		}
		for _, l := range r.Position.Legs {
			if l.Pool != prime && !slices.Contains(others, l.Pool) {
				others = append(others, l.Pool)
			}
		}
	}
	out := map[common.Address]chain.PoolState{}
	if len(others) > 0 {
		var err error
		if out, err = up.Chain.PoolStates(ctx, others); err != nil {
			return nil, err
		}
	}
	out[prime] = primeState
	return out, nil
}

func positionRecord(h subgraph.HeldOption, p *chain.Position, mk marketAt) (PositionRecord, error) {
	info, m, pool := mk.info, mk.m, mk.pool
	if !txHashRE.MatchString(h.MintTxHash) {
		return PositionRecord{}, vocab.SubgraphGarbage(fmt.Errorf("option %s: mint transaction hash %q", h.ID, h.MintTxHash))
	}
	// The chain's opData is the option's truth; the subgraph copies it at mint.
	d := p.Data
	ttl := new(big.Int).Sub(d.Expiry, h.MintTimestamp.Int)
	if !ttl.IsInt64() || ttl.Sign() < 0 {
		return PositionRecord{}, vocab.SubgraphGarbage(fmt.Errorf("option %s: expiry %s before mint %s", h.ID, d.Expiry, h.MintTimestamp))
	}
	collateral, profitTok := info.PutAsset, info.CallAsset
	r := PositionRecord{
		OptionID: h.TokenID.String(), Type: "put", Strike: m.TickPrice(clamm.PutStrikeTick(d.TickLower, d.TickUpper)),
		Expiry: d.Expiry.String(), TTL: ttl.Int64(), Size: h.TotalAssetWithdrawn.String(),
		Premium: h.Premium.String(), ProtocolFees: h.ProtocolFees.String(),
		Timestamp: h.MintTimestamp.String(), TxHash: h.MintTxHash, Legs: make([]PositionLeg, len(p.Legs)),
	}
	if d.IsCall {
		r.Type, r.Strike = "call", m.TickPrice(clamm.CallStrikeTick(d.TickLower, d.TickUpper))
		collateral, profitTok = info.CallAsset, info.PutAsset
	}
	r.SizeToken, r.PremiumToken, r.ProfitToken = vocab.TokenOf(collateral), vocab.TokenOf(collateral), vocab.TokenOf(profitTok)
	value, inRange := new(big.Int), 0
	for i, l := range p.Legs {
		r.Legs[i] = PositionLeg{Handler: l.Handler.Hex(), Pool: l.Pool.Hex(), Hook: l.Hook.Hex(), TickLower: l.TickLower, TickUpper: l.TickUpper, Liquidity: l.LiquidityToUse.String()}
		v, err := legValue(l, collateral.Address == info.Token0, info.Fee, pool.SqrtPriceX96)
		if err != nil {
			return PositionRecord{}, problem.Wrap(problem.RPCError, err, "option %s leg %d has invalid ticks [%d, %d]", h.TokenID, i, l.TickLower, l.TickUpper)
		}
		// The handler re-mints the leg in the leg's own pool, at that
		// pool's price (not the prime pool's, where the swap runs).
		legPool, ok := mk.pools[l.Pool]
		if !ok { // a caller that forgot legPools would judge at tick 0
			return PositionRecord{}, fmt.Errorf("option %s leg %d: pool %s not read", h.TokenID, i, l.Pool.Hex())
		}
		if v.Sign() > 0 && !clamm.RemintFits(l.TickLower, l.TickUpper, legPool.Tick, collateral.Address == info.Token0) {
			inRange++ // its exercise would revert: prepare leaves it out
			continue
		}
		value.Add(value, v)
	}
	r.ValueIfExercised = value.String()
	switch why := optionExercisable(mk.addr, h.TokenID.Int, p); {
	case why != nil:
		r.NotExercisableReason = why.Message
	case value.Sign() == 0 && inRange > 0:
		r.NotExercisableReason = "the pool's price is inside the range of every leg that would pay: re-minting such a leg's liquidity needs both tokens, and its exercise reverts"
	case value.Sign() == 0:
		r.NotExercisableReason = "not in the money: no leg's collateral, swapped at the pool's price, pays more than its liquidity providers are owed"
	default:
		r.Exercisable = true
	}
	if !r.Exercisable {
		// What an exercise that would revert pays is nothing: a figure here
		// would read as money the owner can take.
		value.SetInt64(0)
		r.ValueIfExercised = "0"
	}
	r.valueBefore = value
	return r, nil
}

// legValue is one leg's exercise profit at sqrtPriceX96 after a pool fee of
// fee (hundredths of a bip), with no price impact: zero when the swap would
// not cover the LPs (prepare leaves such a leg out).
func legValue(l chain.OptionLeg, collateralIs0 bool, fee uint32, sqrtPriceX96 *big.Int) (*big.Int, error) {
	if l.LiquidityToUse.Sign() == 0 {
		return new(big.Int), nil
	}
	leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.LiquidityToUse, collateralIs0)
	if err != nil {
		return nil, err
	}
	if fee >= 1_000_000 {
		return nil, errors.New("pool fee of 100% or more")
	}
	in := new(big.Int).Mul(leg.AmountToSwap, big.NewInt(int64(1_000_000-fee)))
	in.Quo(in, big.NewInt(1_000_000))
	out := clamm.SwapAtPrice(in, sqrtPriceX96, collateralIs0)
	if out.Cmp(leg.AmountReq) <= 0 {
		return new(big.Int), nil
	}
	return out.Sub(out, leg.AmountReq), nil
}
