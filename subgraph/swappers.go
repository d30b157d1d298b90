package subgraph

import (
	"context"
	"fmt"
	"strings"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// The kinds the subgraph gives a learned swapper (schema.graphql Swapper.kind):
// what the contract answered when first seen.
const (
	// SwapperKindSwapRouter answers sr(): clamm's SwapRouterSwapper (swapData
	// abi.encode(uint24 fee, uint256 minOut)) or SwapRouter02Swapper (int24
	// tickSpacing in place of the fee).
	SwapperKindSwapRouter = "swapRouter"
	// SwapperKindOneInch answers oneInchRouter(): clamm's OneInchSwapper.
	SwapperKindOneInch = "oneInch"
	// SwapperKindUnknown answers neither.
	SwapperKindUnknown = "unknown"
)

// Swapper is a swapper contract the chain's own exercises used.
type Swapper struct {
	ID      string   `json:"id"`
	Address Address  `json:"address"`
	Kind    string   `json:"kind"`
	Router  *Address `json:"router"`
	// SwapDataWord is the first word of the swapData its first exercise
	// sent it (a fee tier or a tick spacing); nil when there was none.
	SwapDataWord  *BigInt `json:"swapDataWord"`
	FirstExercise string  `json:"firstExercise"`
	Market        Address `json:"market"`
	BlockNumber   BigInt  `json:"blockNumber"`
}

func (s Swapper) entityID() string { return s.ID }

func (s Swapper) complete() error {
	if s.BlockNumber.Int == nil || s.Kind == "" || s.FirstExercise == "" {
		return fmt.Errorf("swapper %s lacks fields", s.ID)
	}
	if s.ID != strings.ToLower(s.Address.Addr().Hex()) {
		return fmt.Errorf("swapper %s has address %s", s.ID, s.Address.Addr().Hex())
	}
	return nil
}

// Swappers reads the swappers the chain's exercises used, first seen
// first, at most first of them.
func (c *Client) Swappers(ctx context.Context, first int) ([]Swapper, Meta, error) {
	if first < 1 || first > MaxFirst {
		return nil, Meta{}, fmt.Errorf("%s: first %d outside Graph Node's limits", queries.Swappers, first)
	}
	return runPage(ctx, c, list{queries.Swappers, "swappers"}, map[string]any{"first": first, "since": "0"}, Swapper.complete)
}
