package clamm

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// ExerciseParams is the market's ExerciseOptionParams: one entry per leg, in
// opTickMap order (the contract reverts with ArrayLenMismatch otherwise).
type ExerciseParams struct {
	OptionID            *big.Int
	Swapper             []common.Address
	SwapData            [][]byte
	LiquidityToExercise []*big.Int
}

// ExerciseCalldata ABI-encodes exerciseOption(params) (selector 0x32f530a7).
func ExerciseCalldata(p ExerciseParams) ([]byte, error) {
	if len(p.Swapper) != len(p.SwapData) || len(p.Swapper) != len(p.LiquidityToExercise) {
		return nil, fmt.Errorf("exercise params: %d swappers, %d swapData, %d liquidities", len(p.Swapper), len(p.SwapData), len(p.LiquidityToExercise))
	}
	arg := struct {
		OptionId            *big.Int
		Swapper             []common.Address
		SwapData            [][]byte
		LiquidityToExercise []*big.Int
	}{p.OptionID, p.Swapper, p.SwapData, p.LiquidityToExercise}
	return contracts.PackChecked(contracts.OptionMarketV2, "exerciseOption", arg)
}

// UniV3SwapData is the uni-v3 swapper's swapData: abi.encode(uint24 fee,
// uint256 amountOutMinimum).
func UniV3SwapData(fee uint32, amountOutMinimum *big.Int) ([]byte, error) {
	return contracts.UniV3SwapData.Pack(new(big.Int).SetUint64(uint64(fee)), amountOutMinimum)
}
