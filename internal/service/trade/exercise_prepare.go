package trade

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
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

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
	Tx       vocab.Tx `json:"tx"`
	// MinProfit is the least a successful exercise yields: per exercised
	// leg max(minAmountOut - amountReq, 0), since a leg that would deliver
	// less than its LPs are owed reverts the whole transaction instead.
	MinProfit   string      `json:"minProfit"`
	ProfitToken vocab.Token `json:"profitToken"`
	// SimulatedProfit is totalProfit from an eth_call of Tx from the owner
	// at the latest block.
	SimulatedProfit string `json:"simulatedProfit,omitempty"`
	// SwapperID is the swapper the transaction goes through: the one asked
	// for, or the one swapperId=auto chose.
	SwapperID string `json:"swapperId"`
	// SwapperChoices are the chain's swappers, configured and learned from
	// its own exercises, with where each comes from; for swapperId=auto,
	// each usable one's profit or why it could not prepare.
	SwapperChoices []SwapperChoice `json:"swapperChoices"`
	// Owner must send tx (or a delegate it approved).
	Owner string        `json:"owner"`
	Legs  []PreparedLeg `json:"legs"`
	// LeftOut lists the indexes of legs with liquidity that Tx does not
	// exercise; each such leg's leftOutReason says why.
	LeftOut []int `json:"leftOut"`
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
	// QuotedOut is the quote source's output for the leg alone at the
	// answer's block (null when the leg was not quoted: quoteSource
	// "simulation", the exercise's simulation gives amountOut).
	QuotedOut *string `json:"quotedOut"`
	// QuoteSource is where quotedOut comes from: "quoterV2 <address>" (the
	// quote contract of the leg's DEX), "1inch api", or "simulation".
	QuoteSource string `json:"quoteSource,omitempty"`
}

// ExercisePrepare reads the position, routes each leg with the chosen
// swapper, simulates the exercise leg by leg in the market's order (each
// leg at the state the earlier legs leave), leaves out the legs that would
// revert or add nothing, sets each remaining leg's minimum from its
// sequential output, builds exerciseOption calldata and simulates it once
// from the owner. Nothing is returned that the simulation saw revert.
// swapperId auto prepares through every usable configured swapper that
// did not fail the start-up check, and answers the one that pays most.
func (s *Trade) ExercisePrepare(ctx context.Context, req PrepareRequest) (Prepared, error) {
	up, err := s.chains.Of(req.ChainID, false)
	if err != nil {
		return Prepared{}, err
	}
	opts := s.markChecked(up, swapperOptions(ctx, up))
	picked, err := pickSwappers(up, req.SwapperID, opts)
	if err != nil {
		return Prepared{}, err
	}
	base := &exercisePlan{req: req, up: up}
	if err := base.read(ctx); err != nil {
		return Prepared{}, err
	}
	if req.SwapperID != SwapperAuto {
		out, err := prepareThrough(ctx, base, picked[0])
		if err != nil {
			return Prepared{}, err
		}
		return withChoices(out, picked[0].ID, opts, nil), nil
	}
	return bestOf(ctx, base, picked, opts)
}

// prepareThrough prepares the option base read through one swapper.
func prepareThrough(ctx context.Context, base *exercisePlan, o swapperOption) (Prepared, error) {
	p := &exercisePlan{req: base.req, up: base.up, quoter: o.quoter, info: base.info, pos: base.pos}
	p.req.SwapperID = o.ID
	if err := p.planLegs(); err != nil {
		return Prepared{}, err
	}
	if err := p.quote(ctx); err != nil {
		return Prepared{}, err
	}
	outcomes, err := p.up.Chain.SimulateSequence(ctx, p.pos.Owner, p.req.Market, p.params)
	if err != nil {
		return Prepared{}, simulationError(err)
	}
	data, err := p.finalise(outcomes)
	if err != nil {
		return Prepared{}, err
	}
	return p.simulateWhole(ctx, data)
}

// bestOf prepares through each of picked (configured swappers only, at
// most MaxAutoSwappers), autoParallel at a time, and answers the one whose
// simulated exercise pays the most (the first, by the order of
// swapperOptions, on a tie), each one's profit or error listed. One not
// yet started when ctx ends is not started (its error is the context's).
// When none can prepare, the first one's error is the answer (an upstream
// failure before an unprocessable one: the client may retry).
func bestOf(ctx context.Context, base *exercisePlan, picked []swapperOption, opts []swapperOption) (Prepared, error) {
	outs := make([]Prepared, len(picked))
	errs := make([]error, len(picked))
	var g errgroup.Group
	g.SetLimit(autoParallel)
	for i, o := range picked {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				errs[i] = problem.Upstream(problem.RPC, err)
				return nil
			}
			outs[i], errs[i] = prepareThrough(ctx, base, o)
			return nil
		})
	}
	_ = g.Wait() // every job answers nil: its error is in errs
	var best *Prepared
	var bestID string
	var firstErr error
	results := map[string]SwapperChoice{}
	for i, o := range picked {
		c, err := o.SwapperChoice, errs[i]
		if err != nil {
			c.Error = problem.As(err).Message
			if firstErr == nil || problem.As(firstErr).Kind() == problem.KindUnprocessable && problem.As(err).Kind() != problem.KindUnprocessable {
				firstErr = err
			}
		} else {
			c.Profit = &outs[i].Profit
			if best == nil || mustBig(outs[i].Profit).Cmp(mustBig(best.Profit)) > 0 {
				best, bestID = &outs[i], o.ID
			}
		}
		results[o.ID] = c
	}
	if best == nil {
		return Prepared{}, firstErr
	}
	return withChoices(*best, bestID, opts, results), nil
}

// withChoices names the swapper out went through and lists the chain's
// swappers (with auto's results, when given).
func withChoices(out Prepared, id string, opts []swapperOption, results map[string]SwapperChoice) Prepared {
	out.SwapperID = id
	out.SwapperChoices = make([]SwapperChoice, len(opts))
	for i, o := range opts {
		out.SwapperChoices[i] = o.SwapperChoice
		if r, ok := results[o.ID]; ok {
			out.SwapperChoices[i] = r
		}
	}
	return out
}

func mustBig(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

// exercisePlan is what ExercisePrepare carries from phase to phase: the
// option, each leg's exercise and quote, the calldata's parameters as they
// are settled, and the answer being built.
type exercisePlan struct {
	req    PrepareRequest
	up     *vocab.Upstreams
	quoter swap.Quoter

	info *chain.MarketInfo
	pos  *chain.Position

	legs      []clamm.Leg          // each leg's swap and what its LPs are owed
	params    clamm.ExerciseParams // the calldata's parameters
	quoteReqs []swap.Request
	quoted    []int // leg index of each quote request
	quotes    []swap.Quote
	out       Prepared
}

// read reads the market and the option together and refuses what the
// contract would refuse, before any quote.
func (p *exercisePlan) read(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { p.info, err = p.up.Chain.Market(gctx, p.req.Market); return })
	g.Go(func() (err error) { p.pos, err = p.up.Chain.Position(gctx, p.req.Market, p.req.OptionID); return })
	if err := g.Wait(); err != nil {
		return err
	}
	return exercisable(p.req, p.pos)
}

// planLegs works out each leg's swap (collateral -> profit token) and what
// its LPs are owed, picks its swapper contract, and lists the legs worth
// quoting: those with liquidity left and collateral to swap.
func (p *exercisePlan) planLegs() error {
	info, pos, req := p.info, p.pos, p.req
	collateral, profitTok := info.PutAsset, info.CallAsset
	if pos.Data.IsCall {
		collateral, profitTok = info.CallAsset, info.PutAsset
	}
	collateralIs0 := collateral.Address == info.Token0
	n := len(pos.Legs)
	p.legs = make([]clamm.Leg, n)
	p.out = Prepared{
		Token: profitTok.Address.Hex(), ProfitToken: vocab.TokenOf(profitTok), Owner: pos.Owner.Hex(),
		Legs: make([]PreparedLeg, n), Swappers: make([]string, n), SwapData: make([]string, n), LeftOut: []int{},
	}
	p.params = clamm.ExerciseParams{OptionID: req.OptionID, Swapper: make([]common.Address, n),
		SwapData: make([][]byte, n), LiquidityToExercise: make([]*big.Int, n)}
	for i, l := range pos.Legs {
		p.params.Swapper[i] = p.quoter.SwapperFor(p.up.Config.HandlerInfo(l.Handler).Name)
		p.params.SwapData[i] = []byte{}
		p.params.LiquidityToExercise[i] = new(big.Int)
		p.out.Legs[i] = PreparedLeg{Liquidity: l.LiquidityToUse.String(), AmountToSwap: "0", AmountReq: "0", AmountOut: "0", MinAmountOut: "0"}
		if l.LiquidityToUse.Sign() == 0 {
			continue
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, l.LiquidityToUse, collateralIs0)
		if err != nil {
			return problem.New(problem.RPCError, "leg %d has invalid ticks [%d, %d]", i, l.TickLower, l.TickUpper)
		}
		p.legs[i] = leg
		p.out.Legs[i].AmountToSwap, p.out.Legs[i].AmountReq = leg.AmountToSwap.String(), leg.AmountReq.String()
		if leg.AmountToSwap.Sign() == 0 {
			p.out.Legs[i].LeftOutReason = "its range holds none of the collateral: nothing to swap"
			continue
		}
		p.quoteReqs = append(p.quoteReqs, swap.Request{
			TokenIn: collateral.Address, TokenOut: profitTok.Address, AmountIn: leg.AmountToSwap,
			Fee: info.Fee, Slippage: req.Slippage, Swapper: p.params.Swapper[i], Receiver: req.Market,
			Dex: p.up.Config.HandlerInfo(l.Handler).Name,
		})
		p.quoted = append(p.quoted, i)
	}
	return nil
}

// quote routes the legs worth quoting with the chosen swapper, in one
// batch, and puts each quote's swapData in the parameters to simulate.
func (p *exercisePlan) quote(ctx context.Context) error {
	var err error
	if p.quotes, err = p.quoter.Quote(ctx, p.quoteReqs); err != nil {
		return err
	}
	for qi, i := range p.quoted {
		q := p.quotes[qi]
		p.params.SwapData[i] = q.SwapData
		p.params.LiquidityToExercise[i] = p.pos.Legs[i].LiquidityToUse
		p.out.Legs[i].QuoteSource = q.Source
		if q.AmountOut != nil {
			p.out.Legs[i].QuotedOut = strPtr(q.AmountOut.String())
		}
	}
	return nil
}

// finalise takes the simulated sequence's outcome of each leg: a leg that
// reverted or added nothing is left out (and why); each remaining leg's
// minimum follows from its sequential output. It returns the calldata, or
// OPTION_NOT_IN_THE_MONEY when no leg pays.
func (p *exercisePlan) finalise(outcomes []chain.LegOutcome) ([]byte, error) {
	profit, minProfit := new(big.Int), new(big.Int)
	for qi, i := range p.quoted {
		o := outcomes[i]
		if !o.Exercised {
			p.out.Legs[i].LeftOutReason = p.quoter.Explain(o.Reason)
			p.params.SwapData[i], p.params.LiquidityToExercise[i] = []byte{}, new(big.Int)
			continue
		}
		amountOut := new(big.Int).Add(o.Delta, p.legs[i].AmountReq)
		sd, minOut, err := p.quoter.Final(p.quoteReqs[qi], p.quotes[qi], amountOut)
		if err != nil {
			return nil, err
		}
		p.params.SwapData[i] = sd
		p.out.Legs[i].Exercised = true
		p.out.Legs[i].AmountOut, p.out.Legs[i].MinAmountOut = amountOut.String(), minOut.String()
		profit.Add(profit, o.Delta)
		if d := new(big.Int).Sub(minOut, p.legs[i].AmountReq); d.Sign() > 0 {
			minProfit.Add(minProfit, d)
		}
	}
	for i, l := range p.out.Legs {
		if !l.Exercised && p.pos.Legs[i].LiquidityToUse.Sign() > 0 {
			p.out.LeftOut = append(p.out.LeftOut, i)
		}
	}
	if profit.Sign() <= 0 {
		return nil, problem.New(problem.OptionNotInTheMoney, "option %s is not in the money: no leg's swap through %s pays more than its liquidity providers are owed (%s)", p.req.OptionID, p.req.SwapperID, leftOutReasons(p.out)).On("optionId")
	}
	data, err := clamm.ExerciseCalldata(p.params)
	if err != nil {
		return nil, err
	}
	for i := range p.pos.Legs {
		p.out.Swappers[i] = p.params.Swapper[i].Hex()
		p.out.SwapData[i] = hexutil.Encode(p.params.SwapData[i])
	}
	p.out.Profit, p.out.MinProfit = profit.String(), minProfit.String()
	p.out.Tx = vocab.Tx{To: p.req.Market.Hex(), Data: hexutil.Encode(data)}
	return data, nil
}

// simulateWhole runs the exercise's calldata once from the owner: nothing
// is returned that the simulation saw revert.
func (p *exercisePlan) simulateWhole(ctx context.Context, data []byte) (Prepared, error) {
	simulated, err := p.up.Chain.SimulateExercise(ctx, p.pos.Owner, p.req.Market, data)
	if err != nil {
		return Prepared{}, simulationError(err)
	}
	p.out.SimulatedProfit = simulated.String()
	return p.out, nil
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
