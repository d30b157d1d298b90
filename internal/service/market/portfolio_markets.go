package market

import (
	"context"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// TradedMarket is a market of a chain as the portfolio (package service)
// walks it: its address, its assets, and whether its put asset is a
// configured USD stablecoin.
type TradedMarket struct {
	Address             common.Address
	CallAsset, PutAsset vocab.Token
	USD                 bool
	callIs0             bool // the call asset is the prime pool's token0
}

// TradedMarkets are the chain's markets the leaderboard counts (the
// subgraph's list, less those the chain shows as no market the gateway
// reads), by address, and the block of that list.
func (s *Market) TradedMarkets(ctx context.Context, chainID uint64) ([]TradedMarket, uint64, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, 0, err
	}
	markets, listed, err := boardMarkets(ctx, up, LeaderboardRequest{ChainID: chainID})
	if err != nil {
		return nil, 0, err
	}
	out := make([]TradedMarket, 0, len(markets))
	for _, a := range sortedAddresses(markets) {
		m := markets[a]
		out = append(out, TradedMarket{Address: a, CallAsset: vocab.TokenOf(m.info.CallAsset), PutAsset: vocab.TokenOf(m.info.PutAsset), USD: m.v.usd, callIs0: m.info.Token0IsCall()})
	}
	return out, listed.Block, nil
}

// RealisedUSD is a user's realised PnL in USD on a chain over [from, to):
// the sum of the user's PnL deltas, the leaderboard's usd.net (hosted_pnl.go).
// A window holding a page of events or more is INVALID_PARAMETER, as the
// leaderboard's is.
func (s *Market) RealisedUSD(ctx context.Context, req DeltaRequest) (USD, error) {
	ds, _, err := s.PnlDeltas(ctx, req)
	if err != nil {
		return USD{}, err
	}
	sum := new(big.Rat)
	for _, d := range ds {
		sum.Add(sum, d.Delta.r)
	}
	return USD{sum}, nil
}

// USDOf values amounts of a market's assets in USD now: a put-asset amount
// at one dollar, a call-asset amount in the put asset at the mark price
// (one whole call asset in put-asset base units, MarkPrice.Price), floored
// once, as the statistics value holdings. Nil where the put asset is no
// configured USD stablecoin.
func USDOf(m TradedMarket, callAmount, putAmount, price *big.Int) *big.Rat {
	if !m.USD {
		return nil
	}
	dc, dp := decimalsOf(m.CallAsset), decimalsOf(m.PutAsset)
	raw := new(big.Int).Mul(callAmount, price)
	raw.Quo(raw, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dc)), nil))
	raw.Add(raw, putAmount)
	return new(big.Rat).SetFrac(raw, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(dp)), nil))
}

// USDText is an exact decimal of a USD value.
func USDText(r *big.Rat) string { return ratString(r) }

// decimalsOf is a token's decimals (vocab.Token holds them as text,
// as the chain reader read them).
func decimalsOf(t vocab.Token) int {
	d, _ := strconv.Atoi(t.Decimals)
	return d
}
