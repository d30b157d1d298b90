package contracts

import (
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// MarketPositionManager is the option market's positionManager() getter
// (an immutable in both DopexV2OptionMarket and DopexV2OptionMarketV2).
var MarketPositionManager = mustABI(`[
 {"type":"function","name":"positionManager","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}
]`)

// PositionManager is the part of DopexV2PositionManager the strikes chain
// reads: whether a handler may be used by an app (the option market).
var PositionManager = mustABI(`[
 {"type":"function","name":"whitelistedHandlersWithApp","stateMutability":"view","inputs":[{"name":"","type":"bytes32"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// Handler is the part of a single-tick liquidity handler the strikes chain
// reads: OpenZeppelin Pausable's paused(), and the tokenIds getter, whose
// answer size tells the handler's generation: V1's TokenIdInfo has 12 static
// fields, V2's and V3's 13 (reservedLiquidity added). The V2 shape is given.
var Handler = mustABI(`[
 {"type":"function","name":"paused","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"tokenIds","stateMutability":"view","inputs":[{"name":"","type":"uint256"}],"outputs":[
   {"name":"totalLiquidity","type":"uint128"},{"name":"totalSupply","type":"uint128"},{"name":"liquidityUsed","type":"uint128"},
   {"name":"feeGrowthInside0LastX128","type":"uint256"},{"name":"feeGrowthInside1LastX128","type":"uint256"},
   {"name":"tokensOwed0","type":"uint128"},{"name":"tokensOwed1","type":"uint128"},{"name":"lastDonation","type":"uint64"},
   {"name":"donatedLiquidity","type":"uint128"},{"name":"token0","type":"address"},{"name":"token1","type":"address"},
   {"name":"fee","type":"uint24"},{"name":"reservedLiquidity","type":"uint128"}]}
]`)

// Handler generations by the word count of a tokenIds answer.
const (
	HandlerV1Words = 12 // UniswapV3SingleTickLiquidityHandler: no hook in the use payload
	HandlerV2Words = 13 // ...HandlerV2 and V3: abi.encode(pool, hook, tickLower, tickUpper, liquidity, hookData)
)

// WhitelistKey is DopexV2PositionManager's whitelistedHandlersWithApp key:
// keccak256(abi.encode(handler, app)), two left-padded address words.
func WhitelistKey(handler, app common.Address) common.Hash {
	var buf [64]byte
	copy(buf[12:32], handler[:])
	copy(buf[44:64], app[:])
	return crypto.Keccak256Hash(buf[:])
}

// Hook is the part of a handler hook (IHook, OpenZeppelin Ownable) the
// option-markets read probes: onPositionUse(bytes) is what a handler calls
// when an option uses a range behind the hook, and it reverts to refuse;
// owner() answers a word from any deployed hook (an address without code
// answers nothing, and a call to it would look like a yes).
var Hook = mustABI(`[
 {"type":"function","name":"onPositionUse","stateMutability":"nonpayable","inputs":[{"name":"data","type":"bytes"}],"outputs":[]},
 {"type":"function","name":"owner","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]}
]`)
