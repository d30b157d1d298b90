// Package contracts holds the ABIs the gateway speaks: the Stryke (Dopex V2)
// option market, Uniswap-V3-style pools and QuoterV2, ERC20 and Multicall3;
// and the compiled code of the one contract of its own, ChainedRead
// (sol/ChainedRead.sol), which it runs without deploying it.
// The fragments are written from the deployed contracts' signatures; the
// selectors are pinned by tests against the values in domain.md, so a typo in
// a type cannot silently produce calldata that reverts.
package contracts

import (
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// OptionMarketV2 is DopexV2OptionMarketV2 (6-field OptionTicks with hook).
var OptionMarketV2 = mustABI(`[
 {"type":"function","name":"callAsset","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"putAsset","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"primePool","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"name","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]},
 {"type":"function","name":"ownerOf","stateMutability":"view","inputs":[{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"getCurrentPricePerCallAsset","stateMutability":"view","inputs":[{"name":"_pool","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"opData","stateMutability":"view","inputs":[{"name":"","type":"uint256"}],"outputs":[
   {"name":"opTickArrayLen","type":"uint256"},{"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},
   {"name":"expiry","type":"uint256"},{"name":"isCall","type":"bool"}]},
 {"type":"function","name":"opTickMap","stateMutability":"view","inputs":[{"name":"","type":"uint256"},{"name":"","type":"uint256"}],"outputs":[
   {"name":"handler","type":"address"},{"name":"pool","type":"address"},{"name":"hook","type":"address"},
   {"name":"tickLower","type":"int24"},{"name":"tickUpper","type":"int24"},{"name":"liquidityToUse","type":"uint256"}]},
 {"type":"function","name":"exerciseOption","stateMutability":"nonpayable","inputs":[{"name":"_params","type":"tuple","components":[
   {"name":"optionId","type":"uint256"},{"name":"swapper","type":"address[]"},{"name":"swapData","type":"bytes[]"},{"name":"liquidityToExercise","type":"uint256[]"}]}],
  "outputs":[{"name":"assetToUse","type":"address"},{"name":"assetToGet","type":"address"},{"name":"totalProfit","type":"uint256"},{"name":"totalAssetRelocked","type":"uint256"}]},
 {"type":"function","name":"multicall","stateMutability":"nonpayable","inputs":[{"name":"data","type":"bytes[]"}],"outputs":[{"name":"results","type":"bytes[]"}]},
 {"type":"event","name":"LogMintOption","anonymous":false,"inputs":[
   {"name":"user","type":"address","indexed":false},{"name":"tokenId","type":"uint256","indexed":false},{"name":"isCall","type":"bool","indexed":false},
   {"name":"premiumAmount","type":"uint256","indexed":false},{"name":"totalAssetWithdrawn","type":"uint256","indexed":false},{"name":"protocolFees","type":"uint256","indexed":false}]},
 {"type":"event","name":"LogExerciseOption","anonymous":false,"inputs":[
   {"name":"user","type":"address","indexed":false},{"name":"tokenId","type":"uint256","indexed":false},
   {"name":"totalProfit","type":"uint256","indexed":false},{"name":"totalAssetRelocked","type":"uint256","indexed":false}]}
]`)

// Pool is the part of a Uniswap-V3-style pool the gateway reads. Its slot0
// (Uniswap's, which packs the call) is decoded through the layout of the
// pool's DEX (DecodeSlot0), because forks differ in its later fields.
var Pool = mustABI(`[
 {"type":"function","name":"token0","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"token1","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"address"}]},
 {"type":"function","name":"fee","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint24"}]},
 {"type":"function","name":"tickSpacing","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"int24"}]},
 {"type":"function","name":"slot0","stateMutability":"view","inputs":[],"outputs":[
   {"name":"sqrtPriceX96","type":"uint160"},{"name":"tick","type":"int24"},{"name":"observationIndex","type":"uint16"},
   {"name":"observationCardinality","type":"uint16"},{"name":"observationCardinalityNext","type":"uint16"},
   {"name":"feeProtocol","type":"uint8"},{"name":"unlocked","type":"bool"}]}
]`)

// ERC20 metadata getters.
var ERC20 = mustABI(`[
 {"type":"function","name":"decimals","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint8"}]},
 {"type":"function","name":"symbol","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"string"}]}
]`)

// Multicall3 aggregate3 and the block timestamp and number getters, deployed at the
// same address on every chain.
var Multicall3 = mustABI(`[
 {"type":"function","name":"getCurrentBlockTimestamp","stateMutability":"view","inputs":[],"outputs":[{"name":"timestamp","type":"uint256"}]},
 {"type":"function","name":"getBlockNumber","stateMutability":"view","inputs":[],"outputs":[{"name":"blockNumber","type":"uint256"}]},
 {"type":"function","name":"aggregate3","stateMutability":"payable","inputs":[{"name":"calls","type":"tuple[]","components":[
   {"name":"target","type":"address"},{"name":"allowFailure","type":"bool"},{"name":"callData","type":"bytes"}]}],
  "outputs":[{"name":"returnData","type":"tuple[]","components":[{"name":"success","type":"bool"},{"name":"returnData","type":"bytes"}]}]}
]`)

// QuoterV2 of Uniswap V3 periphery.
var QuoterV2 = mustABI(`[
 {"type":"function","name":"quoteExactInputSingle","stateMutability":"nonpayable","inputs":[{"name":"params","type":"tuple","components":[
   {"name":"tokenIn","type":"address"},{"name":"tokenOut","type":"address"},{"name":"amountIn","type":"uint256"},
   {"name":"fee","type":"uint24"},{"name":"sqrtPriceLimitX96","type":"uint160"}]}],
  "outputs":[{"name":"amountOut","type":"uint256"},{"name":"sqrtPriceX96After","type":"uint160"},
   {"name":"initializedTicksCrossed","type":"uint32"},{"name":"gasEstimate","type":"uint256"}]}
]`)

// Multicall3Call is one element of aggregate3's input.
type Multicall3Call struct {
	Target       common.Address
	AllowFailure bool
	CallData     []byte
}

// Multicall3Result is one element of aggregate3's output.
type Multicall3Result struct {
	Success    bool
	ReturnData []byte
}

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic("contracts: " + err.Error())
	}
	return a
}

// OptionMarketErrors are the custom errors of DopexV2OptionMarket(V2), for
// decoding a simulated exercise's revert into a name clients can act on.
var OptionMarketErrors = mustABI(`[
 {"type":"error","name":"DopexV2OptionMarket__IVNotSet","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__NotValidStrikeTick","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__PoolNotApproved","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__MaxCostAllowanceExceeded","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__MaxOptionBuyReached","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__NotOwnerOrDelegator","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__ArrayLenMismatch","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__OptionExpired","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__OptionNotExpired","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__NotEnoughAfterSwap","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__NotApprovedSettler","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__InvalidPool","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__NotIVSetter","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__EmptyOption","inputs":[]},
 {"type":"error","name":"DopexV2OptionMarket__InvalidCollateralTokenSplitting","inputs":[]}
]`)

// UniV3SwapData is the ABI encoding of the swapper's swapData for the
// uni-v3 swapper: abi.encode(uint24 fee, uint256 amountOutMinimum).
var UniV3SwapData = mustArgs("uint24", "uint256")

func mustArgs(types ...string) abi.Arguments {
	args := make(abi.Arguments, len(types))
	for i, t := range types {
		ty, err := abi.NewType(t, "", nil)
		if err != nil {
			panic("contracts: " + err.Error())
		}
		args[i] = abi.Argument{Type: ty}
	}
	return args
}
