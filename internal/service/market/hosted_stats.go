package market

import (
	"context"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The hosted API's bare statistics (/clamm/stats/tvl, /tvl/{pool},
// /open-interest, /volume, /dau, /fees, /total-volume): single numbers in
// USD that its dashboards and a reward engine parse. Each is a figure of
// /clamm/stats or /clamm/stats/chain, read by those use cases and taken
// out of their answers, so the two shapes never disagree. A USD figure
// that no configured stablecoin prices is refused with NO_USD_PRICE (422),
// never answered as 0: a reward engine divides by the pool's TVL.

// USD is a figure in US dollars answered as a bare JSON number: the exact
// decimal the statistics hold (never a float's rounding), which a client
// parses as a number as it parsed the hosted API's.
type USD struct{ r *big.Rat }

// MarshalJSON writes the exact decimal as a JSON number.
func (u USD) MarshalJSON() ([]byte, error) { return []byte(ratString(u.r)), nil }

// Rat is the figure as a number (0 when none).
func (u USD) Rat() *big.Rat {
	if u.r == nil {
		return new(big.Rat)
	}
	return new(big.Rat).Set(u.r)
}

// HostedFees is the hosted API's FeesResponseDto: the window's premiums
// and protocol fees in USD.
type HostedFees struct {
	Premiums     USD `json:"premiums"`
	ProtocolFees USD `json:"protocolFees"`
}

// PoolTVLRequest names an AMM pool of a chain.
type PoolTVLRequest struct {
	ChainID uint64
	Pool    common.Address
}

// holdingsWindow is the window a figure of the answer's block alone (TVL,
// open interest) reads the statistics with: one second at the epoch,
// which holds no event, so only the holdings are read.
var holdingsWindow = [2]int64{0, 1}

// HostedTVL is the market's TVL in USD at the answer's block
// (/clamm/stats's tvl.usd).
func (s *Market) HostedTVL(ctx context.Context, req MarketRequest) (USD, uint64, error) {
	return s.holdingsFigure(ctx, req, "TVL", func(st MarketStats) *big.Rat { return st.TVL.usd })
}

// HostedOpenInterest is the market's open interest in USD at the answer's
// block (/clamm/stats's openInterest.usd: unexpired options' collateral).
func (s *Market) HostedOpenInterest(ctx context.Context, req MarketRequest) (USD, uint64, error) {
	return s.holdingsFigure(ctx, req, "open interest", func(st MarketStats) *big.Rat { return st.OpenInterest.usd })
}

// holdingsFigure is a USD figure of the market's holdings at the answer's
// block, as the statistics read them over holdingsWindow.
func (s *Market) holdingsFigure(ctx context.Context, req MarketRequest, what string, pick func(MarketStats) *big.Rat) (USD, uint64, error) {
	st, err := s.MarketStats(ctx, StatsRequest{ChainID: req.ChainID, Market: req.Market, From: holdingsWindow[0], To: holdingsWindow[1]})
	if err != nil {
		return USD{}, 0, err
	}
	u, err := usdFigure(pick(st), st, what)
	return u, st.block, err
}

// HostedVolume is the window's volume in USD (/clamm/stats's
// totals.volume.usd: the collateral the options bought locked).
func (s *Market) HostedVolume(ctx context.Context, req StatsRequest) (USD, uint64, error) {
	st, err := s.MarketStats(ctx, req)
	if err != nil {
		return USD{}, 0, err
	}
	u, err := usdFigure(st.Totals.Volume.usd, st, "volume")
	return u, st.block, err
}

// HostedDAU is the window's distinct buyers (/clamm/stats's
// totals.buyers): the hosted API's "number of unique users". A count, so
// every market has it.
func (s *Market) HostedDAU(ctx context.Context, req StatsRequest) (int, uint64, error) {
	st, err := s.MarketStats(ctx, req)
	if err != nil {
		return 0, 0, err
	}
	return st.Totals.Buyers, st.block, nil
}

// HostedFees are the window's premiums and protocol fees in USD
// (/clamm/stats's totals.premiums.usd and totals.protocolFees.usd).
func (s *Market) HostedFees(ctx context.Context, req StatsRequest) (HostedFees, uint64, error) {
	st, err := s.MarketStats(ctx, req)
	if err != nil {
		return HostedFees{}, 0, err
	}
	p, err := usdFigure(st.Totals.Premiums.usd, st, "premiums")
	if err != nil {
		return HostedFees{}, 0, err
	}
	f, err := usdFigure(st.Totals.ProtocolFees.usd, st, "protocol fees")
	return HostedFees{Premiums: p, ProtocolFees: f}, st.block, err
}

// usdFigure is v, or NO_USD_PRICE where the market's put asset is not a
// configured USD stablecoin (v nil).
func usdFigure(v *big.Rat, st MarketStats, what string) (USD, error) {
	if v == nil || !st.USD {
		return USD{}, problem.New(problem.NoUSDPrice, "market %s's put asset %s is not a configured USD stablecoin: its %s has no USD figure (/clamm/stats gives it by token)", st.Market, st.PutAsset.Symbol, what)
	}
	return USD{new(big.Rat).Set(v)}, nil
}

// TotalVolumeWindow is how far back /clamm/stats/total-volume counts: the
// statistics' longest window, MaxStatsWindow, ending with the answer's
// block (the hosted API's window is not known; all time is not one read).
const TotalVolumeWindow = MaxStatsWindow

// HostedTotalVolume is the chain's volume in USD over the TotalVolumeWindow
// seconds up to and including the answer's block: /clamm/stats/chain's
// totals.usd.volume, the markets whose put asset is a configured USD
// stablecoin. A chain with markets and none of them priced in USD is
// NO_USD_PRICE; a chain with no market at all is 0.
func (s *Market) HostedTotalVolume(ctx context.Context, chainID uint64) (USD, uint64, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return USD{}, 0, err
	}
	// The markets' list's block is the answer's (pinned before it): its
	// time ends the window.
	_, meta, err := chainMarkets(ctx, up, chainID)
	if err != nil {
		return USD{}, 0, err
	}
	if meta.Timestamp <= 0 {
		return USD{}, 0, problem.New(problem.SubgraphError, "the subgraph's _meta names no block timestamp; the option markets document must select _meta { block { number timestamp } }")
	}
	to := max(meta.Timestamp+1, TotalVolumeWindow)
	cs, err := s.ChainStats(ctx, ChainStatsRequest{ChainID: chainID, From: to - TotalVolumeWindow, To: to})
	if err != nil {
		return USD{}, 0, err
	}
	if len(cs.Markets) > 0 && cs.Totals.USD.Markets == 0 {
		return USD{}, 0, problem.New(problem.NoUSDPrice, "no market of chain %d has a configured USD stablecoin as its put asset: its volume has no USD figure (/clamm/stats/chain gives it by token)", chainID)
	}
	var sum decimalSum
	for _, m := range cs.Markets {
		sum.add(m.Totals.Volume.usd)
	}
	return USD{sum.r}, cs.block, nil
}

// HostedPoolTVL is a pool's TVL in USD at the answer's block: the distinct
// ranges of the pool that some market of the chain counts in its TVL (as
// /clamm/stats/chain's pools[].tvl), valued as /clamm/stats values a
// market's TVL: the put-asset amount at one dollar and the call-asset
// amount in the put asset at the prime pool's price, by a market of the
// pool's pair whose put asset is a configured USD stablecoin. A pool no
// market holds a range in is POOL_NOT_FOUND; one no such market prices,
// NO_USD_PRICE.
func (s *Market) HostedPoolTVL(ctx context.Context, req PoolTVLRequest) (USD, uint64, error) {
	cs, err := s.ChainStats(ctx, ChainStatsRequest{ChainID: req.ChainID, From: holdingsWindow[0], To: holdingsWindow[1]})
	if err != nil {
		return USD{}, 0, err
	}
	sums := map[common.Address]*big.Int{} // the pool's ranges by token
	seen := map[string]bool{}
	for _, m := range cs.Markets {
		for id, r := range m.held.ranges {
			if r.pool != req.Pool || seen[id] {
				continue
			}
			seen[id] = true
			for i, t := range r.tokens {
				if sums[t] == nil {
					sums[t] = new(big.Int)
				}
				sums[t].Add(sums[t], r.amounts[i])
			}
		}
	}
	if len(seen) == 0 {
		return USD{}, 0, problem.New(problem.PoolNotFound, "no option market of chain %d holds a range in pool %s at this block", req.ChainID, req.Pool.Hex())
	}
	for _, m := range cs.Markets {
		call, put := sums[m.callAsset], sums[m.putAsset]
		if !m.USD || call == nil || put == nil || m.price == nil {
			continue
		}
		raw := new(big.Int).Add(put, m.v.inPut(call, m.price))
		return USD{m.v.usdOf(raw)}, cs.block, nil
	}
	return USD{}, 0, problem.New(problem.NoUSDPrice, "no market of pool %s's pair (%s) has a configured USD stablecoin as its put asset: its TVL has no USD figure (/clamm/stats/chain gives it by token)", req.Pool.Hex(), tokenList(sums))
}

// tokenList names the tokens of sums, for a message.
func tokenList(sums map[common.Address]*big.Int) string {
	names := make([]string, 0, len(sums))
	for a := range sums {
		names = append(names, a.Hex())
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
