package contracts

import (
	"bytes"
	_ "embed"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// PositionManagerLP is what a liquidity provider sends to
// DopexV2PositionManager (and its V2, which has the same four): mint and
// burn handler shares, several in one multicall (OpenZeppelin Multicall:
// delegatecalls into itself, msg.sender kept), and the handler whitelist
// both check first.
var PositionManagerLP = mustABI(`[
 {"type":"function","name":"mintPosition","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_mintPositionData","type":"bytes"}],"outputs":[{"name":"sharesMinted","type":"uint256"}]},
 {"type":"function","name":"burnPosition","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_burnPositionData","type":"bytes"}],"outputs":[{"name":"sharesBurned","type":"uint256"}]},
 {"type":"function","name":"multicall","stateMutability":"nonpayable","inputs":[{"name":"data","type":"bytes[]"}],"outputs":[{"name":"results","type":"bytes[]"}]},
 {"type":"function","name":"whitelistedHandlers","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// HandlerLP is the liquidity provider's side of a single-tick handler (V1
// and V2 share the getters; reserveLiquidity, withdrawReserveLiquidity,
// reservedLiquidityPerUser and reserveCooldown are V2's, called by the
// provider directly: the handler uses msg.sender).
var HandlerLP = mustABI(`[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"owner","type":"address"},{"name":"id","type":"uint256"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"convertToAssets","stateMutability":"view","inputs":[{"name":"shares","type":"uint128"},{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"uint128"}]},
 {"type":"function","name":"convertToShares","stateMutability":"view","inputs":[{"name":"assets","type":"uint128"},{"name":"tokenId","type":"uint256"}],"outputs":[{"name":"","type":"uint128"}]},
 {"type":"function","name":"whitelistedApps","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]},
 {"type":"function","name":"reserveCooldown","stateMutability":"view","inputs":[],"outputs":[{"name":"","type":"uint64"}]},
 {"type":"function","name":"reservedLiquidityPerUser","stateMutability":"view","inputs":[{"name":"","type":"uint256"},{"name":"","type":"address"}],"outputs":[{"name":"liquidity","type":"uint128"},{"name":"lastReserve","type":"uint64"}]},
 {"type":"function","name":"tokensToPullForMint","stateMutability":"view","inputs":[{"name":"_mintPositionData","type":"bytes"}],"outputs":[{"name":"","type":"address[]"},{"name":"","type":"uint256[]"}]},
 {"type":"function","name":"reserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_reserveLiquidityParam","type":"bytes"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"withdrawReserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_reserveLiquidityParam","type":"bytes"}],"outputs":[]}
]`)

// MarketPools is the option market's approvedPools(pool): mintOption
// refuses a leg on a pool it has not approved.
var MarketPools = mustABI(`[
 {"type":"function","name":"approvedPools","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// ERC20Account is an ERC20's balance and allowance getters.
var ERC20Account = mustABI(`[
 {"type":"function","name":"balanceOf","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"uint256"}]},
 {"type":"function","name":"allowance","stateMutability":"view","inputs":[{"name":"","type":"address"},{"name":"","type":"address"}],"outputs":[{"name":"","type":"uint256"}]}
]`)

// LPErrors are the custom errors a liquidity provider's transaction can
// revert with (position managers V1 and V2, handlers V1 and V2), for
// naming a simulated revert.
var LPErrors = mustABI(`[
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManager__NotWhitelistedHandler","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedHandler","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandler__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandler__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__InsufficientLiquidity","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV2__BeforeReserveCooldown","inputs":[]}
]`)

// ActionProbe is sol/ActionProbe.sol as compiled by the pinned solc: run as
// the code of the signer's own address (eth_call state override), it sends
// one transaction's call as the signer and returns what it moved.
var ActionProbe = mustArtifact(actionProbeJSON)

//go:embed sol/ActionProbe.json
var actionProbeJSON []byte

// ProbeCode is the code to place at the signer's address to run `data`
// against target and measure the signer's balances of tokens and its
// ERC-6909 balance of shareID on shareToken (zero: none).
func ProbeCode(target common.Address, data []byte, tokens []common.Address, shareToken common.Address, shareID *big.Int) ([]byte, error) {
	if shareID == nil {
		shareID = new(big.Int)
	}
	args, err := ActionProbe.ABI.Pack("", target, data, tokens, shareToken, shareID)
	if err != nil {
		return nil, fmt.Errorf("pack ActionProbe: %w", err)
	}
	return append(bytes.Clone(ActionProbe.Bytecode), args...), nil
}

// ProbeOutcome is what ActionProbe returned: whether the call succeeded,
// its return (or revert) data, and the signer's balance changes.
type ProbeOutcome struct {
	OK          bool
	Return      []byte
	TokenDeltas []*big.Int
	ShareDelta  *big.Int
}

var probeOutputs = mustArgs("bool", "bytes", "int256[]", "int256")

// UnpackProbe decodes what ActionProbe returned.
func UnpackProbe(out []byte) (ProbeOutcome, error) {
	vals, err := probeOutputs.Unpack(out)
	if err != nil {
		return ProbeOutcome{}, err
	}
	return ProbeOutcome{OK: vals[0].(bool), Return: vals[1].([]byte), TokenDeltas: vals[2].([]*big.Int), ShareDelta: vals[3].(*big.Int)}, nil
}

// Position names one range of a handler: V1 handlers' payloads and ids
// have no hook.
type Position struct {
	V1                   bool
	Handler, Pool, Hook  common.Address
	TickLower, TickUpper int
}

// Payload is the handler's position payload: V2's (pool, hook, tickLower,
// tickUpper, amount) or, for a V1 handler, (pool, tickLower, tickUpper,
// amount). amount is liquidity for a mint and a reserved withdrawal,
// shares for a burn and a reservation.
func (p Position) Payload(amount *big.Int) ([]byte, error) {
	lo, hi := big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper))
	if p.V1 {
		return mustArgs("address", "int24", "int24", "uint128").Pack(p.Pool, lo, hi, amount)
	}
	return mustArgs("address", "address", "int24", "int24", "uint128").Pack(p.Pool, p.Hook, lo, hi, amount)
}

// TokenID is the handler's id of the range: keccak256(abi.encode(handler,
// pool, hook, tickLower, tickUpper)), without the hook for a V1 handler.
func (p Position) TokenID() *big.Int {
	lo, hi := big.NewInt(int64(p.TickLower)), big.NewInt(int64(p.TickUpper))
	var enc []byte
	if p.V1 {
		enc, _ = mustArgs("address", "address", "int24", "int24").Pack(p.Handler, p.Pool, lo, hi)
	} else {
		enc, _ = mustArgs("address", "address", "address", "int24", "int24").Pack(p.Handler, p.Pool, p.Hook, lo, hi)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}
