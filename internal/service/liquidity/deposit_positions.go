package liquidity

import (
	"context"
	"fmt"
	"math/big"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// LPPositions is one page of a liquidity provider's positions and the
// subgraph block that named them (the figures are the chain's, at the
// head block of HeadBlock).
type LPPositions struct {
	Records []LPPositionRecord
	Block   uint64
	// Named is how many candidates the subgraph named for the page (at
	// most first): a reader of every page stops at a short one by this,
	// not by Records, which the chain may thin.
	Named int `json:"-"`
}

// LPPositionRecord is one range the user holds shares or reserved
// liquidity of, every figure read at the head. Each LPAmount is liquidity
// and the tokens it stands for at the pool's current price (rounded down:
// what burning it now would pay, fees aside).
type LPPositionRecord struct {
	LPRange
	// Shares is the user's balance of the range's handler token.
	Shares string `json:"shares"`
	// Assets is convertToAssets(shares): the liquidity the shares are
	// worth now, donations still locked (the last lockedBlockDuration
	// blocks' donations, decaying linearly) left out.
	Assets LPAmount `json:"assets"`
	// Withdrawable is the part of Assets a burn can take now: at most the
	// range's free liquidity, totalLiquidity - liquidityUsed.
	Withdrawable LPAmount `json:"withdrawable"`
	// Locked is the rest of Assets, held by options bought on the range
	// until they are exercised or settled.
	Locked LPAmount `json:"locked"`
	// Reserved is the user's reserved liquidity (V2 handlers; null for V1).
	Reserved *LPReserved `json:"reserved"`
	// Principal is the liquidity deposited for the shares held (see
	// Earned); Earned = max(Assets - Principal, 0): premiums donated and
	// swap fees compounded into the range, as the shares' worth shows them.
	Principal LPAmount `json:"principal"`
	Earned    LPAmount `json:"earned"`
	// Fees are the swap fees the range earned and has not compounded yet
	// that burning (or reserving) every share held would pay beside
	// Assets: the holder's part of what the handler owes the range, and of
	// what the pool position earned since the handler last poked it.
	// Null when the pool does not answer Uniswap V3's fee getters.
	Fees *LPFees `json:"fees"`
	// OpenedAt is when the user first received shares of (or reserved
	// in) the range, unix seconds, from the subgraph.
	OpenedAt string `json:"openedAt"`
	// HeadBlock and HeadTimestamp are the block the figures were read at:
	// the chain's own number (ArbSys's on Arbitrum, where block.number,
	// which the donation lock counts in, is an estimate of Ethereum's).
	HeadBlock     string `json:"headBlock"`
	HeadTimestamp string `json:"headTimestamp"`
}

// LPFees are amounts of a range's two tokens, base units.
type LPFees struct {
	Token0 string `json:"token0"`
	Token1 string `json:"token1"`
}

// LPReserved is liquidity a V2 handler holds for the user after
// reserveLiquidity, until withdrawReserveLiquidity.
type LPReserved struct {
	LPAmount
	// LastReserve is reservedLiquidityPerUser's lastReserve (unix seconds);
	// WithdrawableAt = LastReserve + reserveCooldown; both null when nothing
	// is reserved.
	LastReserve    *string `json:"lastReserve"`
	WithdrawableAt *string `json:"withdrawableAt"`
	// Withdrawable is what withdrawReserveLiquidity accepts now: nothing
	// before WithdrawableAt, then at most what the range has free,
	// totalLiquidity + reservedLiquidity - liquidityUsed.
	Withdrawable LPAmount `json:"withdrawable"`
}

// DepositPositions lists the ranges the user holds, newest first. The subgraph
// names the candidates (first and skip passed through); the chain, read at
// the head in one round trip, has the last word: a range where the chain
// shows neither shares nor reserved liquidity is dropped, so a page may
// hold fewer than first. With both pool and handler given, an empty first
// page is POSITION_NOT_FOUND.
func (s *Liquidity) DepositPositions(ctx context.Context, req LPRequest) (LPPositions, error) {
	up, sg, err := s.holdingsUpstreams(req.ChainID)
	if err != nil {
		return LPPositions{}, err
	}
	held, meta, err := sg.LPPositions(ctx, req.query())
	if err != nil {
		return LPPositions{}, err
	}
	held = held[:min(len(held), req.First)]
	keys := make([]chain.HoldingKey, len(held))
	for i, h := range held {
		keys[i] = chain.HoldingKey{Handler: h.Handler.Addr(), Pool: h.Pool.Addr(), TokenID: h.TokenID.Int, TickLower: h.TickLower, TickUpper: h.TickUpper}
	}
	view := &chain.HoldingsView{}
	if len(keys) > 0 {
		if view, err = up.Chain.Holdings().Positions(ctx, req.User, keys); err != nil {
			return LPPositions{}, err
		}
	}
	out := LPPositions{Block: meta.Block, Records: []LPPositionRecord{}, Named: len(held)}
	for i, h := range held {
		p := view.Positions[i]
		if p.Shares.Sign() == 0 && (p.Reserved == nil || p.Reserved.Sign() == 0) {
			continue // gone since the subgraph's block
		}
		r, err := positionOf(up, h, p, view)
		if err != nil {
			return LPPositions{}, err
		}
		out.Records = append(out.Records, r)
	}
	if len(out.Records) == 0 && req.Pool != nil && req.Handler != nil && req.Skip == 0 {
		return LPPositions{}, problem.New(problem.PositionNotFound, "%s holds no shares and no reserved liquidity of handler %s in pool %s", req.User.Hex(), req.Handler.Hex(), req.Pool.Hex())
	}
	return out, nil
}

func positionOf(up *vocab.Upstreams, h subgraph.LPHolding, p chain.Holding, view *chain.HoldingsView) (LPPositionRecord, error) {
	pool := view.Pools[h.Pool.Addr()]
	rg, err := lpRange(up, h.LPRange, pool)
	if err != nil {
		return LPPositionRecord{}, err
	}
	sa, sb, err := rangeSqrt(h.LPRange)
	if err != nil {
		return LPPositionRecord{}, err
	}
	amount := func(l *big.Int) LPAmount { return lpAmount(l, pool.SqrtPriceX96, sa, sb) }
	f := holdingFigures(p, view.Block, principalAt(h, p.Shares))
	r := LPPositionRecord{
		LPRange: rg, Shares: p.Shares.String(),
		Assets: amount(f.assets), Withdrawable: amount(f.withdrawable), Locked: amount(f.locked),
		Principal: amount(f.principal), Earned: amount(f.earned),
		OpenedAt: h.OpenedAt.String(), HeadBlock: fmt.Sprint(view.ChainBlock), HeadTimestamp: fmt.Sprint(view.Timestamp),
	}
	if p.V2 {
		r.Reserved = reservedOf(p, view.Timestamp, amount)
	}
	r.Fees = feesOf(h.LPRange, p, pool, f.assets)
	return r, nil
}

// feesOf is what a burn of liquidity (the shares' worth) pays in swap
// fees not compounded yet (clamm.RangeFees), at the pool's fee growth
// inside the range now; nil when a getter that needs did not answer.
func feesOf(rg subgraph.LPRange, p chain.Holding, pool chain.HoldingPool, liquidity *big.Int) *LPFees {
	r := p.Range
	lo, hi := r.TickFeeGrowthOutside[0], r.TickFeeGrowthOutside[1]
	if lo[0] == nil || hi[0] == nil || pool.FeeGrowthGlobal[0] == nil || pool.FeeGrowthGlobal[1] == nil || r.TokensOwed[0] == nil {
		return nil
	}
	var now [2]*big.Int
	for k := range now {
		now[k] = clamm.PoolGrowth{Global: pool.FeeGrowthGlobal[k], LowerOutside: lo[k], UpperOutside: hi[k]}.Inside(pool.Tick, rg.TickLower, rg.TickUpper)
	}
	// The handler's liquidity in the pool position: V2 handlers count the
	// reserved liquidity in, V1 handlers have none.
	earning := new(big.Int).Sub(r.TotalLiquidity, r.LiquidityUsed)
	if r.ReservedLiquidity != nil {
		earning.Add(earning, r.ReservedLiquidity)
	}
	f := clamm.RangeFees{TickLower: rg.TickLower, TickUpper: rg.TickUpper, Owed: r.TokensOwed, Last: r.FeeGrowthInsideLast,
		Now: now, Earning: earning, TotalLiquidity: r.TotalLiquidity}
	f0, f1, err := f.Paid(liquidity)
	if err != nil {
		return nil
	}
	return &LPFees{Token0: f0.String(), Token1: f1.String()}
}

// figures are a holding's liquidity figures.
type figures struct {
	assets, withdrawable, locked, principal, earned *big.Int
}

// holdingFigures computes, from the block's reads, what the handler's own
// getters and checks give (clamm.ShareRange: convertToAssets with the
// donation still locked at block), and burnPosition's check
// totalLiquidity - liquidityUsed >= the liquidity burnt.
func holdingFigures(p chain.Holding, block uint64, principal *big.Int) figures {
	rg := p.Range
	sr := clamm.ShareRange{TotalLiquidity: rg.TotalLiquidity, TotalSupply: rg.TotalSupply, DonatedLiquidity: rg.DonatedLiquidity,
		LastDonation: rg.LastDonation, LockedBlockDuration: p.LockedBlockDuration}
	assets := sr.ConvertToAssets(p.Shares, block)
	free := nonNegative(new(big.Int).Sub(rg.TotalLiquidity, rg.LiquidityUsed))
	locked := nonNegative(new(big.Int).Sub(assets, free))
	if principal == nil {
		principal = new(big.Int).Set(assets)
	}
	return figures{
		assets: assets, withdrawable: new(big.Int).Sub(assets, locked), locked: locked,
		principal: principal, earned: nonNegative(new(big.Int).Sub(assets, principal)),
	}
}

// principalAt is the subgraph's principal for the shares the chain shows:
// as is when the share counts agree, scaled pro rata when they differ (the
// chain is ahead of the subgraph), nil (taken as the assets: nothing
// earned) when the subgraph has not seen the holder's shares yet.
func principalAt(h subgraph.LPHolding, shares *big.Int) *big.Int {
	sg := h.Shares.Int
	switch {
	case sg.Cmp(shares) == 0:
		return new(big.Int).Set(h.Principal.Int)
	case sg.Sign() == 0:
		return nil
	}
	out := new(big.Int).Mul(h.Principal.Int, shares)
	return out.Quo(out, sg)
}

func reservedOf(p chain.Holding, now uint64, amount func(*big.Int) LPAmount) *LPReserved {
	r := &LPReserved{LPAmount: amount(p.Reserved), Withdrawable: amount(new(big.Int))}
	if p.Reserved.Sign() == 0 {
		return r
	}
	last, at := fmt.Sprint(p.LastReserve), fmt.Sprint(p.LastReserve+p.ReserveCooldown)
	r.LastReserve, r.WithdrawableAt = &last, &at
	if now < p.LastReserve+p.ReserveCooldown {
		return r
	}
	rg := p.Range
	free := new(big.Int).Add(rg.TotalLiquidity, rg.ReservedLiquidity)
	free = nonNegative(free.Sub(free, rg.LiquidityUsed))
	if free.Cmp(p.Reserved) > 0 {
		free = p.Reserved
	}
	r.Withdrawable = amount(free)
	return r
}

func nonNegative(x *big.Int) *big.Int {
	if x.Sign() < 0 {
		return x.SetInt64(0)
	}
	return x
}
