// Package swap quotes the exercise swap of each leg (collateral -> profit
// token) with the swapper a client chose, and builds that swapper's swapData:
//
//   - uni-v3: Uniswap QuoterV2 quoteExactInputSingle by eth_call, all legs
//     in one JSON-RPC batch; swapData = abi.encode(uint24 fee, uint256 minOut).
//   - 1inch: the 1inch v5.2 swap API, one HTTP request per leg in parallel;
//     swapData = the router calldata it returns.
//
// Quotes are raw base-unit integers; minOut applies the client's slippage.
package swap

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
)

// Request is one leg's swap.
type Request struct {
	TokenIn  common.Address
	TokenOut common.Address
	AmountIn *big.Int
	// Fee is the Uniswap fee tier to route through (the market's prime pool's).
	Fee      uint32
	Slippage clamm.Slippage
	// Swapper is the swapper contract that will hold tokenIn and swap;
	// Receiver gets tokenOut (the option market).
	Swapper  common.Address
	Receiver common.Address
}

// Quote is one leg's expected output and the swapper's swapData.
type Quote struct {
	AmountOut *big.Int
	MinOut    *big.Int
	SwapData  []byte
}

// Quoter quotes a batch of legs; the answer is in request order.
type Quoter interface {
	Quote(ctx context.Context, reqs []Request) ([]Quote, error)
}
