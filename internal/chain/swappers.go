package chain

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// SwapperAnswer is what one swapper contract answered to the probes that
// tell stryke's swappers apart (contracts.Swapper): the router it names
// through sr() (SwapRouterSwapper, SwapRouter02Swapper) or
// oneInchRouter() (OneInchSwapper), and whether that router holds code.
type SwapperAnswer struct {
	// Code is false when every probe answered nothing, as an account
	// without code does (or, rarely, a contract whose fallback returns
	// nothing to every call).
	Code bool
	// SwapRouter is sr()'s answer, nil when sr() did not answer an
	// address; SwapRouterCode whether that router holds code.
	SwapRouter     *common.Address
	SwapRouterCode bool
	// OneInchRouter and OneInchRouterCode are the same for oneInchRouter().
	OneInchRouter     *common.Address
	OneInchRouterCode bool
}

// swapperProbes is the number of ChainedRead calls per swapper:
// sr(), oneInchRouter(), and factory() on each router named.
const swapperProbes = 4

// ProbeSwappers asks each contract sr() and oneInchRouter() and each
// router it names for code, all in one ChainedRead (two Multicall3 rounds
// on a node that refuses an eth_call without `to`): the start-up check of
// the configured swappers (package service).
func (r *Reader) ProbeSwappers(ctx context.Context, swappers []common.Address) ([]SwapperAnswer, error) {
	if len(swappers) == 0 {
		return nil, nil
	}
	sr, inch := pack(contracts.Swapper, "sr"), pack(contracts.Swapper, "oneInchRouter")
	factory := pack(contracts.SwapRouter, "factory")
	calls := make([]contracts.ChainedCall, 0, swapperProbes*len(swappers))
	for i, a := range swappers {
		base := int64(swapperProbes * i)
		calls = append(calls,
			contracts.ChainedCall{Target: a, Data: sr},
			contracts.ChainedCall{Target: a, Data: inch},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 1), Data: factory},
			contracts.ChainedCall{TargetFrom: big.NewInt(base + 2), Data: factory})
	}
	res, err := r.chainedReadOrRounds(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]SwapperAnswer, len(swappers))
	for i := range swappers {
		out[i] = swapperAnswer(res[swapperProbes*i : swapperProbes*(i+1)])
	}
	return out, nil
}

// swapperAnswer reads one swapper's four results (ProbeSwappers' order).
func swapperAnswer(res []Result) SwapperAnswer {
	a := SwapperAnswer{Code: !answeredNothing(res[0]) || !answeredNothing(res[1])}
	if addr, ok := routerWord(res[0]); ok {
		// the router call ran (its target was this word): nothing back
		// means no code there, a revert or an answer means code
		a.SwapRouter, a.SwapRouterCode = &addr, !answeredNothing(res[2])
	}
	if addr, ok := routerWord(res[1]); ok {
		a.OneInchRouter, a.OneInchRouterCode = &addr, !answeredNothing(res[3])
	}
	return a
}

// answeredNothing: the call succeeded with no data, as a call to an
// account without code does.
func answeredNothing(r Result) bool { return r.OK && len(r.Data) == 0 }

// routerWord is the address a successful call returned as its first
// word; false when it returned less than a word or a word that is not an
// address (its high 12 bytes set).
func routerWord(r Result) (common.Address, bool) {
	if !r.OK || len(r.Data) < 32 {
		return common.Address{}, false
	}
	for _, b := range r.Data[:12] {
		if b != 0 {
			return common.Address{}, false
		}
	}
	return common.BytesToAddress(r.Data[12:32]), true
}
