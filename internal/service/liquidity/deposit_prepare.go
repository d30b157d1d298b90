package liquidity

import (
	"context"
	"math"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// MaxDepositRanges bounds the single-tick ranges one deposit covers (one
// mintPosition each in the multicall).
const MaxDepositRanges = 50

// DepositRequest asks for a deposit of Amount of the range's token into
// the single-tick ranges of Handler on Pool behind Hook that cover either
// the strikes MinStrike..MaxStrike (put-asset units per call asset, as the
// strikes chain shows them) or, with ByTicks, the ticks
// TickLower..TickUpper (multiples of the pool's tick spacing).
type DepositRequest struct {
	ChainID                   uint64
	Handler, Pool, Hook, User common.Address
	MinStrike, MaxStrike      float64
	ByTicks                   bool
	TickLower, TickUpper      int
	Amount                    *big.Int
}

// PreparedDeposit is the position manager's multicall of one mintPosition
// per range, what it pulls and mints, and the approvals to send first.
type PreparedDeposit struct {
	Handler         LPHandler `json:"handler"`
	Pool            string    `json:"pool"`
	Hook            string    `json:"hook"`
	PositionManager string    `json:"positionManager"`
	// Side is "call" when the ranges hold the call asset (above the
	// price of a market whose call asset is token0), else "put".
	Side   string      `json:"side"`
	Token  vocab.Token `json:"token"`
	Amount string      `json:"amount"`
	// Markets are the option markets that can buy from these ranges now.
	Markets []string       `json:"markets"`
	Ranges  []DepositRange `json:"ranges"`
	// Tokens are the pool's two tokens and what the position manager
	// pulls of each (the handler's tokensToPullForMint, summed).
	Tokens    []vocab.TokenAmount `json:"tokens"`
	Balance   string              `json:"balance"`
	Allowance string              `json:"allowance"`
	// Approvals are the approve transactions to send first, one per token
	// whose allowance to the position manager is short; empty when none.
	Approvals []vocab.Approval `json:"approvals"`
	Tx        vocab.Tx         `json:"tx"`
	// Simulated: the multicall ran from the user at the chain's head, as
	// its next block, after the approvals when there are any (one
	// simulation, in the order the user sends them); the ranges' shares
	// are what it minted. SimulatedAt is that head block, which may be
	// newer than the answer's (asOf, where every other figure was read).
	Simulated   bool            `json:"simulated"`
	SimulatedAt *vocab.BlockRef `json:"simulatedAt"`
}

// DepositRange is one single-tick range of a deposit.
type DepositRange struct {
	TickLower int    `json:"tickLower"`
	TickUpper int    `json:"tickUpper"`
	Strike    string `json:"strike"`
	// Amount is the range's part of the amount asked; Liquidity the
	// mintPosition liquidity it buys (rounded down); Pull what
	// tokensToPullForMint asks for it (at most Amount); LiquidityMinted
	// what the handler mints from Pull (LogMintedPosition's).
	Amount          string `json:"amount"`
	Liquidity       string `json:"liquidity"`
	Pull            string `json:"pull"`
	LiquidityMinted string `json:"liquidityMinted"`
	// Shares minted, from the simulation.
	Shares *string `json:"shares"`
}

// deposit is a deposit being prepared.
type deposit struct {
	req      DepositRequest
	up       *vocab.Upstreams
	head     *vocab.Early[chain.Head]
	st       *chain.LPState
	market   *chain.StrikesView // a market that can use the ranges: its assets name the side and strikes
	markets  []common.Address
	heldIs0  bool
	ranges   []DepositRange
	payloads [][]byte
	calls    [][]byte
	pulls    []*big.Int // each range's pull by the maths, of the held token
}

// DepositPrepare builds the deposit: reads the markets and their handler
// facts (one round trip), the pool, tokens, handler and the user's
// allowances (one), then asks the handler tokensToPullForMint for every
// range and runs the approvals it needs and the multicall from the user
// (one). How the amount splits and how strikes map to ticks is
// docs/api.md's; refusals are 422s naming why.
func (s *Liquidity) DepositPrepare(ctx context.Context, req DepositRequest) (PreparedDeposit, error) {
	up, err := s.lpUpstreams(req.ChainID)
	if err != nil {
		return PreparedDeposit{}, err
	}
	d := &deposit{req: req, up: up, head: readHead(ctx, up)}
	defer d.head.End()
	if err := d.read(ctx); err != nil {
		return PreparedDeposit{}, err
	}
	if err := d.layout(); err != nil {
		return PreparedDeposit{}, err
	}
	return d.finish(ctx)
}

// read finds the markets that can use the handler on the pool and the
// head state through their position manager.
func (d *deposit) read(ctx context.Context) error {
	ms, err := marketsFor(ctx, d.up, d.req.Handler)
	if err != nil {
		return err
	}
	if len(ms.usable) == 0 {
		return problem.New(problem.HandlerNotWhitelisted, "no option market on chain %d can buy from handler %s (none whitelists it with its position manager for its version)", d.req.ChainID, d.req.Handler.Hex()).On("handler")
	}
	q := chain.LPQuery{Handler: d.req.Handler, Pool: d.req.Pool, User: d.req.User, Markets: ms.usable}
	pms := []common.Address{}
	for _, v := range ms.views {
		if !slices.Contains(pms, v.PositionManager) {
			pms = append(pms, v.PositionManager)
		}
	}
	if d.st, err = lpState(ctx, d.up, q, pms); err != nil {
		return err
	}
	if err := noHookOnV1(d.st.Format, d.req.Handler, d.req.Hook); err != nil {
		return err
	}
	if d.st.Paused {
		return problem.New(problem.HandlerPaused, "handler %s is paused: mintPosition would revert (Pausable: paused)", d.req.Handler.Hex()).On("handler")
	}
	if err := v3PoolListed(d.st, d.req.Handler, d.req.Pool); err != nil {
		return err
	}
	for i, v := range ms.views {
		pair := v.Info.Token0 == d.st.Pool.Token0 && v.Info.Token1 == d.st.Pool.Token1
		if pair && d.st.PoolApproved[i] && v.PositionManager == d.st.PositionManager {
			d.markets = append(d.markets, ms.usable[i])
			if d.market == nil {
				d.market = v
			}
		}
	}
	if d.market == nil {
		return problem.New(problem.HandlerNotWhitelisted, "no option market on chain %d that can buy from handler %s has approved pool %s", d.req.ChainID, d.req.Handler.Hex(), d.req.Pool.Hex()).On("pool")
	}
	return nil
}

// layout picks the ranges, checks their side and splits the amount.
func (d *deposit) layout() error {
	ticks, err := d.rangeTicks()
	if err != nil {
		return err
	}
	if err := d.side(ticks); err != nil {
		return err
	}
	n := int64(len(ticks))
	share, extra := new(big.Int).QuoRem(d.req.Amount, big.NewInt(n), new(big.Int))
	info := d.market.Info
	m := d.clammMarket()
	heldIsCall := d.heldIs0 == info.Token0IsCall()
	for i, t := range ticks {
		amt := new(big.Int).Set(share)
		if int64(i) < extra.Int64() {
			amt.Add(amt, big.NewInt(1))
		}
		l, err := clamm.LiquidityForAmount(t[0], t[1], amt, d.heldIs0)
		if err != nil {
			return problem.Wrap(problem.InvalidParameter, err, "ticks out of range")
		}
		if l.BitLen() > 128 {
			return problem.InvalidParam("amount", "%s over range [%d, %d] is more liquidity than a uint128 holds", amt, t[0], t[1])
		}
		if l.Sign() == 0 {
			return problem.New(problem.DepositTooSmall, "%s split over %d ranges gives range [%d, %d] no liquidity", d.req.Amount, n, t[0], t[1]).On("amount")
		}
		pull, _ := clamm.RangeAmount(t[0], t[1], l, d.heldIs0)
		minted, _ := clamm.LiquidityForAmount(t[0], t[1], pull, d.heldIs0)
		if pull.Sign() == 0 || minted.Sign() == 0 { // the pool's mint(0) reverts
			return problem.New(problem.DepositTooSmall, "%s split over %d ranges pulls %s into range [%d, %d], which mints no liquidity", d.req.Amount, n, pull, t[0], t[1]).On("amount")
		}
		strikeTick := clamm.PutStrikeTick(t[0], t[1])
		if heldIsCall {
			strikeTick = clamm.CallStrikeTick(t[0], t[1])
		}
		payload, err := d.position(t).Payload(l)
		if err != nil {
			return err
		}
		call, err := d.position(t).MintCall(l)
		if err != nil {
			return err
		}
		d.calls, d.payloads, d.pulls = append(d.calls, call), append(d.payloads, payload), append(d.pulls, pull)
		d.ranges = append(d.ranges, DepositRange{TickLower: t[0], TickUpper: t[1], Strike: clamm.FormatPrice(m.TickPrice(strikeTick)),
			Amount: amt.String(), Liquidity: l.String(), Pull: pull.String(), LiquidityMinted: minted.String()})
	}
	return nil
}

// clammMarket is the market whose assets name the side and the strikes,
// with the pool's token decimals, for the strike maths.
func (d *deposit) clammMarket() clamm.Market {
	return clamm.Market{Token0IsCall: d.market.Info.Token0IsCall(), Decimals0: int(d.st.Tokens[0].Decimals), Decimals1: int(d.st.Tokens[1].Decimals)}
}

// position is range t of the request's handler, pool and hook.
func (d *deposit) position(t [2]int) contracts.Position {
	return contracts.Position{V1: d.st.Format == chain.HandlerFormatV1, Handler: d.req.Handler, Pool: d.req.Pool, Hook: d.req.Hook, TickLower: t[0], TickUpper: t[1]}
}

// side checks every range lies on one side of the pool's price, outside
// it (the handler mints one-sided liquidity only: InRangeLP otherwise),
// and notes which token they hold.
func (d *deposit) side(ticks [][2]int) error {
	p := d.st.Pool.SqrtPriceX96
	above, below := 0, 0
	for _, t := range ticks {
		sa, _ := clamm.SqrtRatioAtTick(t[0])
		sb, _ := clamm.SqrtRatioAtTick(t[1])
		switch {
		case p.Cmp(sa) <= 0:
			above++
		case p.Cmp(sb) >= 0:
			below++
		default:
			return problem.New(problem.DepositWrongSide, "range [%d, %d] holds the pool's current tick %d: the handler mints out-of-range liquidity only (InRangeLP)", t[0], t[1], d.st.Pool.Tick)
		}
	}
	if above > 0 && below > 0 {
		return problem.New(problem.DepositWrongSide, "the ranges lie on both sides of the pool's current tick %d: %d above hold token0, %d below hold token1; a deposit is of one token", d.st.Pool.Tick, above, below)
	}
	d.heldIs0 = above > 0
	return nil
}

// Uniswap's tick bounds.
const (
	minTick = -887272
	maxTick = 887272
)

// rangeTicks is the single-tick ranges [t, t+spacing] the request covers:
// every grid range from TickLower to TickUpper, or every grid range whose
// strike (tickUpper's price for a range holding the call asset, tickLower's
// for one holding the put asset, the market's rule) lies within
// [MinStrike, MaxStrike].
func (d *deposit) rangeTicks() ([][2]int, error) {
	sp := d.st.Pool.TickSpacing
	if d.req.ByTicks {
		r := d.req
		if r.TickLower%sp != 0 || r.TickUpper%sp != 0 {
			return nil, problem.InvalidParam("tickLower", "tickLower and tickUpper must be multiples of the pool's tick spacing %d", sp)
		}
		if r.TickLower < minTick || r.TickUpper > maxTick {
			return nil, problem.InvalidParam("tickLower", "ticks must lie within [%d, %d]", minTick, maxTick)
		}
		if n := (r.TickUpper - r.TickLower) / sp; n > MaxDepositRanges {
			return nil, problem.InvalidParam("tickUpper", "ticks %d..%d cover %d ranges of %d ticks; at most %d", r.TickLower, r.TickUpper, n, sp, MaxDepositRanges)
		}
		var out [][2]int
		for t := r.TickLower; t < r.TickUpper; t += sp {
			out = append(out, [2]int{t, t + sp})
		}
		return out, nil
	}
	return d.strikeTicks(sp)
}

func (d *deposit) strikeTicks(sp int) ([][2]int, error) {
	info := d.market.Info
	m := d.clammMarket()
	// tick ≈ log_1.0001(price / 10^(d0-d1)), or of 10^(d1-d0) / price when
	// the call asset is token1; the window is widened a spacing each way
	// and every range in it is checked by its exact strike.
	tickOf := func(price float64) float64 {
		scale := math.Pow(10, float64(m.Decimals0-m.Decimals1))
		if m.Token0IsCall {
			return math.Log(price/scale) / math.Log(1.0001)
		}
		return math.Log(1/(price*scale)) / math.Log(1.0001)
	}
	a, b := tickOf(d.req.MinStrike), tickOf(d.req.MaxStrike)
	lo, hi := math.Min(a, b), math.Max(a, b)
	if lo < minTick || hi > maxTick || math.IsNaN(lo) || math.IsNaN(hi) {
		return nil, problem.InvalidParam("minStrike", "the strikes lie outside the prices a pool can have")
	}
	if (hi-lo)/float64(sp) > MaxDepositRanges+2 {
		return nil, problem.InvalidParam("maxStrike", "the strikes cover more than %d ranges of %d ticks", MaxDepositRanges, sp)
	}
	start := int(math.Floor(lo/float64(sp)))*sp - 2*sp
	end := int(math.Ceil(hi/float64(sp)))*sp + 2*sp
	var out [][2]int
	for t := start; t < end; t += sp {
		if t < minTick || t+sp > maxTick {
			continue
		}
		strikeTick := d.strikeTickOf(t, t+sp, info.Token0IsCall())
		if p := m.TickPrice(strikeTick); p >= d.req.MinStrike && p <= d.req.MaxStrike {
			out = append(out, [2]int{t, t + sp})
		}
	}
	if len(out) == 0 {
		return nil, problem.InvalidParam("minStrike", "no range of %d ticks has its strike within [%s, %s]", sp, clamm.FormatPrice(d.req.MinStrike), clamm.FormatPrice(d.req.MaxStrike))
	}
	if len(out) > MaxDepositRanges {
		return nil, problem.InvalidParam("maxStrike", "the strikes cover %d ranges of %d ticks; at most %d", len(out), sp, MaxDepositRanges)
	}
	return out, nil
}

// strikeTickOf is the tick whose price is the range's strike: a range
// whose lower bound is at or above the price holds token0 (side's rule),
// one below it token1; the call asset's ranges are struck at their upper
// tick, the put asset's at their lower one.
func (d *deposit) strikeTickOf(lower, upper int, token0IsCall bool) int {
	sa, _ := clamm.SqrtRatioAtTick(lower)
	holds0 := d.st.Pool.SqrtPriceX96.Cmp(sa) <= 0
	if holds0 == token0IsCall {
		return clamm.CallStrikeTick(lower, upper)
	}
	return clamm.PutStrikeTick(lower, upper)
}

// finish asks the handler what it pulls (at the answer's block), builds
// the multicall and the approvals, and simulates them at the head: the
// approvals first, then the multicall, from the user in one eth_call
// (chain.SimulateLP), whatever the allowances. The simulation runs beside
// the handler's answer, its approvals decided by the local sums
// (out-of-range ranges pull a fixed amount of their token): one round
// trip for both, and one more only when the handler's answer asks other
// approvals than the sums did.
func (d *deposit) finish(ctx context.Context) (PreparedDeposit, error) {
	multicall, err := contracts.MulticallCall(d.calls)
	if err != nil {
		return PreparedDeposit{}, err
	}
	out := d.response(multicall)
	guess, err := d.approvals(d.localPull())
	if err != nil {
		return PreparedDeposit{}, err
	}
	var sim *chain.LPSimulated
	var simErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sim, simErr = d.simulate(ctx, guess, multicall)
	}()
	pulls, err := d.up.Chain.TokensToPull(ctx, d.req.Handler, d.payloads)
	<-done
	if err != nil {
		return PreparedDeposit{}, err
	}
	held := d.held()
	pull := []*big.Int{new(big.Int), new(big.Int)}
	for i, p := range pulls {
		d.ranges[i].Pull = p[held].String()
		pull[0].Add(pull[0], p[0])
		pull[1].Add(pull[1], p[1])
	}
	out.Ranges = d.ranges
	out.Tokens = tokenAmounts(d.st.Tokens, pull)
	if out.Approvals, err = d.approvals(pull); err != nil {
		return PreparedDeposit{}, err
	}
	if !slices.Equal(guess, out.Approvals) {
		sim, simErr = d.simulate(ctx, out.Approvals, multicall)
	}
	if simErr != nil {
		return PreparedDeposit{}, simErr
	}
	return d.simulated(out, sim, pull)
}

// approvals are the approve transactions a deposit pulling pull needs
// first: one per token whose allowance to the position manager is short.
func (d *deposit) approvals(pull []*big.Int) ([]vocab.Approval, error) {
	tokens := []common.Address{d.st.Pool.Token0, d.st.Pool.Token1}
	out := []vocab.Approval{}
	for _, k := range d.shortTokens(pull) {
		a, err := vocab.ApprovalOf(tokens[k], d.st.PositionManager, pull[k], d.st.Allowances[k])
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, nil
}

// simulate runs approvals, then the multicall, from the user at the head.
func (d *deposit) simulate(ctx context.Context, approvals []vocab.Approval, multicall []byte) (*chain.LPSimulated, error) {
	head, err := d.head.Wait(ctx)
	if err != nil {
		return nil, err
	}
	steps := append(vocab.ApprovalSteps(approvals), chain.LPStep{To: d.st.PositionManager, Data: multicall})
	tokens := []common.Address{d.st.Pool.Token0, d.st.Pool.Token1}
	return d.up.Chain.SimulateLP(ctx, head, chain.LPSimulation{Signer: d.req.User, Tokens: tokens, Steps: steps})
}

func (d *deposit) response(multicall []byte) PreparedDeposit {
	st, k := d.st, d.held()
	side := "put"
	if d.heldIs0 == d.market.Info.Token0IsCall() {
		side = "call"
	}
	markets := make([]string, len(d.markets))
	for i, m := range d.markets {
		markets[i] = m.Hex()
	}
	return PreparedDeposit{
		Handler: lpHandler(d.up, d.req.Handler, st), Pool: d.req.Pool.Hex(), Hook: d.req.Hook.Hex(), PositionManager: st.PositionManager.Hex(),
		Side: side, Token: vocab.TokenOf(st.Tokens[k]), Amount: d.req.Amount.String(), Markets: markets,
		Balance: st.Balances[k].String(), Allowance: st.Allowances[k].String(), Approvals: []vocab.Approval{},
		Tx: vocab.Tx{To: st.PositionManager.Hex(), Data: hexutil.Encode(multicall)},
	}
}

// held is the index among the pool's tokens (0 or 1) of the token the
// ranges hold: the one the deposit is of.
func (d *deposit) held() int {
	if d.heldIs0 {
		return 0
	}
	return 1
}

// localPull is what the ranges ask for by the maths (out-of-range ranges
// ask a fixed amount of their token, whatever the price inside the side).
func (d *deposit) localPull() []*big.Int {
	pull := []*big.Int{new(big.Int), new(big.Int)}
	k := d.held()
	for _, p := range d.pulls {
		pull[k].Add(pull[k], p)
	}
	return pull
}

// shortTokens are the token indexes whose allowance to the position
// manager is below what it pulls.
func (d *deposit) shortTokens(pull []*big.Int) []int {
	var out []int
	for k := range pull {
		if pull[k].Sign() > 0 && d.st.Allowances[k].Cmp(pull[k]) < 0 {
			out = append(out, k)
		}
	}
	return out
}

// simulated fills in what the simulation minted, or refuses with its revert.
func (d *deposit) simulated(out PreparedDeposit, sim *chain.LPSimulated, pull []*big.Int) (PreparedDeposit, error) {
	if err := vocab.ApprovalRevert(problem.DepositWouldRevert, out.Approvals, d.req.User, sim.At.Number, sim.Sequence); err != nil {
		return PreparedDeposit{}, err
	}
	o := sim.Sequence[len(out.Approvals)]
	if o.Revert != nil {
		return PreparedDeposit{}, probeRevert(problem.DepositWouldRevert, "the mintPosition multicall", d.req.User, sim.At.Number, o.Revert)
	}
	shares, err := contracts.MintedShares(o.Return)
	if err != nil {
		return PreparedDeposit{}, problem.Wrap(problem.RPCError, err, "the simulated multicall's answer does not decode")
	}
	if len(shares) != len(d.ranges) {
		return PreparedDeposit{}, problem.New(problem.RPCError, "the simulated multicall answered %d results for %d calls", len(shares), len(d.ranges))
	}
	for i, sh := range shares {
		s := sh.String()
		out.Ranges[i].Shares = &s
	}
	for k := range pull {
		if paid := new(big.Int).Neg(o.TokenDeltas[k]); paid.Cmp(pull[k]) != 0 {
			return PreparedDeposit{}, problem.New(problem.DepositWouldRevert, "the multicall simulated at block %d took %s of %s, not the %s tokensToPullForMint names at the answer's block (the price moved across a range?)", sim.At.Number, paid, d.st.Tokens[k].Address.Hex(), pull[k])
		}
	}
	out.Simulated, out.SimulatedAt = true, vocab.BlockRefOf(sim.At)
	return out, nil
}
