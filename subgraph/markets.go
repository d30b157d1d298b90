package subgraph

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/queries"
)

// Market is one option market as OptionMarkets selects it: what the
// subgraph knows of it (its chain facts come from the chain) and its sums.
type Market struct {
	ID        Address `json:"id"`
	Version   int     `json:"version"`
	CallAsset Address `json:"callAsset"`
	PutAsset  Address `json:"putAsset"`
	PrimePool struct {
		ID Address `json:"id"`
	} `json:"primePool"`
	// Pools are the MarketPools the subgraph last read the market as
	// approving.
	Pools []marketPool `json:"pools"`
	MarketSums
	// DayData holds the market's latest days with activity, newest first.
	DayData []MarketDay `json:"dayData"`
}

// MarketSums are a market's purchase and exercise figures over a period:
// volume is the collateral the options locked (LogMintOption's
// totalAssetWithdrawn), in the call asset for calls and the put asset for
// puts, as are premiums and protocol fees.
type MarketSums struct {
	Purchases        int    `json:"purchases"`
	Exercises        int    `json:"exercises"`
	CallVolume       BigInt `json:"callVolume"`
	PutVolume        BigInt `json:"putVolume"`
	CallPremium      BigInt `json:"callPremium"`
	PutPremium       BigInt `json:"putPremium"`
	CallProtocolFees BigInt `json:"callProtocolFees"`
	PutProtocolFees  BigInt `json:"putProtocolFees"`
}

// MarketDay is a MarketDayData: the sums of the UTC day starting at Start.
type MarketDay struct {
	Start int64 `json:"start"`
	MarketSums
}

func (s MarketSums) complete() bool {
	for _, b := range []BigInt{s.CallVolume, s.PutVolume, s.CallPremium, s.PutPremium, s.CallProtocolFees, s.PutProtocolFees} {
		if b.Int == nil {
			return false
		}
	}
	return s.Purchases >= 0 && s.Exercises >= 0
}

// OptionMarkets returns every option market the subgraph indexes, paging
// by id until a short page.
func (c *Client) OptionMarkets(ctx context.Context) ([]Market, Meta, error) {
	return idPages(ctx, c, idQuery[Market]{doc: queries.OptionMarkets, field: "markets", id: func(m Market) string { return LowerHex(m.ID.Addr()) }, check: func(m Market) error {
		if m.Version != 1 && m.Version != 2 {
			return fmt.Errorf("market %s has version %d", m.ID.Addr().Hex(), m.Version)
		}
		if m.PrimePool.ID == (Address{}) {
			return fmt.Errorf("market %s has no prime pool", m.ID.Addr().Hex())
		}
		if !m.MarketSums.complete() {
			return fmt.Errorf("market %s lacks its sums", m.ID.Addr().Hex())
		}
		for _, d := range m.DayData {
			if !d.complete() {
				return fmt.Errorf("market %s: day %d lacks its sums", m.ID.Addr().Hex(), d.Start)
			}
		}
		return nil
	}})
}

// ApprovedPools are the pools the subgraph last read the market as
// approving: candidates whose approval the chain confirms.
func (m Market) ApprovedPools() []common.Address {
	out := make([]common.Address, len(m.Pools))
	for i, p := range m.Pools {
		out[i] = p.Pool.ID.Addr()
	}
	return out
}
