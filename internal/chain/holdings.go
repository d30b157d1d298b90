package chain

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// HoldingsReader reads liquidity providers' positions (holdings) at the head: a holder's
// shares of handler ranges, the ranges' TokenIdInfo, the holder's
// reservations, the handlers' donation lock and reserve cooldown, and the
// pools' prices, in one round trip once the pools' tokens are known (they
// are read once per immutables TTL, all new pools in one ChainedRead).
type HoldingsReader struct {
	r     *Reader
	pools *cache.Cache[HoldingPool]
}

// NewHoldingsReader returns a holdings reader over r's node.
func NewHoldingsReader(r *Reader) *HoldingsReader {
	return &HoldingsReader{r: r, pools: cache.New[HoldingPool](cache.Options{MaxEntries: 4096, FillTimeout: r.timeout})}
}

// HoldingKey names one position to read: the holder's shares of tokenId of
// handler, a range [TickLower, TickUpper) in pool.
type HoldingKey struct {
	Handler, Pool        common.Address
	TokenID              *big.Int
	TickLower, TickUpper int
}

// HoldingPool is a pool's tokens and its price at the head, and its
// global fee growth per unit of liquidity of each token (nil when the
// pool does not answer Uniswap V3's getters).
type HoldingPool struct {
	PoolState
	Token0, Token1  Token
	FeeGrowthGlobal [2]*big.Int
}

// HoldingRange is a range's TokenIdInfo, the fields the LP reads use.
type HoldingRange struct {
	TotalLiquidity, TotalSupply, LiquidityUsed *big.Int
	LastDonation                               uint64
	DonatedLiquidity                           *big.Int
	// ReservedLiquidity is nil for a V1 handler (12-word TokenIdInfo).
	ReservedLiquidity *big.Int
	// TokensOwed and FeeGrowthInsideLast are the swap fees the handler
	// owes the range and the pool's growth at its last poke.
	TokensOwed, FeeGrowthInsideLast [2]*big.Int
	// TickFeeGrowthOutside is the pool's ticks(tickLower) and
	// ticks(tickUpper) feeGrowthOutside of each token, [tick][token]; nil
	// when the pool does not answer ticks.
	TickFeeGrowthOutside [2][2]*big.Int
}

// Holding is one position at the head.
type Holding struct {
	Shares *big.Int
	Range  HoldingRange
	// LockedBlockDuration is the handler's donation lock, in blocks.
	LockedBlockDuration uint64
	// V2 is true for a handler with reservations (reserveCooldown answers);
	// Reserved, LastReserve and ReserveCooldown are set only then.
	V2              bool
	Reserved        *big.Int
	LastReserve     uint64
	ReserveCooldown uint64
}

// HoldingsView is a read of several positions of one holder.
type HoldingsView struct {
	// ChainBlock and Timestamp are the number and time of the block the
	// reads ran at (the first call's, when the read took several calls):
	// the chain's own number (ArbSys's on Arbitrum). Block is the
	// block.number the chain's code sees there, what a handler's donation
	// lock counts in: the same elsewhere, on Arbitrum an estimate of
	// Ethereum's block number.
	ChainBlock, Block, Timestamp uint64
	Pools                        map[common.Address]HoldingPool
	Positions                    []Holding
}

// holdingsPerCall bounds the positions one aggregate3 reads: each costs about 30
// storage reads; 150 of them stay well under nodes' eth_call gas caps.
const holdingsPerCall = 150

// holdingCalls are the calls of one position: balanceOf, tokenIds,
// reservedLiquidityPerUser, and its pool's ticks at the two bounds.
const holdingCalls = 5

// Positions reads user's positions keys at the head: every aggregate3 in
// one JSON-RPC batch, alongside the read of the tokens of pools not seen
// before (poolFacts: the batch does not need them, so a first sight costs
// no round trip more). A handler that answers tokenIds with neither 12 nor
// 13 words, or balanceOf not at all, is not a handler: RPC_ERROR naming it.
func (l *HoldingsReader) Positions(ctx context.Context, user common.Address, keys []HoldingKey) (*HoldingsView, error) {
	var pools map[common.Address]HoldingPool
	facts := make(chan error, 1)
	go func() {
		var err error
		pools, err = l.poolFacts(ctx, keys)
		facts <- err
	}()
	keyPools := map[common.Address]HoldingPool{}
	for _, k := range keys {
		keyPools[k.Pool] = HoldingPool{}
	}
	poolList := sortedPools(keyPools)
	handlers := map[common.Address]bool{}
	var handlerList []common.Address
	for _, k := range keys {
		if !handlers[k.Handler] {
			handlers[k.Handler] = true
			handlerList = append(handlerList, k.Handler)
		}
	}
	h, mc := contracts.HoldingsHandler, contracts.Multicall3
	head := []Call{{l.r.multicall, pack(contracts.Multicall3Block, "getBlockNumber")}, {l.r.multicall, pack(mc, "getCurrentBlockTimestamp")},
		{contracts.ArbSysAddress, pack(contracts.ArbSys, "arbBlockNumber")}}
	for _, p := range poolList {
		head = append(head, Call{p, pack(contracts.Pool, "slot0")}, Call{p, pack(contracts.PoolFees, "feeGrowthGlobal0X128")}, Call{p, pack(contracts.PoolFees, "feeGrowthGlobal1X128")})
	}
	for _, a := range handlerList {
		head = append(head, Call{a, pack(h, "lockedBlockDuration")}, Call{a, pack(h, "reserveCooldown")})
	}
	batches := [][]Call{head}
	for start := 0; start < len(keys); start += holdingsPerCall {
		var calls []Call
		for _, k := range keys[start:min(start+holdingsPerCall, len(keys))] {
			calls = append(calls, Call{k.Handler, pack(h, "balanceOf", user, k.TokenID)}, Call{k.Handler, pack(h, "tokenIds", k.TokenID)},
				Call{k.Handler, pack(h, "reservedLiquidityPerUser", k.TokenID, user)},
				Call{k.Pool, pack(contracts.PoolFees, "ticks", big.NewInt(int64(k.TickLower)))}, Call{k.Pool, pack(contracts.PoolFees, "ticks", big.NewInt(int64(k.TickUpper)))})
		}
		batches = append(batches, calls)
	}
	res, err := l.r.aggregateBatch(ctx, batches)
	if ferr := <-facts; ferr != nil { // a pool's own failure names it first, as when read before
		return nil, ferr
	}
	if err != nil {
		return nil, err
	}
	return l.decodeHoldings(res, keys, pools, poolList, handlerList)
}

type holdingHandler struct {
	locked, cooldown uint64
	v2               bool
}

func (l *HoldingsReader) decodeHoldings(res [][]Result, keys []HoldingKey, pools map[common.Address]HoldingPool, poolList, handlerList []common.Address) (*HoldingsView, error) {
	head := res[0]
	v := &HoldingsView{Pools: map[common.Address]HoldingPool{}, Positions: make([]Holding, len(keys))}
	var err error
	if v.Block, err = holdingWord(head[0], "getBlockNumber"); err != nil {
		return nil, err
	}
	if v.Timestamp, err = holdingWord(head[1], "getCurrentBlockTimestamp"); err != nil {
		return nil, err
	}
	// ArbSys answers on Arbitrum only; elsewhere its address has no code.
	v.ChainBlock = v.Block
	if n, err := holdingWord(head[2], "arbBlockNumber"); err == nil {
		v.ChainBlock = n
	}
	at := 3
	for _, p := range poolList {
		if !head[at].OK {
			// a pool the subgraph names that does not answer slot0: the
			// upstreams disagree, a 502 naming it (it was a bare error, a 500)
			return nil, problem.Wrap(problem.RPCError, &CallFailedError{Target: p, Revert: head[at].Data}, "pool %s does not answer slot0", p.Hex())
		}
		st, err := l.r.decodeSlot0(p, head[at].Data)
		if err != nil {
			return nil, upstreamGarbage(fmt.Errorf("pool %s: %w", p.Hex(), err))
		}
		pool := pools[p]
		pool.PoolState = st
		for k := range pool.FeeGrowthGlobal {
			if r := head[at+1+k]; r.OK && len(r.Data) == 32 {
				pool.FeeGrowthGlobal[k] = new(big.Int).SetBytes(r.Data)
			}
		}
		v.Pools[p] = pool
		at += 3
	}
	facts := map[common.Address]holdingHandler{}
	for _, a := range handlerList {
		var f holdingHandler
		if f.locked, err = holdingWord(head[at], "lockedBlockDuration"); err != nil {
			return nil, notALiquidityHandler(a, err)
		}
		if head[at+1].OK && len(head[at+1].Data) == 32 {
			f.v2 = true
			f.cooldown, err = holdingWord(head[at+1], "reserveCooldown")
			if err != nil {
				return nil, notALiquidityHandler(a, err)
			}
		}
		facts[a] = f
		at += 2
	}
	for i, k := range keys {
		calls := res[1+i/holdingsPerCall][holdingCalls*(i%holdingsPerCall):]
		p, err := decodeHolding(calls[:holdingCalls], facts[k.Handler])
		if err != nil {
			return nil, notALiquidityHandler(k.Handler, fmt.Errorf("position %s: %w", k.TokenID, err))
		}
		v.Positions[i] = p
	}
	return v, nil
}

func decodeHolding(calls []Result, f holdingHandler) (Holding, error) {
	p := Holding{LockedBlockDuration: f.locked, V2: f.v2, ReserveCooldown: f.cooldown}
	if !calls[0].OK || len(calls[0].Data) != 32 {
		return p, fmt.Errorf("balanceOf answered %d bytes (ok %v)", len(calls[0].Data), calls[0].OK)
	}
	p.Shares = new(big.Int).SetBytes(calls[0].Data)
	w := calls[1].Data
	words := len(w) / 32
	if !calls[1].OK || len(w)%32 != 0 || (words != contracts.HandlerV1Words && words != contracts.HandlerV2Words) {
		return p, fmt.Errorf("tokenIds answered %d bytes", len(w))
	}
	word := func(i int) *big.Int { return new(big.Int).SetBytes(w[32*i : 32*i+32]) }
	p.Range = HoldingRange{TotalLiquidity: word(0), TotalSupply: word(1), LiquidityUsed: word(2), DonatedLiquidity: word(8),
		FeeGrowthInsideLast: [2]*big.Int{word(3), word(4)}, TokensOwed: [2]*big.Int{word(5), word(6)}}
	p.Range.TickFeeGrowthOutside = tickGrowth(calls[3:5])
	lastDonation := word(7)
	if !lastDonation.IsUint64() {
		return p, fmt.Errorf("lastDonation %s", lastDonation)
	}
	p.Range.LastDonation = lastDonation.Uint64()
	if words == contracts.HandlerV2Words {
		p.Range.ReservedLiquidity = word(12)
	}
	for _, x := range []*big.Int{p.Range.TotalLiquidity, p.Range.TotalSupply, p.Range.LiquidityUsed, p.Range.DonatedLiquidity, p.Range.ReservedLiquidity} {
		if x != nil && x.BitLen() > 128 {
			return p, fmt.Errorf("tokenIds: a uint128 field holds %s", x)
		}
	}
	if p.V2 {
		r := calls[2]
		if !r.OK || len(r.Data) != 64 {
			return p, fmt.Errorf("reservedLiquidityPerUser answered %d bytes", len(r.Data))
		}
		p.Reserved = new(big.Int).SetBytes(r.Data[:32])
		last := new(big.Int).SetBytes(r.Data[32:])
		if !last.IsUint64() || p.Reserved.BitLen() > 128 {
			return p, fmt.Errorf("reservedLiquidityPerUser (%s, %s)", p.Reserved, last)
		}
		p.LastReserve = last.Uint64()
	}
	return p, nil
}

// tickGrowth decodes the pool's ticks(tickLower) and ticks(tickUpper)
// feeGrowthOutside words; nil when either answer is not a known layout.
// Uniswap V3's ticks (and its PancakeSwap and Sushi forks') is eight
// words with the fee growth third and fourth; Aerodrome Slipstream's
// CLPool puts stakedLiquidityNet third, ten words with the fee growth
// fourth and fifth. The answer's length tells them apart, whatever the
// configuration names the pool's DEX.
func tickGrowth(ticks []Result) [2][2]*big.Int {
	var out [2][2]*big.Int
	for i, r := range ticks {
		var at int
		switch {
		case !r.OK:
			return [2][2]*big.Int{}
		case len(r.Data) == contracts.TicksUniswapV3Words*32:
			at = 2
		case len(r.Data) == contracts.TicksSlipstreamWords*32:
			at = 3
		default:
			return [2][2]*big.Int{}
		}
		out[i] = [2]*big.Int{new(big.Int).SetBytes(r.Data[32*at : 32*at+32]), new(big.Int).SetBytes(r.Data[32*at+32 : 32*at+64])}
	}
	return out
}

func holdingWord(r Result, what string) (uint64, error) {
	if !r.OK || len(r.Data) != 32 {
		return 0, upstreamGarbage(fmt.Errorf("%s answered %d bytes (ok %v)", what, len(r.Data), r.OK))
	}
	x := new(big.Int).SetBytes(r.Data)
	if !x.IsUint64() {
		return 0, upstreamGarbage(fmt.Errorf("%s: %s", what, x))
	}
	return x.Uint64(), nil
}

func notALiquidityHandler(a common.Address, err error) error {
	return problem.Wrap(problem.RPCError, err, "%s does not answer as a liquidity handler", a.Hex())
}

func sortedPools(m map[common.Address]HoldingPool) []common.Address {
	out := make([]common.Address, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b common.Address) int { return bytes.Compare(a[:], b[:]) })
	return out
}

// poolFacts returns the tokens of every pool keys name, reading the ones
// not cached in one ChainedRead (token0, token1, then each token's decimals
// and symbol, targets taken from the answers).
func (l *HoldingsReader) poolFacts(ctx context.Context, keys []HoldingKey) (map[common.Address]HoldingPool, error) {
	out := map[common.Address]HoldingPool{}
	var cold []common.Address
	for _, k := range keys {
		if _, seen := out[k.Pool]; seen {
			continue
		}
		if f, age, ok := l.pools.Peek(k.Pool.Hex()); ok && age < l.r.ttl {
			out[k.Pool] = f
			continue
		}
		out[k.Pool] = HoldingPool{}
		cold = append(cold, k.Pool)
	}
	if len(cold) == 0 {
		return out, nil
	}
	p, e := contracts.Pool, contracts.ERC20
	var calls []contracts.ChainedCall
	for _, pool := range cold {
		base := int64(len(calls))
		calls = append(calls,
			contracts.ChainedCall{Target: pool, Data: pack(p, "token0")},
			contracts.ChainedCall{Target: pool, Data: pack(p, "token1")},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 1), Data: pack(e, "decimals")},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 1), Data: pack(e, "symbol")},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 2), Data: pack(e, "decimals")},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 2), Data: pack(e, "symbol")})
	}
	res, err := l.r.chainedReadOrRounds(ctx, calls)
	if err != nil {
		return nil, err
	}
	for i, pool := range cold {
		f, err := decodePoolTokens(res[6*i : 6*i+6])
		if err != nil {
			return nil, badMarketState(fmt.Errorf("pool %s: %w", pool.Hex(), err))
		}
		out[pool] = f
		l.pools.Set(pool.Hex(), f, cache.Policy{TTL: l.r.ttl})
	}
	return out, nil
}

func decodePoolTokens(res []Result) (HoldingPool, error) {
	var f HoldingPool
	for i, t := range []*Token{&f.Token0, &f.Token1} {
		if !res[i].OK || len(res[i].Data) != 32 {
			return f, fmt.Errorf("token%d() did not answer an address", i)
		}
		t.Address = common.BytesToAddress(res[i].Data[12:])
		dec, sym := res[2+2*i], res[3+2*i]
		d, err := unpackOne[uint8](contracts.ERC20, "decimals", dec.Data)
		if !dec.OK || err != nil || d > maxDecimals {
			return f, fmt.Errorf("token %s: decimals", t.Address.Hex())
		}
		t.Decimals = d
		if sym.OK {
			t.Symbol = decodeSymbol(sym.Data)
		}
	}
	return f, nil
}

// PoolTokens returns the tokens of pools (cached for the immutables TTL;
// the pools not cached are read in one ChainedRead). The prices are not
// read: the returned PoolStates are zero.
func (l *HoldingsReader) PoolTokens(ctx context.Context, pools []common.Address) (map[common.Address]HoldingPool, error) {
	keys := make([]HoldingKey, len(pools))
	for i, p := range pools {
		keys[i] = HoldingKey{Pool: p}
	}
	return l.poolFacts(ctx, keys)
}
