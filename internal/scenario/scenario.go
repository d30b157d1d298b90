// Package scenario states a market's state once (tokens, market, pool price,
// handler ranges with their liquidity and daily donations) and derives from
// it the state of the fake upstreams (chaintest, subgraphtest). Fixtures and
// golden files are generated from scenarios, never written by hand, so they
// stay consistent with each other and can be regenerated after a change.
package scenario

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
	"github.com/clamm-gateway/clamm-gateway/subgraph/subgraphtest"
)

// Scenario is one market's state on one chain.
type Scenario struct {
	Description string                   `json:"description"`
	ChainID     uint64                   `json:"chainId"`
	Block       Block                    `json:"block"`
	Tokens      map[common.Address]Token `json:"tokens"`
	Market      Market                   `json:"market"`
	Pools       []Pool                   `json:"pools"`
	Strikes     []Strike                 `json:"strikes"`
}

// Block is the chain head the scenario describes.
type Block struct {
	Number    uint64 `json:"number"`
	Timestamp int64  `json:"timestamp"`
}

// Token is an ERC20.
type Token struct {
	Symbol   string `json:"symbol"`
	Decimals uint8  `json:"decimals"`
}

// Market is the option market.
type Market struct {
	Address   common.Address `json:"address"`
	Name      string         `json:"name"`
	CallAsset common.Address `json:"callAsset"`
	PutAsset  common.Address `json:"putAsset"`
	PrimePool common.Address `json:"primePool"`
}

// Pool is a pool; its sqrtPriceX96 is derived from tick plus an offset
// inside the tick, so the two can never disagree.
type Pool struct {
	Address         common.Address `json:"address"`
	Token0          common.Address `json:"token0"`
	Token1          common.Address `json:"token1"`
	Fee             uint32         `json:"fee"`
	TickSpacing     int            `json:"tickSpacing"`
	Tick            int            `json:"tick"`
	SqrtPriceOffset string         `json:"sqrtPriceOffset"`
}

// Strike is a handler range.
type Strike struct {
	Handler           common.Address `json:"handler"`
	Pool              common.Address `json:"pool"`
	Hook              common.Address `json:"hook"`
	TickLower         int            `json:"tickLower"`
	TickUpper         int            `json:"tickUpper"`
	TotalLiquidity    string         `json:"totalLiquidity"`
	UsedLiquidity     string         `json:"usedLiquidity"`
	DailyDonations    []Daily        `json:"dailyDonations,omitempty"`
	DailyFeeCompounds []Daily        `json:"dailyFeeCompounds,omitempty"`
}

// Daily is a day's donation or fee compound in liquidity units, at the
// pool's price (as a tick, converted to sqrtPriceX96 exactly).
type Daily struct {
	Liquidity string `json:"liquidity"`
	Tick      int    `json:"tick"`
	Start     int64  `json:"start"`
}

// ID is the subgraph id of the strike: handler-pool-hook-tickLower-tickUpper.
func (s Strike) ID() string {
	return strings.ToLower(fmt.Sprintf("%s-%s-%s-%d-%d", s.Handler.Hex(), s.Pool.Hex(), s.Hook.Hex(), s.TickLower, s.TickUpper))
}

// Parse decodes and checks a scenario.
func Parse(raw []byte) (*Scenario, error) {
	var s Scenario
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	for _, p := range s.Pools {
		if _, err := p.SqrtPriceX96(); err != nil {
			return nil, fmt.Errorf("pool %s: %w", p.Address.Hex(), err)
		}
	}
	for _, st := range s.Strikes {
		for _, v := range []string{st.TotalLiquidity, st.UsedLiquidity} {
			if _, ok := new(big.Int).SetString(v, 10); !ok {
				return nil, fmt.Errorf("strike %s: bad liquidity %q", st.ID(), v)
			}
		}
	}
	return &s, nil
}

// SqrtPriceX96 is SqrtRatioAtTick(tick) + offset; the offset must keep the
// price below the next tick so slot0's tick stays consistent.
func (p Pool) SqrtPriceX96() (*big.Int, error) {
	lo, err := clamm.SqrtRatioAtTick(p.Tick)
	if err != nil {
		return nil, err
	}
	hi, err := clamm.SqrtRatioAtTick(p.Tick + 1)
	if err != nil {
		return nil, err
	}
	off, ok := new(big.Int).SetString(p.SqrtPriceOffset, 10)
	if !ok {
		off = new(big.Int)
	}
	v := new(big.Int).Add(lo, off)
	if off.Sign() < 0 || v.Cmp(hi) >= 0 {
		return nil, fmt.Errorf("sqrtPriceOffset %s leaves tick %d", p.SqrtPriceOffset, p.Tick)
	}
	return v, nil
}

func sqrtAt(tick int) string {
	v, err := clamm.SqrtRatioAtTick(tick)
	if err != nil {
		panic(err)
	}
	return v.String()
}

// Populate loads the scenario into the fakes.
func (s *Scenario) Populate(node *chaintest.Node, sg *subgraphtest.Server) {
	node.Lock()
	for a, t := range s.Tokens {
		node.Tokens[a] = &chaintest.Token{Decimals: t.Decimals, Symbol: t.Symbol}
	}
	node.Markets[s.Market.Address] = &chaintest.Market{Name: s.Market.Name, CallAsset: s.Market.CallAsset, PutAsset: s.Market.PutAsset, PrimePool: s.Market.PrimePool}
	for _, p := range s.Pools {
		sqrt, _ := p.SqrtPriceX96()
		node.Pools[p.Address] = &chaintest.Pool{Token0: p.Token0, Token1: p.Token1, Fee: p.Fee, TickSpacing: p.TickSpacing, SqrtPriceX96: sqrt, Tick: p.Tick}
	}
	node.Unlock()

	sg.Lock()
	defer sg.Unlock()
	if s.Block.Number > sg.Block {
		sg.Block, sg.Timestamp = s.Block.Number, s.Block.Timestamp
	}
	for _, st := range s.Strikes {
		e := subgraphtest.Strike{
			ID: st.ID(), Handler: lower(st.Handler), Pool: lower(st.Pool), Hook: lower(st.Hook),
			TickLower: st.TickLower, TickUpper: st.TickUpper,
			TotalLiquidity: st.TotalLiquidity, UsedLiquidity: st.UsedLiquidity,
		}
		for _, d := range st.DailyDonations {
			e.DailyDonations = append(e.DailyDonations, subgraphtest.DailyDonation{Donation: d.Liquidity, SqrtPriceX96: sqrtAt(d.Tick), Start: d.Start})
		}
		for _, d := range st.DailyFeeCompounds {
			e.DailyFeeCompounds = append(e.DailyFeeCompounds, subgraphtest.DailyCompound{Compound: d.Liquidity, SqrtPriceX96: sqrtAt(d.Tick), Start: d.Start})
		}
		sg.Strikes = append(sg.Strikes, e)
	}
}

func lower(a common.Address) string { return strings.ToLower(a.Hex()) }
