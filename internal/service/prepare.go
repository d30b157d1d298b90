package service

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// PositionReader reads an option and simulates its exercise (package chain).
type PositionReader interface {
	Position(ctx context.Context, market common.Address, optionID *big.Int) (*chain.Position, error)
	// Positions reads a page of options in one round trip (positions).
	Positions(ctx context.Context, market common.Address, ids []*big.Int) ([]chain.PositionResult, error)
	SimulateSequence(ctx context.Context, owner, market common.Address, p clamm.ExerciseParams) ([]chain.LegOutcome, error)
	SimulateExercise(ctx context.Context, from, market common.Address, data []byte) (*big.Int, error)
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
	// Profit is what executing Tx right away pays the owner: the sum over
	// exercised legs of (the leg's swap output - what its LPs are owed),
	// each leg swapping after the earlier ones, as the market runs them.
	Profit string `json:"profit"`
	// Token is the profit token (the put asset for calls, the call asset for puts).
	Token    string   `json:"token"`
	SwapData []string `json:"swapData"`
	Swappers []string `json:"swappers"`
	Tx       Tx       `json:"tx"`
	// MinProfit is the least a successful exercise yields: per exercised
	// leg max(minAmountOut - amountReq, 0), since a leg that would deliver
	// less than its LPs are owed reverts the whole transaction instead.
	MinProfit   string `json:"minProfit"`
	ProfitToken Token  `json:"profitToken"`
	// SimulatedProfit is totalProfit from an eth_call of Tx from the owner
	// at the latest block.
	SimulatedProfit string `json:"simulatedProfit,omitempty"`
	// Owner must send tx (or a delegate it approved).
	Owner string        `json:"owner"`
	Legs  []PreparedLeg `json:"legs"`
	// LeftOut lists the indexes of legs with liquidity that Tx does not
	// exercise; each such leg's leftOutReason says why.
	LeftOut []int `json:"leftOut"`
}

// Tx is the transaction to sign.
type Tx struct {
	To   string `json:"to"`
	Data string `json:"data"`
}

// PreparedLeg explains one leg: what is swapped, what the LPs get, what the
// swap delivers in the exercise's sequence. Exercised is false for legs left
// out (no liquidity left, or a leg whose swap, after the earlier legs',
// reverts, does not cover its LPs, or leaves its pool inside the leg's range).
type PreparedLeg struct {
	Exercised    bool   `json:"exercised"`
	Liquidity    string `json:"liquidity"`
	AmountToSwap string `json:"amountToSwap"`
	AmountReq    string `json:"amountReq"`
	// AmountOut is what the leg's swap delivers when it runs after the
	// earlier exercised legs (0 for a leg left out).
	AmountOut string `json:"amountOut"`
	// MinAmountOut is the least the leg's swapData lets the swap deliver:
	// uni-v3 floor(amountOut * (100 - slippage) / 100); 1inch the router
	// calldata's minReturn.
	MinAmountOut string `json:"minAmountOut"`
	// LeftOutReason says why a leg with liquidity is not exercised.
	LeftOutReason string `json:"leftOutReason,omitempty"`
}

// PrepareExercise reads the position, routes each leg with the chosen
// swapper, simulates the exercise leg by leg in the market's order (each
// leg at the state the earlier legs leave), leaves out the legs that would
// revert or add nothing, sets each remaining leg's minimum from its
// sequential output, builds exerciseOption calldata and simulates it once
// from the owner. Nothing is returned that the simulation saw revert.
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
	n := len(pos.Legs)
	legs := make([]clamm.Leg, n)
	out := Prepared{
		Token: profitTok.Address.Hex(), ProfitToken: tokenJSON(profitTok), Owner: pos.Owner.Hex(),
		Legs: make([]PreparedLeg, n), Swappers: make([]string, n), SwapData: make([]string, n), LeftOut: []int{},
	}
	params := clamm.ExerciseParams{OptionID: req.OptionID, Swapper: make([]common.Address, n),
		SwapData: make([][]byte, n), LiquidityToExercise: make([]*big.Int, n)}
	var quoteReqs []swap.Request
	var quoted []int // leg index of each quote request
	for i, l := range pos.Legs {
		params.Swapper[i] = swapperFor(sw, up.Config.HandlerInfo(l.Handler).Name)
		params.SwapData[i] = []byte{}
		params.LiquidityToExercise[i] = new(big.Int)
		out.Legs[i] = PreparedLeg{Liquidity: l.LiquidityToUse.String(), AmountToSwap: "0", AmountReq: "0", AmountOut: "0", MinAmountOut: "0"}
		if l.LiquidityToUse.Sign() == 0 {
			continue
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.LiquidityToUse, collateralIs0)
		if err != nil {
			return Prepared{}, problem.New(problem.RPCError, "leg %d has invalid ticks [%d, %d]", i, l.TickLower, l.TickUpper)
		}
		legs[i] = leg
		out.Legs[i].AmountToSwap, out.Legs[i].AmountReq = leg.AmountToSwap.String(), leg.AmountReq.String()
		if leg.AmountToSwap.Sign() == 0 {
			out.Legs[i].LeftOutReason = "its range holds none of the collateral: nothing to swap"
			continue
		}
		quoteReqs = append(quoteReqs, swap.Request{
			TokenIn: collateral.Address, TokenOut: profitTok.Address, AmountIn: leg.AmountToSwap,
			Fee: info.Fee, Slippage: req.Slippage, Swapper: params.Swapper[i], Receiver: req.Market,
		})
		quoted = append(quoted, i)
	}
	quotes, err := quoter.Quote(ctx, quoteReqs)
	if err != nil {
		return Prepared{}, err
	}
	for qi, i := range quoted {
		params.SwapData[i] = quotes[qi].SwapData
		params.LiquidityToExercise[i] = pos.Legs[i].LiquidityToUse
	}
	outcomes, err := up.Positions.SimulateSequence(ctx, pos.Owner, req.Market, params)
	if err != nil {
		return Prepared{}, simulationError(err)
	}

	profit, minProfit := new(big.Int), new(big.Int)
	for qi, i := range quoted {
		o := outcomes[i]
		if !o.Exercised {
			out.Legs[i].LeftOutReason = o.Reason
			if sw.Kind == "1inch" && o.Reason == chain.NoReason {
				// OneInchSwapper's bare require(success) drops the router's reason.
				out.Legs[i].LeftOutReason = "the 1inch router call failed (OneInchSwapper gives no reason): its minReturn, quoted for this leg alone, is not met after the earlier legs' swaps, or the route no longer holds"
			}
			params.SwapData[i], params.LiquidityToExercise[i] = []byte{}, new(big.Int)
			continue
		}
		amountOut := new(big.Int).Add(o.Delta, legs[i].AmountReq)
		sd, minOut, err := quoter.Final(quoteReqs[qi], quotes[qi], amountOut)
		if err != nil {
			return Prepared{}, err
		}
		params.SwapData[i] = sd
		out.Legs[i].Exercised = true
		out.Legs[i].AmountOut, out.Legs[i].MinAmountOut = amountOut.String(), minOut.String()
		profit.Add(profit, o.Delta)
		if d := new(big.Int).Sub(minOut, legs[i].AmountReq); d.Sign() > 0 {
			minProfit.Add(minProfit, d)
		}
	}
	for i, l := range out.Legs {
		if !l.Exercised && pos.Legs[i].LiquidityToUse.Sign() > 0 {
			out.LeftOut = append(out.LeftOut, i)
		}
	}
	if profit.Sign() <= 0 {
		return Prepared{}, problem.New(problem.OptionNotInTheMoney, "option %s is not in the money: no leg's swap through %s pays more than its liquidity providers are owed (%s)", req.OptionID, req.SwapperID, leftOutReasons(out)).On("optionId")
	}
	data, err := clamm.ExerciseCalldata(params)
	if err != nil {
		return Prepared{}, err
	}
	for i := range pos.Legs {
		out.Swappers[i] = params.Swapper[i].Hex()
		out.SwapData[i] = hexutil.Encode(params.SwapData[i])
	}
	out.Profit, out.MinProfit = profit.String(), minProfit.String()
	out.Tx = Tx{To: req.Market.Hex(), Data: hexutil.Encode(data)}

	simulated, err := up.Positions.SimulateExercise(ctx, pos.Owner, req.Market, data)
	if err != nil {
		return Prepared{}, simulationError(err)
	}
	out.SimulatedProfit = simulated.String()
	return out, nil
}

// leftOutReasons lists the legs left out and why, for an error message.
func leftOutReasons(p Prepared) string {
	var b strings.Builder
	for _, i := range p.LeftOut {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "leg %d: %s", i, p.Legs[i].LeftOutReason)
	}
	return b.String()
}

// exercisable refuses what the contract would refuse, before any quote.
// Positions apply the same rule (optionExercisable) to say why an option
// cannot be exercised.
func exercisable(req PrepareRequest, pos *chain.Position) error {
	if err := optionExercisable(req.Market, req.OptionID, pos); err != nil {
		return err
	}
	return nil
}

// optionExercisable is the option-level exercise rule of prepare and
// positions: a V2 market, liquidity left, not expired at the head.
func optionExercisable(market common.Address, optionID *big.Int, pos *chain.Position) *problem.Error {
	if pos.Version == chain.MarketV1 {
		return problem.New(problem.MarketV1Unsupported,
			"%s is a V1 option market (DopexV2OptionMarket); this gateway prepares exercises on V2 markets only", market.Hex())
	}
	// Nothing left to exercise says more than "expired" about an old option.
	left := false
	for _, l := range pos.Legs {
		left = left || l.LiquidityToUse.Sign() > 0
	}
	if !left {
		return problem.New(problem.OptionFullyExercised, "option %s has no liquidity left to exercise", optionID).On("optionId")
	}
	if pos.Data.Expiry.Cmp(pos.BlockTimestamp) < 0 {
		return problem.New(problem.OptionExpired, "option %s expired at %s (block time %s)", optionID, pos.Data.Expiry, pos.BlockTimestamp).On("optionId")
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

// simulationError turns a reverted simulation into 422
// EXERCISE_WOULD_REVERT naming the contract's reason; a node failure stays
// the upstream error it is (502/503/504), its cause kept for the log.
func simulationError(err error) error {
	var rev *chain.RevertError
	if !errors.As(err, &rev) {
		return err
	}
	return problem.Wrap(problem.ExerciseWouldRevert, err, "simulating the exercise from the option's owner reverted: %s", rev.Reason)
}
