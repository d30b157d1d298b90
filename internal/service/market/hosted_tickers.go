package market

import (
	"context"
	"slices"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The hosted API keyed prices by a ticker ("WETH/USDC": the call asset's
// symbol, a slash, the put asset's) and a chain, not by a market. The
// registry here is built from the markets the chain's subgraph lists and
// their tokens' symbols as the chain answers them, so a new market is
// found by its ticker with no configuration.
//
// Matching ignores case: the hosted API's TradingView clients upper-case
// the ticker (WETH/USDC.E for WETH/USDC.e).
//
// A ticker names the chain's live market of that pair. A market is not
// live (Deprecated) when it is a V1 market (DopexV2OptionMarket, version 1
// in the subgraph) or when the configuration names the market that
// superseded it (config.Chain.SupersededMarkets, from the deployments
// registry's supersededBy: the frontend lists the successor, same pair,
// and not it; the hosted API listed the successor and dropped it). A
// deprecated market is reached by its ticker only when no live market of
// that ticker is listed on the chain: the demo, which lists Arbitrum's
// 2024 WETH/USDC market alone, finds it by WETH/USDC, and the full
// Arbitrum chain finds its successor. Every market, deprecated or not, is
// still served by its address. Two live markets with one ticker (the same
// pair on two pools, neither superseded) are ambiguous: the answer is a
// 400 naming both, and /clamm/mark-price and /clamm/candles take the
// market's address instead; so are two deprecated ones when no live one
// is listed.

// TickerMarket is one market as the registry holds it.
type TickerMarket struct {
	Market common.Address
	Ticker string // as the tokens spell it: CALL/PUT
	// Deprecated: a V1 market, or one SupersededBy names the successor of.
	Deprecated bool
	// SupersededBy is the market that replaced this one (zero if none).
	SupersededBy common.Address
	PrimePool    common.Address
	// CallAsset and PutAsset are the tokens' addresses (a quote asset's
	// dollar price is looked for among the chain's other markets).
	CallAsset, PutAsset common.Address
}

// TickerRegistry is one chain's tickers.
type TickerRegistry struct {
	chainID uint64
	byKey   map[string][]TickerMarket
}

// TickerOf is the hosted API's ticker of a pair: the call asset's symbol,
// "/", the put asset's.
func TickerOf(callSymbol, putSymbol string) string { return callSymbol + "/" + putSymbol }

// PairNameOf is the hosted API's pair name: the ticker with "-".
func PairNameOf(callSymbol, putSymbol string) string { return callSymbol + "-" + putSymbol }

// NewTickerRegistry indexes a chain's markets by ticker.
func NewTickerRegistry(chainID uint64, markets []TickerMarket) *TickerRegistry {
	r := &TickerRegistry{chainID: chainID, byKey: map[string][]TickerMarket{}}
	for _, m := range markets {
		k := strings.ToUpper(m.Ticker)
		r.byKey[k] = append(r.byKey[k], m)
	}
	for _, ms := range r.byKey {
		slices.SortFunc(ms, func(a, b TickerMarket) int { return strings.Compare(a.Market.Hex(), b.Market.Hex()) })
	}
	return r
}

// Resolve finds the market a ticker names (any case): a 400 on the
// ticker parameter when it names none, or two live markets (or two
// deprecated ones and no live one).
func (r *TickerRegistry) Resolve(ticker string) (TickerMarket, error) {
	ms := r.byKey[strings.ToUpper(ticker)]
	if len(ms) == 0 {
		return TickerMarket{}, problem.InvalidParam("ticker", "ticker %q names no option market on chain %d; its tickers: %s", ticker, r.chainID, r.tickers())
	}
	live := slices.DeleteFunc(slices.Clone(ms), func(m TickerMarket) bool { return m.Deprecated })
	if len(live) == 0 {
		live = ms
	}
	if len(live) == 1 {
		return live[0], nil
	}
	names := make([]string, len(live))
	for i, m := range live {
		names[i] = m.Market.Hex() + " (prime pool " + m.PrimePool.Hex() + ")"
	}
	return TickerMarket{}, problem.InvalidParam("ticker", "ticker %q is ambiguous on chain %d: it names the option markets %s; ask /clamm/mark-price or /clamm/candles with optionMarket= for one of them (where one replaced the other, the configuration's chains.%d.supersededMarkets says so)", ticker, r.chainID, strings.Join(names, " and "), r.chainID)
}

// tickers lists the registry's tickers, sorted, as the markets spell them.
func (r *TickerRegistry) tickers() string {
	out := make([]string, 0, len(r.byKey))
	for _, ms := range r.byKey {
		out = append(out, ms[0].Ticker)
	}
	slices.Sort(out)
	if len(out) == 0 {
		return "none (the subgraph lists no market)"
	}
	return strings.Join(out, ", ")
}

// Tickers builds a chain's ticker registry: the markets its subgraph
// lists, each with its tokens' symbols (the chain reader's immutables,
// cached after their first read: a V1 market answers the same
// callAsset/putAsset/primePool getters, so it is read as a V2 one is),
// deprecated when V1 or superseded in the configuration. A listed market
// the chain does not show as an option market is left out, as the markets
// list leaves it out.
func (s *Market) Tickers(ctx context.Context, chainID uint64) (*TickerRegistry, uint64, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, 0, err
	}
	list, meta, err := up.Subgraph.OptionMarkets(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make([]*TickerMarket, len(list))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, m := range list {
		g.Go(func() error {
			info, err := up.Chain.Market(gctx, m.ID.Addr())
			if notCounted(err) {
				return nil
			}
			if err != nil {
				return err
			}
			next, superseded := up.Config.SupersededBy(info.Market)
			out[i] = &TickerMarket{Market: info.Market, Ticker: TickerOf(info.CallAsset.Symbol, info.PutAsset.Symbol), PrimePool: info.Pool,
				Deprecated: m.Version == 1 || superseded, SupersededBy: next,
				CallAsset: info.CallAsset.Address, PutAsset: info.PutAsset.Address}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	var kept []TickerMarket
	for _, m := range out {
		if m != nil {
			kept = append(kept, *m)
		}
	}
	return NewTickerRegistry(chainID, kept), meta.Block, nil
}

// resolveTicker is the market a ticker names on a chain, and the subgraph
// block its list was read at.
func (s *Market) resolveTicker(ctx context.Context, chainID uint64, ticker string) (TickerMarket, uint64, error) {
	reg, at, err := s.Tickers(ctx, chainID)
	if err != nil {
		return TickerMarket{}, 0, err
	}
	m, err := reg.Resolve(ticker)
	return m, at, err
}
