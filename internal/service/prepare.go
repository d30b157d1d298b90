package service

import (
	"bytes"
	"context"
	"errors"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// PositionReader reads an option and simulates its exercise (package chain).
type PositionReader interface {
	Position(ctx context.Context, market common.Address, optionID *big.Int) (*chain.Position, error)
	Simulate(ctx context.Context, from, to common.Address, data []byte) ([]byte, error)
}

// PrepareRequest is a validated prepare-exercise request.
type PrepareRequest struct {
	ChainID   uint64
	Market    common.Address
	OptionID  *big.Int
	SwapperID string
	Slippage  clamm.Slippage
}

// Prepared is everything needed to exercise now.
type Prepared struct {
	// Profit is the expected profit: the sum over exercised legs of
	// (quoted output - amount owed to the LPs), raw units of Token.
	Profit string `json:"profit"`
	// Token is the profit token (the put asset for calls, the call asset for puts).
	Token    string   `json:"token"`
	SwapData []string `json:"swapData"`
	Swappers []string `json:"swappers"`
	Tx       Tx       `json:"tx"`
	// MinProfit is the least a successful exercise yields: per leg
	// max(minOut - amountReq, 0), since a leg that would deliver less than
	// the LPs are owed reverts the whole transaction instead.
	MinProfit   string `json:"minProfit"`
	ProfitToken Token  `json:"profitToken"`
	// SimulatedProfit is totalProfit from an eth_call of tx from the owner
	// at the latest block, when the market returns it (V2).
	SimulatedProfit string `json:"simulatedProfit,omitempty"`
	// Owner must send tx (or a delegate it approved).
	Owner string        `json:"owner"`
	Legs  []PreparedLeg `json:"legs"`
}

// Tx is the transaction to sign.
type Tx struct {
	To   string `json:"to"`
	Data string `json:"data"`
}

// PreparedLeg explains one leg: what is swapped, what the LPs get, what
// the swap was quoted at. Exercised is false for legs left out (no
// liquidity left, or a swap that would not cover the LPs).
type PreparedLeg struct {
	Exercised    bool   `json:"exercised"`
	Liquidity    string `json:"liquidity"`
	AmountToSwap string `json:"amountToSwap"`
	AmountReq    string `json:"amountReq"`
	AmountOut    string `json:"amountOut"`
	MinAmountOut string `json:"minAmountOut"`
}

// PrepareExercise reads the position, quotes each leg with the chosen
// swapper, builds exerciseOption calldata and simulates it from the owner.
// Legs whose quoted output does not cover what the LPs are owed are left out
// (liquidity 0, which V2 skips); an option with no such leg is not in the
// money. Nothing is returned that the simulation saw revert.
func (s *Service) PrepareExercise(ctx context.Context, req PrepareRequest) (Prepared, error) {
	up, err := s.upstreams(req.ChainID, false)
	if err != nil {
		return Prepared{}, err
	}
	sw := up.Config.Swappers[req.SwapperID]
	quoter := up.Quoters[req.SwapperID]
	if sw == nil || quoter == nil || up.Positions == nil {
		return Prepared{}, problem.InvalidParam("swapperId", "swapper %q is not configured on chain %d", req.SwapperID, req.ChainID)
	}
	var (
		info *chain.MarketInfo
		pos  *chain.Position
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { info, err = up.Chain.Market(gctx, req.Market); return })
	g.Go(func() (err error) { pos, err = up.Positions.Position(gctx, req.Market, req.OptionID); return })
	if err := g.Wait(); err != nil {
		return Prepared{}, err
	}
	if err := exercisable(req, pos); err != nil {
		return Prepared{}, err
	}

	collateral, profitTok := info.PutAsset, info.CallAsset
	if pos.Data.IsCall {
		collateral, profitTok = info.CallAsset, info.PutAsset
	}
	collateralIs0 := collateral.Address == info.Token0
	legs := make([]clamm.Leg, len(pos.Legs))
	swappers := make([]common.Address, len(pos.Legs))
	var quoteReqs []swap.Request
	var quoted []int // leg index of each quote request
	for i, l := range pos.Legs {
		swappers[i] = swapperFor(sw, up.Config.HandlerInfo(l.Handler).Name)
		if l.LiquidityToUse.Sign() == 0 {
			continue
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.LiquidityToUse, collateralIs0)
		if err != nil {
			return Prepared{}, problem.New(problem.RPCError, "leg %d has invalid ticks [%d, %d]", i, l.TickLower, l.TickUpper)
		}
		legs[i] = leg
		if leg.AmountToSwap.Sign() == 0 {
			continue
		}
		quoteReqs = append(quoteReqs, swap.Request{
			TokenIn: collateral.Address, TokenOut: profitTok.Address, AmountIn: leg.AmountToSwap,
			Fee: info.Fee, Slippage: req.Slippage, Swapper: swappers[i], Receiver: req.Market,
		})
		quoted = append(quoted, i)
	}
	quotes, err := quoter.Quote(ctx, quoteReqs)
	if err != nil {
		return Prepared{}, err
	}

	out := Prepared{
		Token: profitTok.Address.Hex(), ProfitToken: tokenJSON(profitTok), Owner: pos.Owner.Hex(),
		Legs: make([]PreparedLeg, len(pos.Legs)), Swappers: make([]string, len(pos.Legs)), SwapData: make([]string, len(pos.Legs)),
	}
	params := clamm.ExerciseParams{OptionID: req.OptionID, Swapper: swappers,
		SwapData: make([][]byte, len(pos.Legs)), LiquidityToExercise: make([]*big.Int, len(pos.Legs))}
	profit, minProfit := new(big.Int), new(big.Int)
	for i, l := range pos.Legs {
		params.SwapData[i] = []byte{}
		params.LiquidityToExercise[i] = new(big.Int)
		out.Legs[i] = PreparedLeg{Liquidity: l.LiquidityToUse.String(), AmountToSwap: "0", AmountReq: "0", AmountOut: "0", MinAmountOut: "0"}
		if legs[i].AmountToSwap != nil {
			out.Legs[i].AmountToSwap, out.Legs[i].AmountReq = legs[i].AmountToSwap.String(), legs[i].AmountReq.String()
		}
	}
	for qi, i := range quoted {
		q, leg := quotes[qi], legs[i]
		out.Legs[i].AmountOut, out.Legs[i].MinAmountOut = q.AmountOut.String(), q.MinOut.String()
		if q.AmountOut.Cmp(leg.AmountReq) <= 0 {
			continue // this leg's swap would not cover the LPs: the contract would revert
		}
		out.Legs[i].Exercised = true
		params.SwapData[i] = q.SwapData
		params.LiquidityToExercise[i] = pos.Legs[i].LiquidityToUse
		profit.Add(profit, new(big.Int).Sub(q.AmountOut, leg.AmountReq))
		if d := new(big.Int).Sub(q.MinOut, leg.AmountReq); d.Sign() > 0 {
			minProfit.Add(minProfit, d)
		}
	}
	if profit.Sign() <= 0 {
		return Prepared{}, problem.New(problem.OptionNotInTheMoney, "option %s is not in the money: no leg's swap through %s covers what its liquidity providers are owed", req.OptionID, req.SwapperID).On("optionId")
	}
	data, err := clamm.ExerciseCalldata(params)
	if err != nil {
		return Prepared{}, err
	}
	for i := range pos.Legs {
		out.Swappers[i] = swappers[i].Hex()
		out.SwapData[i] = hexutil.Encode(params.SwapData[i])
	}
	out.Profit, out.MinProfit = profit.String(), minProfit.String()
	out.Tx = Tx{To: req.Market.Hex(), Data: hexutil.Encode(data)}

	ret, err := up.Positions.Simulate(ctx, pos.Owner, req.Market, data)
	if err != nil {
		return Prepared{}, simulationError(err)
	}
	if vals, err := contracts.OptionMarketV2.Unpack("exerciseOption", ret); err == nil && len(vals) == 4 {
		out.SimulatedProfit = vals[2].(*big.Int).String()
	}
	return out, nil
}

// exercisable refuses what the contract would refuse, before any quote.
func exercisable(req PrepareRequest, pos *chain.Position) error {
	if pos.Version == chain.MarketV1 {
		return problem.New(problem.MarketV1Unsupported,
			"%s is a V1 option market (DopexV2OptionMarket); this gateway prepares exercises on V2 markets only", req.Market.Hex())
	}
	// Nothing left to exercise says more than "expired" about an old option.
	left := false
	for _, l := range pos.Legs {
		left = left || l.LiquidityToUse.Sign() > 0
	}
	if !left {
		return problem.New(problem.OptionFullyExercised, "option %s has no liquidity left to exercise", req.OptionID).On("optionId")
	}
	if pos.Data.Expiry.Cmp(pos.BlockTimestamp) < 0 {
		return problem.New(problem.OptionExpired, "option %s expired at %s (block time %s)", req.OptionID, pos.Data.Expiry, pos.BlockTimestamp).On("optionId")
	}
	return nil
}

// swapperFor picks the swapper contract for a leg: on chains where each DEX
// has its own (Mantle), by the leg's handler DEX; otherwise the one address.
func swapperFor(sw *config.Swapper, dex string) common.Address {
	if a, ok := sw.ByDex[dex]; ok {
		return a
	}
	return sw.Address
}

// simulationError decodes a reverted simulation into the market's custom
// error name; other failures are upstream failures.
func simulationError(err error) error {
	var rev *chain.RevertError
	if !errors.As(err, &rev) {
		return err
	}
	return problem.Wrap(problem.ExerciseWouldRevert, err, "simulating the exercise from the option's owner reverted: %s", RevertReason(rev.Data))
}

// RevertReason names revert data: a market custom error, Error(string),
// Panic(uint256), or the raw selector.
func RevertReason(data []byte) string {
	if len(data) < 4 {
		return "no reason given"
	}
	for name, e := range contracts.OptionMarketErrors.Errors {
		if bytes.Equal(e.ID[:4], data[:4]) {
			return name
		}
	}
	if reason, err := abiUnpackRevert(data); err == nil {
		return reason
	}
	return "unknown error " + hexutil.Encode(data[:4])
}
