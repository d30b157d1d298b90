package contracts

import "github.com/ethereum/go-ethereum/common"

// HandlerV3Pools is what only a V3 single-tick handler answers
// (UniswapV3SingleTickLiquidityHandlerV3 and its Pancake, Sushi and Kodiak
// twins, stryke-xyz/clamm 80766cc): whitelistedPools(pool), the pools its
// mintPositionHandler takes. A V1 or V2 handler has no such getter (the
// call reverts), so the answer also tells the generation apart.
var HandlerV3Pools = mustABI(`[
 {"type":"function","name":"whitelistedPools","stateMutability":"view","inputs":[{"name":"","type":"address"}],"outputs":[{"name":"","type":"bool"}]}
]`)

// PositionManagerV2Reserve is DopexV2PositionManagerV2's way to a V3
// handler's reservations: reserveLiquidity(handler, data) and
// withdrawReserveLiquidity(handler, data) call the handler with the
// caller as the account. A V3 handler takes them from whitelisted apps
// only, so a liquidity provider cannot send them to it directly as to a
// V2 handler. Both return nothing.
var PositionManagerV2Reserve = mustABI(`[
 {"type":"function","name":"reserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_reserveLiquidityData","type":"bytes"}],"outputs":[]},
 {"type":"function","name":"withdrawReserveLiquidity","stateMutability":"nonpayable","inputs":[{"name":"_handler","type":"address"},{"name":"_withdrawReserveLiquidityData","type":"bytes"}],"outputs":[]}
]`)

// ViaPositionManagerV2 is the position manager V2's call of method
// (reserveLiquidity or withdrawReserveLiquidity) for handler with the
// handler's payload (a V2 handler's own call takes the same payload).
func ViaPositionManagerV2(method string, handler common.Address, payload []byte) ([]byte, error) {
	return PositionManagerV2Reserve.Pack(method, handler, payload)
}

// V3Errors are the custom errors of the V3 handlers and the position
// manager V2, so that a simulated revert names them as it names the
// earlier generations' (the Pancake, Sushi and Kodiak twins prefix their
// own contract names; the Uniswap one is the handler the test protocol
// stands in for).
var V3Errors = mustABI(`[
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV3__NotWhitelisted","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV3__InRangeLP","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV3__InsufficientLiquidity","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV3__BeforeReserveCooldown","inputs":[]},
 {"type":"error","name":"UniswapV3SingleTickLiquidityHandlerV3__NotWhitelistedPool","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedApp","inputs":[]},
 {"type":"error","name":"DopexV2PositionManagerV2__NotWhitelistedHandler","inputs":[]}
]`)
