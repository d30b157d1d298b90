package contracts

// HoldingsHandler is the part of a single-tick liquidity handler a liquidity
// provider's positions are read from: the holder's shares (ERC-6909 in the
// V2 handlers, ERC-1155 in V1: both balanceOf(owner, id)), the range's
// TokenIdInfo (tokenIds, the V2 shape: a V1 answer is 12 words, without
// reservedLiquidity), the donation lock's length, and for V2 handlers the
// holder's reservation and the reserve cooldown. convertToAssets is the
// getter the reads are checked against.
var HoldingsHandler = mustABI(`[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"id","type":"uint256"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"tokenIds","stateMutability":"view","inputs":[{"name":"","type":"uint256"}],"outputs":[
   {"name":"totalLiquidity","type":"uint128"},{"name":"totalSupply","type":"uint128"},{"name":"liquidityUsed","type":"uint128"},
   {"name":"feeGrowthInside0LastX128","type":"uint256"},{"name":"feeGrowthInside1LastX128","type":"uint256"},
   {"name":"tokensOwed0","type":"uint128"},{"name":"tokensOwed1","type":"uint128"},{"name":"lastDonation","type":"uint64"},
   {"name":"donatedLiquidity","type":"uint128"},{"name":"token0","type":"address"},{"name":"token1","type":"address"},
   {"name":"fee","type":"uint24"},{"name":"reservedLiquidity","type":"uint128"}]},
 {"type":"function","name":"lockedBlockDuration","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
 {"type":"function","name":"reserveCooldown","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
 {"type":"function","name":"reservedLiquidityPerUser","stateMutability":"view","inputs":[{"name":"","type":"uint256"},{"name":"","type":"address"}],"outputs":[
   {"name":"liquidity","type":"uint128"},{"name":"lastReserve","type":"uint64"}]},
 {"type":"function","name":"convertToAssets","stateMutability":"view","inputs":[{"name":"shares","type":"uint128"},{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"uint128"}]}
]`)

// Multicall3Block is Multicall3's block number getter: the donation lock
// decays by block number, so the LP read takes it in the same call.
var Multicall3Block = mustABI(`[
 {"type":"function","name":"getBlockNumber","stateMutability":"view","inputs":[],"outputs":[{"name":"blockNumber","type":"uint256"}]}
]`)

// PoolFees is the part of a Uniswap V3 pool (and its PancakeSwap and
// SushiSwap copies, which keep these getters) whose fee growth tells what
// a handler's pool position has earned since the handler last poked it:
// the global growth per unit of liquidity of each token, and each tick's
// growth on its other side (ticks' third and fourth fields).
var PoolFees = mustABI(`[
 {"type":"function","name":"feeGrowthGlobal0X128","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"feeGrowthGlobal1X128","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"ticks","stateMutability":"view","inputs":[{"name":"tick","type":"int24"}],"outputs":[
   {"name":"liquidityGross","type":"uint128"},{"name":"liquidityNet","type":"int128"},
   {"name":"feeGrowthOutside0X128","type":"uint256"},{"name":"feeGrowthOutside1X128","type":"uint256"},
   {"name":"tickCumulativeOutside","type":"int56"},{"name":"secondsPerLiquidityOutsideX128","type":"uint160"},
   {"name":"secondsOutside","type":"uint32"},{"name":"initialized","type":"bool"}]}
]`)
