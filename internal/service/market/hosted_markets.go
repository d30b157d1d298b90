package market

import (
	"context"
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// HostedMarket is one market as the hosted API's
// /v1.1/clamm/option-markets gave it (stryke-fe's OptionMarketsResponseDtoV2,
// checked against a recorded answer): the same facts as /clamm/option-markets
// and /clamm/stats, in that shape.
//
// The liquidity and flow sums are decimals of the put asset (the hosted
// API's unit: USD only where the put asset is a stablecoin), call-asset
// amounts valued in the put asset at the prime pool's price (of now for
// liquidity, of each event for flows), written as JSON numbers holding
// the exact decimal.
type HostedMarket struct {
	ChainID uint64 `json:"chainId"`
	// Deprecated: a V1 (DopexV2OptionMarket) market, as the hosted API
	// marked its V1 USDC.e markets, or one the configuration names a
	// successor of (config.Chain.SupersededMarkets: Arbitrum's 2024 V2
	// markets, which the hosted API no longer listed and the frontend
	// does not, and Sonic's 0xaFd9) when that successor is listed on the
	// chain too. Its clients drop deprecated markets, so a superseded
	// market whose successor the chain does not list (the demo's 0x501B,
	// alone on its chain) stays live: marked, it would leave them no
	// market of the pair at all. The ticker rule is the same (a
	// deprecated market is found by its ticker when no live one is
	// listed).
	Deprecated bool   `json:"deprecated"`
	PairName   string `json:"pairName"`
	Ticker     string `json:"ticker"`
	Address    string `json:"address"`
	PrimePool  string `json:"primePool"`
	// TickSpacing is the prime pool's (stryke-fe's OptionMarket type reads
	// it at the top level; the recorded answer has it in pools only).
	TickSpacing int          `json:"tickSpacing"`
	Pools       []HostedPool `json:"pools"`
	CallToken   HostedToken  `json:"callToken"`
	PutToken    HostedToken  `json:"putToken"`
	Periphery
	// TotalLiquidity is the TVL of the market's ranges (reserved
	// included); AvailableLiquidity the part options may still use: TVL
	// less reserved liquidity, open interest and expired options' unsettled
	// collateral, never below 0; OpenInterest the unexpired options'
	// collateral.
	TotalLiquidity     json.Number `json:"totalLiquidity"`
	AvailableLiquidity json.Number `json:"availableLiquidity"`
	OpenInterest       json.Number `json:"openInterest"`
	// Premiums24h, Volume24h and ProtocolFees24h sum the 24 hours before
	// the indexed block's time.
	Premiums24h     json.Number `json:"premiums24h"`
	Volume24h       json.Number `json:"volume24h"`
	ProtocolFees24h json.Number `json:"protocolFees24h"`
	// IsLimitOrdersEnabled: the chain has a LimitOrders contract in the
	// deployments registry and the market is not deprecated (the
	// orders routes sign for that contract).
	IsLimitOrdersEnabled bool `json:"isLimitOrdersEnabled"`
}

// Periphery are a market's periphery contracts as the hosted API listed
// them; the zero address where the market does not answer the getter.
type Periphery struct {
	FeeStrategy     string `json:"feeStrategy"`
	TokenURIFetcher string `json:"tokenURIFetcher"`
	OptionsPricing  string `json:"optionsPricing"`
}

// HostedPool is one pool of the market with one handler that serves it:
// the hosted API listed a pool once per handler.
type HostedPool struct {
	Address     string `json:"address"`
	Fee         uint32 `json:"fee"`
	Handler     string `json:"handler"`
	Name        string `json:"name"`
	TickSpacing int    `json:"tickSpacing"`
}

// HostedToken is a token as the hosted API gave it: decimals a number.
type HostedToken struct {
	Address  string `json:"address"`
	Decimals int    `json:"decimals"`
	Symbol   string `json:"symbol"`
}

// hostedDay is the hosted API's window of its 24h sums, in seconds.
const hostedDay = 86400

// HostedMarkets answers one chain's markets in the hosted v1.1 shape: the
// option markets (markets.go), each with its statistics over the 24 hours
// before the indexed block (MarketStats, four markets at a time), all at
// the answer's block.
func (s *Market) HostedMarkets(ctx context.Context, chainID uint64) ([]HostedMarket, uint64, error) {
	up, err := s.chains.Of(chainID, true)
	if err != nil {
		return nil, 0, err
	}
	oms, err := s.OptionMarkets(ctx, chainID)
	if err != nil {
		return nil, 0, err
	}
	stats := make([]MarketStats, len(oms.Markets))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, om := range oms.Markets {
		g.Go(func() (err error) {
			stats[i], err = s.MarketStats(gctx, StatsRequest{ChainID: chainID, Market: common.HexToAddress(om.Address), From: oms.time - hostedDay, To: oms.time})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	addrs, per, err := peripheryOf(ctx, up, oms)
	if err != nil {
		return nil, 0, err
	}
	c := hostedChain{up: up, id: chainID, listed: map[common.Address]bool{}}
	for _, a := range addrs {
		c.listed[a] = true
	}
	out := make([]HostedMarket, len(oms.Markets))
	for i, om := range oms.Markets {
		out[i] = hostedMarket(c, om, stats[i], per[i])
	}
	return out, oms.Block, nil
}

// peripheryOf is the markets' addresses and their periphery, read in one
// round trip.
func peripheryOf(ctx context.Context, up *vocab.Upstreams, oms OptionMarkets) ([]common.Address, []chain.Periphery, error) {
	addrs := make([]common.Address, len(oms.Markets))
	for i, om := range oms.Markets {
		addrs[i] = common.HexToAddress(om.Address)
	}
	per, err := up.Chain.MarketsPeriphery(ctx, addrs)
	return addrs, per, err
}

// hostedChain is one chain as its hosted markets read it: its upstreams,
// its id and the markets its list holds.
type hostedChain struct {
	up     *vocab.Upstreams
	id     uint64
	listed map[common.Address]bool
}

// deprecated is HostedMarket.Deprecated of a market of the chain's list.
func (c hostedChain) deprecated(om OptionMarket) bool {
	next, superseded := c.up.Config.SupersededBy(common.HexToAddress(om.Address))
	return om.Version == "V1" || superseded && c.listed[next]
}

// hostedMarket is one market's hosted answer from its markets-list entry
// and its statistics.
func hostedMarket(c hostedChain, om OptionMarket, st MarketStats, per chain.Periphery) HostedMarket {
	up := c.up
	dec := atoi(om.PutAsset.Decimals)
	tvl, oi := st.TVL.inPut, st.OpenInterest.inPut
	free := new(big.Int).Sub(tvl, st.TVL.Reserved.inPut)
	free.Sub(free, oi).Sub(free, st.ExpiredUnsettled.inPut)
	if free.Sign() < 0 {
		free.SetInt64(0)
	}
	deprecated := c.deprecated(om)
	return HostedMarket{
		ChainID: c.id, Deprecated: deprecated,
		PairName: PairNameOf(om.CallAsset.Symbol, om.PutAsset.Symbol), Ticker: TickerOf(om.CallAsset.Symbol, om.PutAsset.Symbol),
		Address: om.Address, PrimePool: om.PrimePool.Address, TickSpacing: om.PrimePool.TickSpacing,
		Pools:     hostedPools(up, om),
		CallToken: hostedToken(om.CallAsset), PutToken: hostedToken(om.PutAsset),
		Periphery:            Periphery{FeeStrategy: per.FeeStrategy.Hex(), TokenURIFetcher: per.TokenURIFetcher.Hex(), OptionsPricing: per.OptionPricing.Hex()},
		TotalLiquidity:       number(tvl, dec),
		AvailableLiquidity:   number(free, dec),
		OpenInterest:         number(oi, dec),
		Premiums24h:          number(st.Totals.Premiums.inPut, dec),
		Volume24h:            number(st.Totals.Volume.inPut, dec),
		ProtocolFees24h:      number(st.Totals.ProtocolFees.inPut, dec),
		IsLimitOrdersEnabled: up.Config.LimitOrders != (common.Address{}) && !deprecated,
	}
}

// hostedPools lists each approved pool once per buyable handler of its
// DEX (config poolDex names a pool's DEX; a pool of no known DEX is
// listed with every buyable handler, as any of them may serve it).
func hostedPools(up *vocab.Upstreams, om OptionMarket) []HostedPool {
	out := []HostedPool{}
	for _, p := range om.Pools {
		dex := up.Config.PoolDex[common.HexToAddress(p.Address)]
		for _, h := range om.Handlers {
			if dex != "" && !strings.EqualFold(dex, h.Name) {
				continue
			}
			out = append(out, HostedPool{Address: p.Address, Fee: p.Fee, Handler: h.Address, Name: hostedDexName(h.Name), TickSpacing: p.TickSpacing})
		}
	}
	return out
}

// hostedDexName is a handler's DEX as the hosted API named it: the
// registry's "pancake" is its "pancakeswap"; other names are the same.
func hostedDexName(name string) string {
	if name == "pancake" {
		return "pancakeswap"
	}
	return name
}

func hostedToken(t vocab.Token) HostedToken {
	return HostedToken{Address: t.Address, Decimals: atoi(t.Decimals), Symbol: t.Symbol}
}

// atoi reads a decimals figure the service itself printed.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// number is raw / 10^decimals as a JSON number holding the exact decimal
// (0 for a nil amount).
func number(raw *big.Int, decimals int) json.Number {
	if raw == nil {
		return "0"
	}
	return json.Number(clamm.FormatUnits(raw, decimals))
}

// mulDecimal is the exact product of two decimal strings as the service
// prints them ("0" when either does not parse).
func mulDecimal(a, b string) string {
	x, xs, ok1 := scaled(a)
	y, ys, ok2 := scaled(b)
	if !ok1 || !ok2 {
		return "0"
	}
	return clamm.FormatUnits(x.Mul(x, y), xs+ys)
}

// scaled reads a decimal string as an integer and its number of places.
func scaled(s string) (*big.Int, int, bool) {
	places := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		places = len(s) - i - 1
		s = s[:i] + s[i+1:]
	}
	v, ok := new(big.Int).SetString(s, 10)
	return v, places, ok
}
