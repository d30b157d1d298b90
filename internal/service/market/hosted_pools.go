package market

import (
	"context"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// HostedOptionsPool is one market as the hosted API's older /clamm/pools
// gave it (elvarg's getOptionsPools, before 2024-02-27): its pair, tokens
// and addresses, and its TTL grid with the IV its pricing holds for each.
type HostedOptionsPool struct {
	PairName           string      `json:"pairName"`
	PairTicker         string      `json:"pairTicker"`
	CallToken          HostedToken `json:"callToken"`
	PutToken           HostedToken `json:"putToken"`
	OptionsPoolAddress string      `json:"optionsPoolAddress"`
	TokenURIFetcher    string      `json:"tokenURIFetcher"`
	// TTLs are seconds as decimal strings; IVs line up with them: the
	// market's optionPricing().ttlToVol(ttl), integer percent, as decimal
	// strings.
	TTLs      []string `json:"ttls"`
	IVs       []string `json:"ivs"`
	PrimePool string   `json:"primePool"`
}

// HostedTTLs are the TTLs the hosted API's pools listed (elvarg's
// EXPIRIES_TO_KEY: 20 minutes to a day); a market lists those its pricing
// holds an IV for.
var HostedTTLs = []uint64{1200, 3600, 7200, 21600, 43200, 86400}

// HostedPools answers a chain's markets in the hosted /clamm/pools shape:
// the option markets (markets.go), their periphery (one round trip) and
// each market's ttlToVol over HostedTTLs (one pricing read per market,
// four at a time). A V1 market, which holds its IVs itself, and a market
// without optionPricing() list no TTL.
func (s *Market) HostedPools(ctx context.Context, chainID uint64) ([]HostedOptionsPool, uint64, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, 0, err
	}
	oms, err := s.OptionMarkets(ctx, chainID)
	if err != nil {
		return nil, 0, err
	}
	addrs, per, err := peripheryOf(ctx, up, oms)
	if err != nil {
		return nil, 0, err
	}
	out := make([]HostedOptionsPool, len(oms.Markets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, om := range oms.Markets {
		out[i] = HostedOptionsPool{
			PairName: PairNameOf(om.CallAsset.Symbol, om.PutAsset.Symbol), PairTicker: TickerOf(om.CallAsset.Symbol, om.PutAsset.Symbol),
			CallToken: hostedToken(om.CallAsset), PutToken: hostedToken(om.PutAsset),
			OptionsPoolAddress: om.Address, TokenURIFetcher: per[i].TokenURIFetcher.Hex(), PrimePool: om.PrimePool.Address,
			TTLs: []string{}, IVs: []string{},
		}
		if om.Version == "V1" {
			continue
		}
		g.Go(func() (err error) {
			out[i].TTLs, out[i].IVs, err = ttlGrid(gctx, up, addrs[i])
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	return out, oms.Block, nil
}

// ttlGrid reads the market's ttlToVol for each of HostedTTLs in one
// pricing read (at the pool's current tick; ttlToVol depends on the ttl
// alone) and keeps the ttls it holds an IV for.
func ttlGrid(ctx context.Context, up *vocab.Upstreams, market common.Address) (ttls, ivs []string, err error) {
	_, st, err := up.Chain.MarketSnapshot(ctx, market)
	if err != nil {
		return nil, nil, err
	}
	asks := make([]contracts.PricingAsk, len(HostedTTLs))
	for i, ttl := range HostedTTLs {
		asks[i] = contracts.PricingAsk{StrikeTick: big.NewInt(int64(st.Tick)), Ttl: new(big.Int).SetUint64(ttl), Total: new(big.Int)}
	}
	head, answers, err := up.Chain.ReadPricing(ctx, market, common.Address{}, asks)
	if err != nil {
		return nil, nil, err
	}
	ttls, ivs = []string{}, []string{}
	if head.Pricing == (common.Address{}) {
		return ttls, ivs, nil // the market has no optionPricing()
	}
	for i, a := range answers {
		if i < len(HostedTTLs) && a.VolOk && a.BaseVol != nil && a.BaseVol.Sign() > 0 {
			ttls = append(ttls, strconv.FormatUint(HostedTTLs[i], 10))
			ivs = append(ivs, a.BaseVol.String())
		}
	}
	return ttls, ivs, nil
}
