package trade

import (
	"context"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// PurchaseRequest is a validated purchase quote request.
type PurchaseRequest struct {
	ChainID uint64
	Market  common.Address
	IsCall  bool
	// Strike is the strike's price in whole put assets per call asset, as
	// the strikes chain's key shows it: the market's price of one tick.
	Strike float64
	TTL    uint64
	// Amount is the collateral to buy, in base units of the asset the
	// strike's ranges hold (the call asset for calls, the put asset for puts).
	Amount *big.Int
	// User is who will buy (zero: nobody in particular); the pricing reads
	// tx.origin, so the quote is computed from this address.
	User common.Address
}

// PurchaseQuote is what buying the option costs now.
type PurchaseQuote struct {
	Type       string `json:"type"`
	Strike     string `json:"strike"`
	StrikeTick int    `json:"strikeTick"`
	TTL        uint64 `json:"ttl"`
	// Token is the collateral: the legs withdraw it and premium and fees are paid in it.
	Token vocab.Token `json:"token"`
	// Amount is what was asked; Size what the chosen legs withdraw exactly
	// (at most Amount: whole liquidity units round down).
	Amount  string `json:"amount"`
	Size    string `json:"size"`
	Premium string `json:"premium"`
	Fees    string `json:"fees"`
	Cost    string `json:"cost"`
	// IV is the volatility the premium was priced at, percent: the
	// pricing contract's own volatility function's answer for this strike,
	// or the ttl's table IV on OptionPricingV2, which prices at it
	// (IVSource names which); nil when the gateway cannot read it (the
	// premium is still the contract's own). BaseIV is the ttl's table
	// entry (ttlToVol).
	IV       *string `json:"iv"`
	BaseIV   string  `json:"baseIv"`
	IVSource string  `json:"ivSource"`
	// MarkPrice is the market's getCurrentPricePerCallAsset (put-asset base
	// units per one call asset), StrikePrice its price of the strike tick.
	MarkPrice   string        `json:"markPrice"`
	StrikePrice string        `json:"strikePrice"`
	Legs        []PurchaseLeg `json:"legs"`
	User        string        `json:"user"`
	Block       uint64        `json:"block"`
	Timestamp   uint64        `json:"timestamp"`
}

// PurchaseLeg is one range the option would borrow.
type PurchaseLeg struct {
	Handler   string `json:"handler"`
	Pool      string `json:"pool"`
	Hook      string `json:"hook"`
	TickLower int    `json:"tickLower"`
	TickUpper int    `json:"tickUpper"`
	// Liquidity is the liquidityToUse (Uniswap L); Amount the collateral it withdraws.
	Liquidity string `json:"liquidity"`
	Amount    string `json:"amount"`
}

// quoteState is a quote with what prepare needs beyond its JSON.
type quoteState struct {
	q        PurchaseQuote
	up       *vocab.Upstreams
	legs     []chosenLeg
	token    common.Address
	premium  *big.Int
	fee      *big.Int
	head     contracts.PricingHead
	tickLow  int
	tickHigh int
}

type chosenLeg struct {
	handler, pool, hook  common.Address
	tickLower, tickUpper int
	liquidity, amount    *big.Int
}

// PurchaseQuote answers what buying `Amount` of the option costs: the legs
// that would supply it (the strike's buyable ranges with free liquidity
// whose hooks admit the ttl now, in the strikes chain's order, each used
// as far as it goes), then the market's own premium and fee for exactly
// what those legs withdraw, read in one eth_call at one block from the
// user (contracts.PricingRead). No pricing is computed here.
func (s *Trade) PurchaseQuote(ctx context.Context, req PurchaseRequest) (PurchaseQuote, error) {
	st, err := s.quote(ctx, req)
	if err != nil {
		return PurchaseQuote{}, err
	}
	return st.q, nil
}

func (s *Trade) quote(ctx context.Context, req PurchaseRequest) (*quoteState, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return nil, err
	}
	cands, err := s.strikeRanges(ctx, up, req)
	if err != nil {
		return nil, err
	}
	if cands, err = s.admitted(ctx, up, req, cands); err != nil {
		return nil, err
	}
	st := &quoteState{up: up}
	if err := st.fill(cands, req.Amount); err != nil {
		return nil, err
	}
	total := new(big.Int)
	for _, l := range st.legs {
		total.Add(total, l.amount)
	}
	ask := contracts.PricingAsk{IsPut: !req.IsCall, StrikeTick: big.NewInt(int64(cands.strikeTick)), Ttl: new(big.Int).SetUint64(req.TTL), Total: total}
	head, answers, err := up.Chain.ReadPricing(ctx, req.Market, req.User, []contracts.PricingAsk{ask})
	if err != nil {
		return nil, vocab.PricingReadError(err)
	}
	if err := st.price(req, head, answers[0], total); err != nil {
		return nil, err
	}
	st.q.StrikeTick, st.q.Token, st.token = cands.strikeTick, vocab.TokenOf(cands.token), cands.token.Address
	return st, nil
}

// price fills the quote from the market's answer, or says why the market
// would refuse.
func (st *quoteState) price(req PurchaseRequest, head contracts.PricingHead, a contracts.PricingAnswer, total *big.Int) error {
	if head.Pricing == (common.Address{}) {
		return vocab.NoPricing()
	}
	if !a.VolOk || a.BaseVol.Sign() == 0 {
		return problem.New(problem.PurchaseIVNotSet, "the market's pricing %s has no IV for a ttl of %d seconds (ttlToVol is 0): mintOption would revert", head.Pricing.Hex(), req.TTL)
	}
	if !a.PremiumOk {
		return problem.New(problem.PurchaseWouldRevert, "the market's getPremiumAmount reverts: %s", chain.RevertReason(a.PremiumErr))
	}
	if a.Premium.Sign() == 0 {
		return problem.New(problem.PurchaseIVNotSet, "the market prices this option at 0 for a ttl of %d seconds: mintOption would revert DopexV2OptionMarket__IVNotSet", req.TTL)
	}
	if !a.FeeOk {
		return problem.New(problem.PurchaseWouldRevert, "the market's getFee reverts for a premium of %s", a.Premium)
	}
	cost := new(big.Int).Add(a.Premium, a.Fee)
	if cost.BitLen() > 256 {
		// mintOption adds them in checked uint256 arithmetic: it reverts,
		// and no approval can cover the sum. The prepare refuses it too.
		return problem.New(problem.PurchaseWouldRevert, "this purchase costs %s (premium %s plus fee %s), past 2^256-1: mintOption would revert and no approval can cover it", cost, a.Premium, a.Fee)
	}
	st.head, st.premium, st.fee = head, a.Premium, a.Fee
	kind := "put"
	if req.IsCall {
		kind = "call"
	}
	st.q = PurchaseQuote{
		Type: kind, Strike: clamm.FormatPrice(req.Strike), TTL: req.TTL, Amount: req.Amount.String(), Size: total.String(),
		Premium: a.Premium.String(), Fees: a.Fee.String(), Cost: cost.String(),
		IV: vocab.PricedIV(a), BaseIV: a.BaseVol.String(), IVSource: vocab.IVSource(a.VolFrom), MarkPrice: head.LastPrice.String(), StrikePrice: a.Strike.String(),
		Legs: st.legJSON(), User: req.User.Hex(), Block: head.BlockNumber.Uint64(), Timestamp: head.Timestamp.Uint64(),
	}
	return nil
}

func (st *quoteState) legJSON() []PurchaseLeg {
	out := make([]PurchaseLeg, len(st.legs))
	for i, l := range st.legs {
		out[i] = PurchaseLeg{Handler: l.handler.Hex(), Pool: l.pool.Hex(), Hook: l.hook.Hex(), TickLower: l.tickLower, TickUpper: l.tickUpper,
			Liquidity: l.liquidity.String(), Amount: l.amount.String()}
	}
	return out
}

// strikeCandidates are the buyable ranges at one strike on one side.
type strikeCandidates struct {
	strikeTick int
	token      chain.Token
	ranges     []vocab.StrikeRange
	refused    []string // why ranges with free liquidity were left out
	refusedAmt *big.Int
}

// strikeRanges are the buyable ranges at the strike and side asked with
// free liquidity, in the strikes chain's order: the typed strikes core
// asked for that one strike (no other range is read), hooks kept for
// admitted to ask with the buyer's ttl.
func (s *Trade) strikeRanges(ctx context.Context, up *vocab.Upstreams, req PurchaseRequest) (strikeCandidates, error) {
	set, err := s.strikes.StrikesOf(ctx, up, vocab.StrikesAsk{Market: req.Market, At: &vocab.StrikeAt{IsCall: req.IsCall, Price: req.Strike}, KeepHooked: true})
	if err != nil {
		return strikeCandidates{}, err
	}
	out := strikeCandidates{refusedAmt: new(big.Int)}
	for _, st := range set.Strikes {
		if st.FreeAmount.Sign() == 0 {
			continue
		}
		out.strikeTick, out.token = st.Tick, st.Token
		out.ranges = append(out.ranges, st)
	}
	if len(out.ranges) == 0 {
		kind := "put"
		if req.IsCall {
			kind = "call"
		}
		return out, problem.New(problem.PurchaseInsufficientLiquidity, "no buyable %s range with free liquidity at strike %s: available 0 (the strikes chain lists the strikes that have some)", kind, clamm.FormatPrice(req.Strike))
	}
	return out, nil
}

// admitted leaves out the ranges whose hook refuses this purchase now,
// asking each hook its onPositionUse in one round trip (chain.ProbeHooks),
// and remembers why.
func (s *Trade) admitted(ctx context.Context, up *vocab.Upstreams, req PurchaseRequest, c strikeCandidates) (strikeCandidates, error) {
	var qs []chain.HookQuestion
	var idx []int
	for i, r := range c.ranges {
		if r.Hook != (common.Address{}) {
			qs = append(qs, chain.HookQuestion{Hook: r.Hook, Market: req.Market, Pool: r.Pool, TTL: req.TTL,
				TickLower: r.TickLower, TickUpper: r.TickUpper, IsPut: !req.IsCall})
			idx = append(idx, i)
		}
	}
	if len(qs) == 0 {
		return c, nil
	}
	answers, err := up.Chain.ProbeHooks(ctx, qs)
	if err != nil {
		return c, err
	}
	refused := map[int]bool{}
	for j, a := range answers {
		if !a.Admits {
			r := c.ranges[idx[j]]
			refused[idx[j]] = true
			c.refused = append(c.refused, refusalText(vocab.HookRulesOf(up.Config, r.Hook), r.Hook.Hex(), req.TTL))
			c.refusedAmt.Add(c.refusedAmt, r.FreeAmount)
		}
	}
	kept := c.ranges[:0:0]
	for i, r := range c.ranges {
		if !refused[i] {
			kept = append(kept, r)
		}
	}
	c.ranges = kept
	return c, nil
}

// refusalText says why a hook refuses, from its configured rules.
func refusalText(h vocab.HookRules, addr string, ttl uint64) string {
	switch {
	case h.MaxTTL != nil && int64(ttl) > *h.MaxTTL:
		return fmt.Sprintf("hook %s (%s) takes options of at most %d seconds, not %d", h.Name, addr, *h.MaxTTL, ttl)
	case h.NoWeekends:
		return fmt.Sprintf("hook %s (%s) refuses purchases on a UTC Saturday or Sunday", h.Name, addr)
	}
	return fmt.Sprintf("hook %s (%s) refuses this purchase now (its onPositionUse reverts)", h.Name, addr)
}

// fill takes each admitted range's free liquidity in order until the
// amount is covered, as a buyer filling a size from the strike's list
// does: each leg the largest liquidity whose amount stays within what is
// still missing (the whole range when it holds less). It stops at a range
// of which what is left cannot buy one base unit: mintOption requires
// collateral in every leg, so a leg of liquidity worth nothing would make
// the whole purchase revert.
func (st *quoteState) fill(c strikeCandidates, amount *big.Int) error {
	free := new(big.Int)
	for _, r := range c.ranges {
		free.Add(free, r.FreeAmount)
	}
	if free.Cmp(amount) < 0 {
		return shortOf(c, free, amount)
	}
	left := new(big.Int).Set(amount)
	for _, r := range c.ranges {
		if left.Sign() == 0 {
			break
		}
		take := r.FreeAmount
		if take.Cmp(left) > 0 {
			take = left
		}
		l, err := legFor(r, take)
		if err != nil {
			return err
		}
		if l.amount.Sign() == 0 {
			break
		}
		st.legs = append(st.legs, l)
		left.Sub(left, l.amount)
	}
	if len(st.legs) == 0 {
		return problem.New(problem.PurchaseInsufficientLiquidity, "an amount of %s is less than one unit of liquidity at this strike gives", amount)
	}
	st.tickLow, st.tickHigh = st.legs[0].tickLower, st.legs[0].tickUpper
	return nil
}

func shortOf(c strikeCandidates, free, amount *big.Int) error {
	tok := c.token
	if len(c.refused) > 0 && new(big.Int).Add(free, c.refusedAmt).Cmp(amount) >= 0 {
		return problem.New(problem.PurchaseHookRefused, "%s %s is free at this strike, but only %s of it in ranges whose hooks admit this purchase: %s",
			new(big.Int).Add(free, c.refusedAmt), tok.Symbol, free, strings.Join(c.refused, "; "))
	}
	msg := fmt.Sprintf("not enough free liquidity at this strike: available %s (%s %s), asked %s", free, clamm.FormatUnits(free, int(tok.Decimals)), tok.Symbol, amount)
	if len(c.refused) > 0 {
		msg += fmt.Sprintf("; %s more under hooks that refuse this purchase: %s", c.refusedAmt, strings.Join(c.refused, "; "))
	}
	return problem.New(problem.PurchaseInsufficientLiquidity, "%s", msg)
}

// legFor is the leg that withdraws the most of the range's token that is
// at most `take`: the largest liquidity whose amount fits (the pool's burn
// rounds it down), at most the range's free liquidity.
func legFor(r vocab.StrikeRange, take *big.Int) (chosenLeg, error) {
	l, err := clamm.MaxLiquidityWithin(r.TickLower, r.TickUpper, take, r.HeldIs0)
	if err != nil {
		return chosenLeg{}, err
	}
	if l.Cmp(r.Free) > 0 {
		l = r.Free
	}
	amt, err := clamm.RangeAmount(r.TickLower, r.TickUpper, l, r.HeldIs0)
	if err != nil {
		return chosenLeg{}, err
	}
	return chosenLeg{handler: r.Handler, pool: r.Pool, hook: r.Hook, tickLower: r.TickLower, tickUpper: r.TickUpper, liquidity: l, amount: amt}, nil
}
