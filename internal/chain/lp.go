package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// LPQuery names what a liquidity provider's prepared transaction reads at
// the head: the pool, the handler and the position manager the
// transaction goes through, the markets whose approval of the pool
// matters, and, with TokenID set, the user's position in the range.
type LPQuery struct {
	Handler, Pool, User, PositionManager common.Address
	Markets                              []common.Address
	TokenID                              *big.Int // nil: no position reads
}

// LPState is the answer to an LPQuery, all of it at one block.
type LPState struct {
	PositionManager common.Address // q's
	// Block is the block.number the chain's code sees at the answer's
	// block (on Arbitrum an estimate of Ethereum's: what a handler's
	// donation lock counts in), Timestamp that block's time.
	Block, Timestamp uint64
	Pool             PoolView
	Tokens           [2]Token    // the pool's token0 and token1
	Balances         [2]*big.Int // the user's, of token0 and token1
	// Allowances are the user's to the position manager (which pulls a
	// deposit's tokens), of token0 and token1.
	Allowances [2]*big.Int
	// HandlerWhitelisted is the position manager's whitelistedHandlers
	// (mintPosition and burnPosition refuse others); AppWhitelisted the
	// handler's whitelistedApps(position manager).
	HandlerWhitelisted, AppWhitelisted bool
	Paused                             bool
	Format                             int    // HandlerFormatV1 or V2, by the tokenIds answer's size
	PoolApproved                       []bool // per market: approvedPools(pool)
	Range                              RangeState
	Shares                             *big.Int // the user's ERC-6909 balance of TokenID
	Reserved                           *big.Int // V2: reservedLiquidityPerUser(TokenID, user).liquidity
	LastReserve, Cooldown              uint64   // V2: its lastReserve, and reserveCooldown()
	LockedBlockDuration                uint64   // the handler's donation lock, in blocks
	// V3 is whether the handler answers whitelistedPools (the V3
	// generation: reservations go through the position manager V2), and
	// PoolWhitelisted its answer for the pool (mintPositionHandler takes
	// only such pools). Both false on V1 and V2 handlers.
	V3, PoolWhitelisted bool
}

// RangeState is a handler's tokenIds(tokenId), the fields a withdrawal
// depends on (ReservedLiquidity is 0 on a V1 handler).
type RangeState struct {
	TotalLiquidity, TotalSupply, LiquidityUsed, ReservedLiquidity *big.Int
	LastDonation                                                  uint64
	DonatedLiquidity                                              *big.Int
}

// lpCall indexes of LPState's ChainedRead, before the per-market calls.
const (
	lpSlot0 = iota
	lpToken0
	lpToken1
	lpSpacing
	lpDecimals0
	lpSymbol0
	lpBalance0
	lpAllowance0
	lpDecimals1
	lpSymbol1
	lpBalance1
	lpAllowance1
	lpTimestamp
	lpPaused
	lpTokenIDs
	lpPMHandler
	lpHandlerApp
	lpShares
	lpReserved
	lpCooldown
	lpBlock
	lpLockedBlocks
	lpPoolListed // whitelistedPools(pool), V3 handlers only
	lpFixed      // the markets' approvedPools follow
)

// LPState reads q in one round trip: a ChainedRead, as the token reads
// target the pool's answers.
func (r *Reader) LPState(ctx context.Context, q LPQuery) (*LPState, error) {
	id := q.TokenID
	if id == nil {
		id = new(big.Int)
	}
	p, e, a, h := contracts.Pool, contracts.ERC20, contracts.ERC20Account, contracts.HandlerLP
	from := func(i int) *big.Int { return big.NewInt(int64(i + 1)) }
	at := func(to common.Address, data []byte) contracts.ChainedCall {
		return contracts.ChainedCall{Target: to, Data: data}
	}
	calls := []contracts.ChainedCall{
		at(q.Pool, pack(p, "slot0")), at(q.Pool, pack(p, "token0")), at(q.Pool, pack(p, "token1")), at(q.Pool, pack(p, "tickSpacing")),
		{TargetFrom: from(lpToken0), Data: pack(e, "decimals")}, {TargetFrom: from(lpToken0), Data: pack(e, "symbol")},
		{TargetFrom: from(lpToken0), Data: pack(a, "balanceOf", q.User)}, {TargetFrom: from(lpToken0), Data: pack(a, "allowance", q.User, q.PositionManager)},
		{TargetFrom: from(lpToken1), Data: pack(e, "decimals")}, {TargetFrom: from(lpToken1), Data: pack(e, "symbol")},
		{TargetFrom: from(lpToken1), Data: pack(a, "balanceOf", q.User)}, {TargetFrom: from(lpToken1), Data: pack(a, "allowance", q.User, q.PositionManager)},
		at(r.multicall, pack(contracts.Multicall3, "getCurrentBlockTimestamp")),
		at(q.Handler, pack(contracts.Handler, "paused")), at(q.Handler, pack(contracts.Handler, "tokenIds", id)),
		at(q.PositionManager, pack(contracts.PositionManagerLP, "whitelistedHandlers", q.Handler)),
		at(q.Handler, pack(h, "whitelistedApps", q.PositionManager)),
		at(q.Handler, pack(h, "balanceOf", q.User, id)), at(q.Handler, pack(h, "reservedLiquidityPerUser", id, q.User)),
		at(q.Handler, pack(h, "reserveCooldown")),
		at(r.multicall, pack(contracts.Multicall3, "getBlockNumber")),
		at(q.Handler, pack(contracts.HoldingsHandler, "lockedBlockDuration")),
		at(q.Handler, pack(contracts.HandlerV3Pools, "whitelistedPools", q.Pool)),
	}
	for _, m := range q.Markets {
		calls = append(calls, at(m, pack(contracts.MarketPools, "approvedPools", q.Pool)))
	}
	res, err := r.chainedReadOrRounds(ctx, calls)
	if err != nil {
		return nil, err
	}
	return r.decodeLP(q, res)
}

func (r *Reader) decodeLP(q LPQuery, res []Result) (*LPState, error) {
	st := &LPState{PositionManager: q.PositionManager, Format: handlerFormat(res[lpTokenIDs])}
	for _, i := range []int{lpSlot0, lpToken0, lpToken1, lpSpacing} {
		if !res[i].OK || len(res[i].Data) < 32 {
			return nil, problem.New(problem.InvalidParameter, "%s is not a Uniswap-V3-style pool on this chain (its slot0/token0/token1/tickSpacing calls fail)", q.Pool.Hex()).On("pool")
		}
	}
	if st.Format == HandlerFormatUnknown {
		return nil, problem.New(problem.InvalidParameter, "%s is not a single-tick liquidity handler on this chain (its tokenIds answer is neither V1's nor V2's)", q.Handler.Hex()).On("handler")
	}
	var err error
	if st.Pool.PoolState, err = r.decodeSlot0(q.Pool, res[lpSlot0].Data); err != nil {
		return nil, upstreamGarbage(fmt.Errorf("slot0 of %s: %w", q.Pool.Hex(), err))
	}
	if facts, err := decodePoolFacts([]Result{res[lpSpacing], res[lpToken0], res[lpToken1]}); err == nil {
		st.Pool.TickSpacing, st.Pool.Token0, st.Pool.Token1 = facts.TickSpacing, facts.Token0, facts.Token1
	} else {
		return nil, upstreamGarbage(fmt.Errorf("pool %s: %w", q.Pool.Hex(), err))
	}
	for k, base := range []int{lpDecimals0, lpDecimals1} {
		t := &st.Tokens[k]
		t.Address = []common.Address{st.Pool.Token0, st.Pool.Token1}[k]
		if !res[base].OK {
			return nil, problem.New(problem.InvalidParameter, "the pool's token %s does not answer decimals()", t.Address.Hex()).On("pool")
		}
		if t.Decimals, err = unpackOne[uint8](contracts.ERC20, "decimals", res[base].Data); err != nil || t.Decimals > maxDecimals {
			return nil, upstreamGarbage(fmt.Errorf("decimals of %s: %v", t.Address.Hex(), err))
		}
		t.Symbol = decodeSymbol(res[base+1].Data)
		st.Balances[k], st.Allowances[k] = word(res[base+2]), word(res[base+3])
	}
	// The block, its time and the user's shares have no sensible default:
	// read as 0 they would simulate at block 1, hide a passed cooldown or
	// answer "not held". A failed read is the node's fault.
	for _, i := range []int{lpTimestamp, lpBlock, lpShares} {
		if !res[i].OK || len(res[i].Data) < 32 {
			return nil, upstreamGarbage(fmt.Errorf("handler %s: read %d of the position's state failed", q.Handler.Hex(), i))
		}
	}
	ts, bn := word(res[lpTimestamp]), word(res[lpBlock])
	if !ts.IsUint64() || !bn.IsUint64() {
		return nil, upstreamGarbage(fmt.Errorf("handler %s: block %s at time %s", q.Handler.Hex(), bn, ts))
	}
	st.Timestamp, st.Block = ts.Uint64(), bn.Uint64()
	if res[lpPaused].OK {
		st.Paused, _ = unpackOne[bool](contracts.Handler, "paused", res[lpPaused].Data)
	}
	st.HandlerWhitelisted = word(res[lpPMHandler]).Sign() != 0
	st.AppWhitelisted = word(res[lpHandlerApp]).Sign() != 0
	if st.Range, err = decodeRange(res[lpTokenIDs].Data); err != nil {
		return nil, upstreamGarbage(fmt.Errorf("handler %s: tokenIds: %w", q.Handler.Hex(), err))
	}
	st.Shares = word(res[lpShares])
	st.Reserved, st.LastReserve, st.Cooldown = new(big.Int), 0, 0
	if st.Format == HandlerFormatV2 {
		if d := res[lpReserved]; d.OK && len(d.Data) >= 64 {
			st.Reserved = new(big.Int).SetBytes(d.Data[:32])
			st.LastReserve = new(big.Int).SetBytes(d.Data[32:64]).Uint64()
		}
		st.Cooldown = word(res[lpCooldown]).Uint64()
	}
	st.LockedBlockDuration = word(res[lpLockedBlocks]).Uint64()
	if l := res[lpPoolListed]; l.OK && len(l.Data) == 32 && st.Format == HandlerFormatV2 {
		st.V3, st.PoolWhitelisted = true, word(l).Sign() != 0
	}
	for i := range q.Markets {
		st.PoolApproved = append(st.PoolApproved, word(res[lpFixed+i]).Sign() != 0)
	}
	return st, nil
}

// word is the first word of a successful answer as an unsigned integer; 0
// for a failed or short one.
func word(r Result) *big.Int {
	if !r.OK || len(r.Data) < 32 {
		return new(big.Int)
	}
	return new(big.Int).SetBytes(r.Data[:32])
}

// decodeRange reads tokenIds' totalLiquidity, totalSupply and
// liquidityUsed (words 0-2, both generations), lastDonation and
// donatedLiquidity (words 7-8) and V2's reservedLiquidity (word 12).
func decodeRange(d []byte) (RangeState, error) {
	w := func(i int) *big.Int {
		if len(d) < 32*(i+1) {
			return new(big.Int)
		}
		return new(big.Int).SetBytes(d[32*i : 32*(i+1)])
	}
	// lastDonation is a block number: a larger word is no handler's
	// answer, and truncated it would move the donation lock (the holdings
	// read refuses it too)
	last := w(7)
	if !last.IsUint64() {
		return RangeState{}, fmt.Errorf("lastDonation %s", last)
	}
	return RangeState{TotalLiquidity: w(0), TotalSupply: w(1), LiquidityUsed: w(2), ReservedLiquidity: w(12),
		LastDonation: last.Uint64(), DonatedLiquidity: w(8)}, nil
}
