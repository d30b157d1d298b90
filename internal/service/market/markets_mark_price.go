package market

import (
	"context"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// MarketRequest names one market of a chain.
type MarketRequest struct {
	ChainID uint64
	Market  common.Address
}

// MarkPrice is a market's mark price: its prime pool's slot0 at the
// answer's block and the price of one call asset it makes, in the put
// asset and, where the put asset is a configured USD stablecoin, in USD.
type MarkPrice struct {
	Market    string      `json:"market"`
	Pool      string      `json:"pool"`
	CallAsset vocab.Token `json:"callAsset"`
	PutAsset  vocab.Token `json:"putAsset"`
	// SqrtPriceX96 and Tick are the prime pool's slot0.
	SqrtPriceX96 string `json:"sqrtPriceX96"`
	Tick         int    `json:"tick"`
	// Price is one whole call asset in put-asset base units, floored: what
	// the market's getCurrentPricePerCallAsset answers at the same block.
	Price string `json:"price"`
	// MarkPrice is Price as an exact decimal of the put asset.
	MarkPrice string `json:"markPrice"`
	USD       bool   `json:"usd"`
	// MarkPriceUSD and QuoteAssetPriceUSD are set only where the put asset
	// is a USD stablecoin of the configuration (valued at one dollar):
	// never guessed otherwise.
	MarkPriceUSD       *string `json:"markPriceUsd,omitempty"`
	QuoteAssetPriceUSD *string `json:"quoteAssetPriceUsd,omitempty"`
}

// MarkPrice answers a market's mark price: its immutables and its prime
// pool's slot0 in one round trip at the answer's block.
func (s *Market) MarkPrice(ctx context.Context, req MarketRequest) (MarkPrice, error) {
	up, err := s.chains.Of(req.ChainID, false)
	if err != nil {
		return MarkPrice{}, err
	}
	info, st, err := up.Chain.MarketSnapshot(ctx, req.Market)
	if err != nil {
		return MarkPrice{}, err
	}
	return markPriceOf(up, info, st), nil
}

// markPriceOf builds the answer from the market's immutables and slot0.
func markPriceOf(up *vocab.Upstreams, info *chain.MarketInfo, st chain.PoolState) MarkPrice {
	raw := clamm.PricePerCallAsset(st.SqrtPriceX96, info.Token0IsCall(), int(info.CallAsset.Decimals))
	out := MarkPrice{
		Market: info.Market.Hex(), Pool: info.Pool.Hex(), CallAsset: vocab.TokenOf(info.CallAsset), PutAsset: vocab.TokenOf(info.PutAsset),
		SqrtPriceX96: st.SqrtPriceX96.String(), Tick: st.Tick,
		Price: raw.String(), MarkPrice: clamm.FormatUnits(raw, int(info.PutAsset.Decimals)),
		USD: up.Config.IsUSDStablecoin(info.PutAsset.Address),
	}
	if out.USD {
		usd, one := out.MarkPrice, "1"
		out.MarkPriceUSD, out.QuoteAssetPriceUSD = &usd, &one
	}
	return out
}
