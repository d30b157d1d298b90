// Package swap quotes the exercise swap of each leg (collateral -> profit
// token) with the swapper a client chose, and builds that swapper's swapData:
//
//   - uni-v3: Uniswap QuoterV2 quoteExactInputSingle by eth_call, all legs
//     in one JSON-RPC batch (a leg with no pool fails early), through the
//     quote contract of the leg's DEX (QuoterV2's ABI is shared by
//     Uniswap's forks); a DEX without one is not quoted: the exercise's
//     sequential simulation gives its output (Quote.Source "simulation");
//     swapData =
//     abi.encode(uint24 fee, uint256 minOut), minOut = floor(out * (100 -
//     slippage) / 100) of the output the leg's swap has in the exercise's
//     sequence (the service simulates it; Final builds the swapData).
//   - 1inch: the 1inch v5.2 swap API, one HTTP request per leg in parallel;
//     swapData = the router calldata it returns, unchanged; the minimum is
//     the calldata's own minReturn (OneInchSwapper checks nothing itself).
//
// Amounts are raw base-unit integers.
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
	// Dex is the DEX label of the leg's handler: a uni-v3 quoter quotes it
	// through that DEX's quote contract (UniV3.QuoterByDex).
	Dex string
}

// Quote is one leg's route as the swapper answered it at the current
// state, before the legs are simulated in sequence.
type Quote struct {
	// AmountOut is the swapper's estimate for this leg alone at the current
	// state; the exercise's sequence may pay less (earlier legs move the pool).
	AmountOut *big.Int
	// SwapData is what the leg's simulation sends: for uni-v3 the fee with
	// no minimum (the minimum follows from the simulated output), for 1inch
	// the router calldata that will be sent unchanged.
	SwapData []byte
	// MinOut is the minimum SwapData itself enforces (1inch: minReturn
	// decoded from the router calldata); nil when Final sets it.
	MinOut *big.Int
	// Source names where AmountOut came from: "quoterV2 <address>", "1inch
	// api", or "simulation" when no quote contract serves the leg's DEX
	// (AmountOut is then nil: the exercise's own simulation, which every
	// prepare runs from the owner at the head, gives the leg's output).
	Source string
}

// Quoter quotes a batch of legs and finishes each leg's swapData once the
// exercise has been simulated in sequence.
type Quoter interface {
	// Quote answers in request order.
	Quote(ctx context.Context, reqs []Request) ([]Quote, error)
	// Final is the swapData to send for a leg whose swap, simulated after
	// the earlier legs, delivered out; and the least that swapData lets the
	// swap deliver without reverting.
	Final(req Request, q Quote, out *big.Int) (swapData []byte, minOut *big.Int, err error)
	// SwapperFor is the swapper contract a leg on the given DEX (the
	// handler's DEX label) swaps through.
	SwapperFor(dex string) common.Address
	// Explain says why a leg was left out, given the reason its swap's
	// simulated revert gave: a swapper that drops its router's reason
	// says what the bare revert means for it.
	Explain(revertReason string) string
	// OnChain reports whether quotes are read from the chain at the
	// answer's block (no API key, no rate limit, no other party's view of
	// the price): such a quoter can value every option of a page, as the
	// expiry reads do, where an API quoter would spend its rate limit.
	OnChain() bool
}

// Contracts are the swapper contracts a quoter's legs go through: one
// address, or one per DEX on chains where each DEX has its own (Mantle).
type Contracts struct {
	Address common.Address
	ByDex   map[string]common.Address
}

// SwapperFor implements Quoter: the DEX's own swapper, else the one address.
func (c Contracts) SwapperFor(dex string) common.Address {
	if a, ok := c.ByDex[dex]; ok {
		return a
	}
	return c.Address
}
