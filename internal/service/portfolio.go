package service

import (
	"context"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/liquidity"
	"github.com/clamm-gateway/clamm-gateway/internal/service/market"
	"github.com/clamm-gateway/clamm-gateway/internal/service/trade"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// The portfolio: one user's options and LP positions over every market of
// a chain, composed here from the sides' own answers (the purchase and
// exercise histories, the positions, the mark price, the LP positions,
// the PnL deltas), since it is the one answer that needs all three sides;
// none of their maths is done again. docs/api.md ("Portfolio and hosted
// stats") defines every figure.

// PortfolioRequest is one chain's part of a portfolio request.
type PortfolioRequest struct {
	ChainID uint64
	User    common.Address
}

// ChainPortfolio is the user's portfolio on one chain, at one block.
type ChainPortfolio struct {
	ChainID string `json:"chainId"`
	// Markets are the chain's markets the user bought, exercised or holds
	// an option of, by address.
	Markets []PortfolioMarket `json:"markets"`
	// Liquidity are the user's LP positions on the chain, as
	// /clamm/deposit/positions lists them.
	Liquidity []liquidity.LPPositionRecord `json:"liquidity"`
	Totals    PortfolioTotals              `json:"totals"`
	block     uint64
}

// Block is the subgraph block the part reflects.
func (c ChainPortfolio) Block() uint64 { return c.block }

// PortfolioMarket is the user's options of one market.
type PortfolioMarket struct {
	Market    string            `json:"market"`
	CallAsset vocab.Token       `json:"callAsset"`
	PutAsset  vocab.Token       `json:"putAsset"`
	USD       bool              `json:"usd"`
	Options   []PortfolioOption `json:"options"`
	Totals    PortfolioTotals   `json:"totals"`
	// Greeks of the open options together (market.PortfolioGreeks); null
	// where an input of one of them cannot be read, GreeksUnknown saying
	// which (docs/api.md).
	Greeks        *market.PortfolioGreeks `json:"greeks"`
	GreeksUnknown string                  `json:"greeksUnknown,omitempty"`
}

// PortfolioOption is one option the user bought, exercised or holds.
type PortfolioOption struct {
	OptionID string `json:"optionId"`
	Type     string `json:"type"`
	// Open: the user owns it now with liquidity left (the positions'
	// rule); Status is the purchase history's outcome status where the
	// user bought it, else "open" or "closed".
	Open    bool   `json:"open"`
	Status  string `json:"status"`
	Premium string `json:"premium"`
	// PremiumPaid is premium + protocol fees of the user's purchase (0
	// for an option the user did not buy), in premiumToken.
	PremiumPaid  vocab.TokenAmount `json:"premiumPaid"`
	ProtocolFees string            `json:"protocolFees"`
	// ExerciseProfit is what the option's exercises paid the user
	// (profitToOwner), in the profit token; Exercises counts them.
	ExerciseProfit vocab.TokenAmount `json:"exerciseProfit"`
	Exercises      int               `json:"exercises"`
	// Outcome is the purchase history's (exercised, settled, expired
	// and by whom); null for an option the user did not buy.
	Outcome *trade.Outcome `json:"outcome"`
	// ValueIfExercised is the positions' value if exercised now ("0"
	// unless open), in the profit token.
	ValueIfExercised vocab.TokenAmount `json:"valueIfExercised"`
	// Realized is exerciseProfit - premiumPaid, by token (signed base
	// units); Unrealized is valueIfExercised.
	Realized   []vocab.TokenAmount `json:"realized"`
	Unrealized []vocab.TokenAmount `json:"unrealized"`
	// UnrealizedUSD is valueIfExercised in USD now; null where the put
	// asset is no configured USD stablecoin.
	UnrealizedUSD *string `json:"unrealizedUsd"`
}

// PortfolioTotals sum options (and, for a chain, markets).
type PortfolioTotals struct {
	PremiumPaid    []vocab.TokenAmount `json:"premiumPaid"`
	ExerciseProfit []vocab.TokenAmount `json:"exerciseProfit"`
	Realized       []vocab.TokenAmount `json:"realized"`
	Unrealized     []vocab.TokenAmount `json:"unrealized"`
	OpenOptions    int                 `json:"openOptions"`
	// RealizedUSD is the leaderboard's usd.net of the user over all the
	// chain's history (chain totals only; null for a market, and where
	// the history holds a page of events or more); UnrealizedUSD sums
	// the USD-priced options' unrealizedUsd.
	RealizedUSD   *string `json:"realizedUsd"`
	UnrealizedUSD string  `json:"unrealizedUsd"`
}

// Portfolio answers one chain's part of the portfolio: every market the
// chain lists (at most the chain-wide answers' bound), four at a time,
// and the user's LP positions, all at the answer's block.
func (s *Service) Portfolio(ctx context.Context, req PortfolioRequest) (ChainPortfolio, error) {
	markets, listBlock, err := s.TradedMarkets(ctx, req.ChainID)
	if err != nil {
		return ChainPortfolio{}, err
	}
	out := ChainPortfolio{ChainID: big.NewInt(0).SetUint64(req.ChainID).String(), Markets: []PortfolioMarket{}, block: listBlock}
	parts := make([]*PortfolioMarket, len(markets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, m := range markets {
		g.Go(func() (err error) { parts[i], err = s.portfolioMarket(gctx, req, m); return err })
	}
	g.Go(func() (err error) { out.Liquidity, err = s.lpPositions(gctx, req); return err })
	var realized *string
	g.Go(func() (err error) { realized, err = s.realizedUSD(gctx, req); return err })
	if err := g.Wait(); err != nil {
		return ChainPortfolio{}, err
	}
	sums := newPortfolioSums()
	for _, p := range parts {
		if p != nil && len(p.Options) > 0 {
			out.Markets = append(out.Markets, *p)
			sums.addTotals(p.Totals)
		}
	}
	out.Totals = sums.totals()
	out.Totals.RealizedUSD = realized
	return out, nil
}

// realizedUSD is the user's realised PnL in USD over the chain's whole
// history (the leaderboard's usd.net over [0, 2^31-1)); nil where that
// history holds a page of events or more (the leaderboard's bound, its
// INVALID_PARAMETER). Any other failure fails the portfolio, as a
// market's failed read does: a null cached for the history's TTL would
// say "history too large" of what was an upstream's passing 502.
func (s *Service) realizedUSD(ctx context.Context, req PortfolioRequest) (*string, error) {
	u, err := s.RealisedUSD(ctx, market.DeltaRequest{ChainID: req.ChainID, User: req.User, From: 0, To: 1<<31 - 1})
	if err != nil {
		if problem.As(err).Code == problem.InvalidParameter {
			return nil, nil
		}
		return nil, err
	}
	text := market.USDText(u.Rat())
	return &text, nil
}

// pageSize and maxSkip are the histories' page bounds (the gateway's).
const (
	pageSize = 1000
	maxSkip  = 5000
)

// allPages reads every page of a history, at most maxSkip+pageSize
// records. read answers a page and how many records its source named for
// it: a history's own length, the positions' Named (the chain thins them).
func allPages[R any](ctx context.Context, req trade.HistoryRequest, read func(context.Context, trade.HistoryRequest) ([]R, int, error)) ([]R, error) {
	return readPages(ctx, func(ctx context.Context, skip int) ([]R, int, error) {
		q := req
		q.First, q.Skip = pageSize, skip
		return read(ctx, q)
	}, func() error {
		return problem.New(problem.InvalidParameter, "user %s has more than %d records on market %s: more than a portfolio reads", req.User.Hex(), maxSkip+pageSize, req.Market.Hex())
	})
}

// readPages reads pages of pageSize from skip 0 until one comes back
// short, by the records the source named (read's named: a page the chain
// thins may hold fewer records and still not be the last). A source with
// more than maxSkip+pageSize records is refused (over's error), never
// read in part: a portfolio missing some records would show wrong sums.
func readPages[R any](ctx context.Context, read func(ctx context.Context, skip int) (page []R, named int, err error), over func() error) ([]R, error) {
	out := []R{}
	for skip := 0; ; skip += pageSize {
		page, named, err := read(ctx, skip)
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if named < pageSize {
			return out, nil
		}
		if skip+pageSize > maxSkip {
			return nil, over()
		}
	}
}

// lpPositions are every LP position of the user on the chain; a user
// with more than maxSkip+pageSize of them is refused as allPages refuses.
func (s *Service) lpPositions(ctx context.Context, req PortfolioRequest) ([]liquidity.LPPositionRecord, error) {
	return readPages(ctx, func(ctx context.Context, skip int) ([]liquidity.LPPositionRecord, int, error) {
		page, err := s.DepositPositions(ctx, liquidity.LPRequest{ChainID: req.ChainID, User: req.User, First: pageSize, Skip: skip})
		return page.Records, page.Named, err
	}, func() error {
		return problem.New(problem.InvalidParameter, "user %s has more than %d LP positions on chain %d: more than a portfolio reads", req.User.Hex(), maxSkip+pageSize, req.ChainID)
	})
}

// lowerHex is an address as the token lists compare it.
func lowerHex(a string) string { return strings.ToLower(a) }
