package market

import (
	"context"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// MaxBoardEvents bounds the purchases, and the exercises, of one
// leaderboard window: one Graph Node page. A window that fills the page is
// refused (the client narrows it), so every figure of an answer counts
// every event of its window.
const MaxBoardEvents = subgraph.MaxFirst

// LeaderboardRequest is a validated leaderboard request: a chain, one of
// its markets or every market (Market nil), the half-open window
// [From, To) of unix seconds, and the page of the ranking.
type LeaderboardRequest struct {
	ChainID     uint64
	Market      *common.Address
	From, To    int64
	First, Skip int
}

// Leaderboard is the traders of a chain, or of one market, over a window,
// ranked by their net result in USD (docs/api.md defines every figure).
type Leaderboard struct {
	ChainID string `json:"chainId"`
	// Markets are the markets counted, ascending by address (any case).
	Markets   []string `json:"markets"`
	From      string   `json:"from"`
	To        string   `json:"to"`
	Purchases int      `json:"purchases"`
	Exercises int      `json:"exercises"`
	// Traders is how many traders the window holds (the ranking's
	// length); Entries is the page of it asked for.
	Traders int                `json:"traders"`
	Entries []LeaderboardEntry `json:"entries"`
	block   uint64
}

// Block is the subgraph block the answer reflects.
func (l Leaderboard) Block() uint64 { return l.block }

// LeaderboardEntry is one trader's figures over the window.
type LeaderboardEntry struct {
	Rank      int    `json:"rank"`
	Trader    string `json:"trader"`
	Purchases int    `json:"purchases"`
	Exercises int    `json:"exercises"`
	// USD values the figures of the markets whose put asset is a
	// configured USD stablecoin; the ranking is by its net.
	USD BoardUSD `json:"usd"`
	// Tokens are every figure by the token it is in, by address.
	Tokens []BoardTokenFigures `json:"tokens"`
}

// BoardTokenFigures are a trader's figures in one token, in base units.
type BoardTokenFigures struct {
	Token        vocab.Token `json:"token"`
	Volume       string      `json:"volume"`
	Premiums     string      `json:"premiums"`
	ProtocolFees string      `json:"protocolFees"`
	Realised     string      `json:"realised"`
	// Net is Realised - Premiums - ProtocolFees (may be negative).
	Net string `json:"net"`
}

// BoardUSD are a trader's figures in USD markets as exact decimals.
type BoardUSD struct {
	Volume       string `json:"volume"`
	Premiums     string `json:"premiums"`
	ProtocolFees string `json:"protocolFees"`
	Realised     string `json:"realised"`
	Net          string `json:"net"`
}

// boardMarket is what valuing a market's events needs.
type boardMarket struct {
	info *chain.MarketInfo
	v    valuer
}

// Leaderboard ranks the traders of the window: the subgraph's purchases
// and exercises of the markets counted (one page each, at one block),
// summed per trader.
func (s *Market) Leaderboard(ctx context.Context, req LeaderboardRequest) (Leaderboard, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return Leaderboard{}, err
	}
	markets, listed, err := boardMarkets(ctx, up, req)
	if err != nil {
		return Leaderboard{}, err
	}
	out := Leaderboard{ChainID: strconv.FormatUint(req.ChainID, 10), From: strconv.FormatInt(req.From, 10), To: strconv.FormatInt(req.To, 10),
		Markets: []string{}, Entries: []LeaderboardEntry{}, block: listed.Block}
	if len(markets) == 0 { // no market on the chain at the answer's block
		return out, nil
	}
	ps, xs, meta, err := boardEvents(ctx, up, markets, req.From, req.To)
	if err != nil {
		return Leaderboard{}, err
	}
	out.Purchases, out.Exercises, out.block = len(ps), len(xs), meta.Block
	for _, m := range sortedAddresses(markets) {
		out.Markets = append(out.Markets, m.Hex())
	}
	b := newBoardSums(markets)
	for _, p := range ps {
		b.purchase(p)
	}
	for _, x := range xs {
		b.exercise(x)
	}
	out.Entries, out.Traders = b.ranking(req.First, req.Skip)
	return out, nil
}

// boardEvents reads the purchases and exercises of markets with a block
// time in [from, to) (one page each, at one block). A window that fills
// the page is refused (the client narrows it), so every figure built on
// them counts every event of the window: the leaderboard's and the hosted
// PnL shapes' (hosted_pnl.go).
func boardEvents(ctx context.Context, up *vocab.Upstreams, markets map[common.Address]boardMarket, from, to int64) ([]subgraph.BoardPurchase, []subgraph.BoardExercise, subgraph.Meta, error) {
	q := subgraph.BoardQuery{Markets: sortedAddresses(markets), From: from, To: to, First: MaxBoardEvents}
	var (
		ps   []subgraph.BoardPurchase
		xs   []subgraph.BoardExercise
		meta subgraph.Meta
	)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ps, meta, err = up.Subgraph.BoardPurchases(gctx, q); return err })
	g.Go(func() (err error) { xs, _, err = up.Subgraph.BoardExercises(gctx, q); return err })
	if err := g.Wait(); err != nil {
		return nil, nil, meta, err
	}
	if len(ps) >= MaxBoardEvents || len(xs) >= MaxBoardEvents {
		return nil, nil, meta, problem.InvalidParam("to", "the window [%d, %d) holds at least %d purchases or exercises, more than one answer reads: ask a shorter window", from, to, MaxBoardEvents)
	}
	return ps, xs, meta, nil
}

// boardMarkets reads the markets counted: the one asked, or every market
// the subgraph lists on the chain (at most maxChainMarkets; a market the
// chain says is none or unsupported at the answer's block is left out, as
// the markets list does) with the block of that list.
func boardMarkets(ctx context.Context, up *vocab.Upstreams, req LeaderboardRequest) (map[common.Address]boardMarket, subgraph.Meta, error) {
	var (
		addrs  []common.Address
		listed subgraph.Meta
	)
	if req.Market != nil {
		addrs = []common.Address{*req.Market}
	} else {
		var err error
		if addrs, listed, err = chainMarkets(ctx, up, req.ChainID); err != nil {
			return nil, listed, err
		}
	}
	infos := make([]*chain.MarketInfo, len(addrs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, a := range addrs {
		g.Go(func() (err error) {
			if infos[i], err = up.Chain.Market(gctx, a); req.Market == nil && notCounted(err) {
				return nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, listed, err
	}
	out := make(map[common.Address]boardMarket, len(infos))
	for _, info := range infos {
		if info != nil {
			out[info.Market] = boardMarket{info: info, v: newValuer(up, info)}
		}
	}
	return out, listed, nil
}
