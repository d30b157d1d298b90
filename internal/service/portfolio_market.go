package service

import (
	"context"
	"math/big"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// marketReads are the sides' answers about one user on one market.
type marketReads struct {
	purchases []trade.PurchaseRecord
	exercises []trade.ExerciseRecord
	positions []trade.PositionRecord
	price     *big.Int // the mark price (MarkPrice.Price); nil unless USD
	// greeks of the open options, or nil and greeksUnknown (why)
	greeks        *market.PortfolioGreeks
	greeksUnknown string
}

// portfolioMarket reads the user's purchases, exercises and positions of
// one market, and its mark price where it is priced in USD, at once; the
// Greeks of the positions follow them (one pricing read for the market).
func (s *Service) portfolioMarket(ctx context.Context, req PortfolioRequest, m market.TradedMarket) (*PortfolioMarket, error) {
	h := trade.HistoryRequest{ChainID: req.ChainID, User: req.User, Market: m.Address}
	var r marketReads
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		r.purchases, err = allPages(gctx, h, func(ctx context.Context, q trade.HistoryRequest) ([]trade.PurchaseRecord, int, error) {
			res, err := s.PurchaseHistory(ctx, q)
			return res.Records, len(res.Records), err
		})
		return err
	})
	g.Go(func() (err error) {
		r.exercises, err = allPages(gctx, h, func(ctx context.Context, q trade.HistoryRequest) ([]trade.ExerciseRecord, int, error) {
			res, err := s.ExerciseHistory(ctx, q)
			return res.Records, len(res.Records), err
		})
		return err
	})
	g.Go(func() (err error) {
		r.positions, err = allPages(gctx, h, func(ctx context.Context, q trade.HistoryRequest) ([]trade.PositionRecord, int, error) {
			res, err := s.PurchasePositions(ctx, q)
			return res.Records, res.Named, err
		})
		if err != nil {
			return err
		}
		return s.greeks(gctx, req, m, &r)
	})
	if m.USD {
		g.Go(func() error {
			mp, err := s.MarkPrice(gctx, market.MarketRequest{ChainID: req.ChainID, Market: m.Address})
			if err == nil {
				r.price, _ = new(big.Int).SetString(mp.Price, 10)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return r.build(m), nil
}

// optionAcc gathers one option's figures from the three reads.
type optionAcc struct {
	o                   PortfolioOption
	isCall, bought      bool
	paid, profit, value *big.Int
}

// build joins the reads by option id.
func (r marketReads) build(m market.TradedMarket) *PortfolioMarket {
	byID := map[string]*optionAcc{}
	get := func(id, typ string) *optionAcc {
		if byID[id] == nil {
			byID[id] = &optionAcc{o: PortfolioOption{OptionID: id, Type: typ}, isCall: typ == "call",
				paid: new(big.Int), profit: new(big.Int), value: new(big.Int)}
		}
		return byID[id]
	}
	for _, p := range r.purchases {
		a := get(p.OptionID, p.Type)
		a.bought, a.o.Premium, a.o.ProtocolFees = true, p.Premium, p.ProtocolFees
		out := p.Outcome
		a.o.Outcome, a.o.Status = &out, out.Status
		addText(a.paid, p.Premium)
		addText(a.paid, p.ProtocolFees)
	}
	for _, x := range r.exercises {
		a := get(x.OptionID, x.Type)
		a.o.Exercises++
		if x.ProfitToOwner != nil {
			addText(a.profit, *x.ProfitToOwner)
		}
	}
	for _, p := range r.positions {
		a := get(p.OptionID, p.Type)
		a.o.Open = true
		addText(a.value, p.ValueIfExercised)
	}
	out := &PortfolioMarket{Market: m.Address.Hex(), CallAsset: m.CallAsset, PutAsset: m.PutAsset, USD: m.USD, Options: []PortfolioOption{},
		Greeks: r.greeks, GreeksUnknown: r.greeksUnknown}
	sums := newPortfolioSums()
	for _, a := range byID {
		out.Options = append(out.Options, a.finish(m, r.price, sums))
	}
	sort.Slice(out.Options, func(i, j int) bool { return lessID(out.Options[i].OptionID, out.Options[j].OptionID) })
	out.Totals = sums.totals()
	return out
}

// finish sets the option's figures and adds them to sums.
func (a *optionAcc) finish(m market.TradedMarket, price *big.Int, sums *portfolioSums) PortfolioOption {
	premiumToken, profitToken := m.PutAsset, m.CallAsset
	if a.isCall {
		premiumToken, profitToken = m.CallAsset, m.PutAsset
	}
	o := a.o
	if o.Premium == "" {
		o.Premium, o.ProtocolFees = "0", "0"
	}
	if o.Status == "" {
		o.Status = map[bool]string{true: trade.OutcomeOpen, false: "closed"}[o.Open]
	}
	o.PremiumPaid = vocab.TokenAmount{Token: premiumToken, Amount: a.paid.String()}
	o.ExerciseProfit = vocab.TokenAmount{Token: profitToken, Amount: a.profit.String()}
	o.ValueIfExercised = vocab.TokenAmount{Token: profitToken, Amount: a.value.String()}
	realized := tokenSums{}
	realized.add(profitToken, a.profit)
	realized.add(premiumToken, new(big.Int).Neg(a.paid))
	o.Realized = realized.list()
	unrealized := tokenSums{}
	unrealized.add(profitToken, a.value)
	o.Unrealized = unrealized.list()
	if price != nil {
		call, put := new(big.Int), a.value
		if !a.isCall {
			call, put = a.value, new(big.Int)
		}
		if usd := market.USDOf(m, call, put, price); usd != nil {
			text := market.USDText(usd)
			o.UnrealizedUSD = &text
			sums.usd.Add(sums.usd, usd)
		}
	}
	sums.paid.add(premiumToken, a.paid)
	sums.profit.add(profitToken, a.profit)
	sums.realized.addAll(realized)
	sums.unrealized.addAll(unrealized)
	if o.Open {
		sums.open++
	}
	return o
}

// lessID orders decimal ids numerically.
func lessID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// addText adds a base-unit integer string to sum (the sides' own
// answers, which are integers by construction).
func addText(sum *big.Int, s string) {
	if v, ok := new(big.Int).SetString(s, 10); ok {
		sum.Add(sum, v)
	}
}

// tokenSums are amounts by token, keeping each token's description.
type tokenSums map[string]*tokenSum

type tokenSum struct {
	token  vocab.Token
	amount *big.Int
}

func (t tokenSums) add(tok vocab.Token, v *big.Int) {
	k := strings.ToLower(tok.Address)
	if t[k] == nil {
		t[k] = &tokenSum{token: tok, amount: new(big.Int)}
	}
	t[k].amount.Add(t[k].amount, v)
}

func (t tokenSums) addAll(o tokenSums) {
	for _, s := range o {
		t.add(s.token, s.amount)
	}
}

func (t tokenSums) addList(l []vocab.TokenAmount) {
	for _, a := range l {
		v, _ := new(big.Int).SetString(a.Amount, 10)
		if v != nil {
			t.add(a.Token, v)
		}
	}
}

// list is the sums by token address, ascending (any case).
func (t tokenSums) list() []vocab.TokenAmount {
	out := make([]vocab.TokenAmount, 0, len(t))
	for _, s := range t {
		out = append(out, vocab.TokenAmount{Token: s.token, Amount: s.amount.String()})
	}
	sort.Slice(out, func(i, j int) bool { return lowerHex(out[i].Token.Address) < lowerHex(out[j].Token.Address) })
	return out
}

// portfolioSums sum options' and markets' figures.
type portfolioSums struct {
	paid, profit, realized, unrealized tokenSums
	usd                                *big.Rat
	open                               int
}

func newPortfolioSums() *portfolioSums {
	return &portfolioSums{paid: tokenSums{}, profit: tokenSums{}, realized: tokenSums{}, unrealized: tokenSums{}, usd: new(big.Rat)}
}

func (p *portfolioSums) addTotals(t PortfolioTotals) {
	p.paid.addList(t.PremiumPaid)
	p.profit.addList(t.ExerciseProfit)
	p.realized.addList(t.Realized)
	p.unrealized.addList(t.Unrealized)
	if v, ok := new(big.Rat).SetString(t.UnrealizedUSD); ok {
		p.usd.Add(p.usd, v)
	}
	p.open += t.OpenOptions
}

func (p *portfolioSums) totals() PortfolioTotals {
	return PortfolioTotals{PremiumPaid: p.paid.list(), ExerciseProfit: p.profit.list(), Realized: p.realized.list(),
		Unrealized: p.unrealized.list(), OpenOptions: p.open, UnrealizedUSD: market.USDText(p.usd)}
}
