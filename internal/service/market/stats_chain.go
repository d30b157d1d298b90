package market

import (
	"context"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// ChainStatsRequest is a validated chain-wide statistics request: a chain
// and the window [From, To) as for one market's.
type ChainStatsRequest struct {
	ChainID  uint64
	From, To int64
}

// ChainStats are the statistics of every market of a chain over one
// window, at one block: each market's own answer, and their sums. Sums of
// amounts are by token (markets of different pairs add only where they
// share a token); counts add up, except buyers, distinct over the chain;
// TVL counts a range two markets reach once.
type ChainStats struct {
	ChainID string `json:"chainId"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Markets are the chain's markets' answers, as /clamm/stats gives them.
	Markets []MarketStats `json:"markets"`
	Totals  ChainFigures  `json:"totals"`
	Days    []ChainDay    `json:"days"`
	// OpenInterest and ExpiredUnsettled are the markets' summed by token.
	OpenInterest     ChainHoldings `json:"openInterest"`
	ExpiredUnsettled ChainHoldings `json:"expiredUnsettled"`
	// TVL is the liquidity of every distinct range some market counts,
	// by token.
	TVL ChainHoldings `json:"tvl"`
	// Pools are TVL and open interest per pool.
	Pools []PoolHoldings `json:"pools"`
	block uint64
}

// Block is the subgraph block the answer reflects.
func (c ChainStats) Block() uint64 { return c.block }

// ChainFigures are flows over the chain's markets.
type ChainFigures struct {
	Purchases int `json:"purchases"`
	Buyers    int `json:"buyers"`
	Exercises int `json:"exercises"`
	// Tokens are the amounts by the token they are in, by address.
	Tokens []TokenFigures `json:"tokens"`
	// USD sums the usd figures of the markets that have them.
	USD ChainUSD `json:"usd"`
}

// TokenFigures are one token's flows: what the markets' figures hold in
// it (a market's callAsset amounts go to its call asset, putAsset amounts
// to its put asset).
type TokenFigures struct {
	Token        vocab.Token `json:"token"`
	Volume       string      `json:"volume"`
	Premiums     string      `json:"premiums"`
	ProtocolFees string      `json:"protocolFees"`
	Profit       string      `json:"profit"`
}

// ChainUSD sums the usd figures of the markets whose put asset is a
// configured USD stablecoin (Markets counts them); the other markets'
// amounts are in Tokens only.
type ChainUSD struct {
	Markets      int    `json:"markets"`
	Volume       string `json:"volume"`
	Premiums     string `json:"premiums"`
	ProtocolFees string `json:"protocolFees"`
	Profit       string `json:"profit"`
}

// ChainDay is one UTC day of the window over the chain's markets.
type ChainDay struct {
	Start string `json:"start"`
	From  string `json:"from"`
	To    string `json:"to"`
	ChainFigures
}

// ChainHoldings are holdings summed by token.
type ChainHoldings struct {
	Tokens []vocab.TokenAmount `json:"tokens"`
}

// PoolHoldings are one pool's TVL (its distinct ranges some market
// counts) and open interest (the unexpired options' legs in it), each as
// its two tokens' amounts.
type PoolHoldings struct {
	Pool         string              `json:"pool"`
	TVL          []vocab.TokenAmount `json:"tvl"`
	Ranges       int                 `json:"ranges"`
	OpenInterest []vocab.TokenAmount `json:"openInterest"`
}

// holdings are what a market's statistics counted per range and pool.
type holdings struct {
	ranges map[string]rangeHeld
	pools  map[common.Address]*[2]*big.Int // open interest, token0 and token1
}

// rangeHeld is a range's liquidity (reserved included) as its pool's
// tokens at the answer's block.
type rangeHeld struct {
	pool    common.Address
	tokens  [2]common.Address
	amounts [2]*big.Int
}

// maxChainMarkets bounds the markets one chain-wide answer reads.
const maxChainMarkets = 64

// chainMarkets are the markets the subgraph lists on the chain, at most
// maxChainMarkets of them (a chain-wide answer reads each), and the block
// of that list.
func chainMarkets(ctx context.Context, up *vocab.Upstreams, chainID uint64) ([]common.Address, subgraph.Meta, error) {
	list, meta, err := up.Subgraph.OptionMarkets(ctx)
	if err != nil {
		return nil, meta, err
	}
	if len(list) > maxChainMarkets {
		return nil, meta, problem.New(problem.SubgraphError, "the subgraph lists %d option markets on chain %d; a chain-wide answer reads at most %d", len(list), chainID, maxChainMarkets)
	}
	out := make([]common.Address, len(list))
	for i, m := range list {
		out[i] = m.ID.Addr()
	}
	return out, meta, nil
}

// ChainStats answers the statistics of every market of a chain: the
// subgraph's list of markets, then each market's statistics (four at a
// time, all at the answer's block), summed. A listed market the chain does
// not show as an option market the gateway reads is left out (notCounted),
// as the markets list and the leaderboard leave it out: one such listing
// does not take a chain's figures away; an upstream failure still fails
// the answer.
func (s *Market) ChainStats(ctx context.Context, req ChainStatsRequest) (ChainStats, error) {
	up, err := s.chains.Of(req.ChainID, true)
	if err != nil {
		return ChainStats{}, err
	}
	markets, meta, err := chainMarkets(ctx, up, req.ChainID)
	if err != nil {
		return ChainStats{}, err
	}
	out := ChainStats{ChainID: strconv.FormatUint(req.ChainID, 10), From: strconv.FormatInt(req.From, 10), To: strconv.FormatInt(req.To, 10), block: meta.Block}
	stats := make([]*MarketStats, len(markets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, m := range markets {
		g.Go(func() error {
			st, err := s.MarketStats(gctx, StatsRequest{ChainID: req.ChainID, Market: m, From: req.From, To: req.To})
			if notCounted(err) {
				return nil
			}
			if err != nil {
				return err
			}
			stats[i] = &st
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return ChainStats{}, err
	}
	out.Markets = make([]MarketStats, 0, len(stats))
	for _, st := range stats {
		if st != nil {
			out.Markets = append(out.Markets, *st)
		}
	}
	slices.SortFunc(out.Markets, func(a, b MarketStats) int {
		return strings.Compare(strings.ToLower(a.Market), strings.ToLower(b.Market))
	})
	out.sum()
	return out, nil
}

// notCounted says whether err is a listed market's own fault that a
// chain-wide answer leaves the market out for: the chain shows no option
// market there (MARKET_NOT_FOUND) or one the gateway does not read
// (MARKET_UNSUPPORTED). Anything else (an upstream down, a refusal of the
// window) fails the answer.
func notCounted(err error) bool {
	if err == nil {
		return false
	}
	c := problem.As(err).Code
	return c == problem.MarketNotFound || c == problem.MarketUnsupported
}
