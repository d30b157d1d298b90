// Package scenario states a market's state once (tokens, market, pool price,
// handler ranges with their liquidity and daily donations, options with
// their purchases and exercises) and derives from it the state of the fake
// upstreams: the chain (chaintest) holds the head state, and the subgraph's
// entities (the Graph Node emulator's store, graphnodetest) are what the
// subgraph's compiled mappings write when they index the logs the real
// contracts emit for the scenario's history (history.go, index.go): no
// entity is written here. Fixtures and golden files are generated from
// scenarios, never written by hand, so they stay consistent with each other
// and can be regenerated after a change.
package scenario

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/clamm"
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
	// Handlers states handlers' generation, pause and whitelisting; a
	// handler not listed is a V2 handler, not paused, whitelisted.
	Handlers map[common.Address]HandlerState `json:"handlers,omitempty"`
	// Hooks states the hooks deployed on the chain (bounded-TTL hooks);
	// a hook not listed has no code.
	Hooks     map[common.Address]HookState `json:"hooks,omitempty"`
	Options   []Option                     `json:"options,omitempty"`
	Exercises []Exercise                   `json:"exercises,omitempty"`
	// AutoExerciser, Delegates and Settlements state the chain's
	// auto-exerciser, owners' exercise delegates and the settlements of
	// expired options (expiry.go).
	AutoExerciser *AutoExerciserState `json:"autoExerciser,omitempty"`
	Delegates     []DelegateUpdate    `json:"delegates,omitempty"`
	Settlements   []Settlement        `json:"settlements,omitempty"`
	// Balances state what accounts hold of the scenario's tokens at its
	// head (an account not listed holds none), each with why: what a
	// prepare's simulation spends (chaintest's spend.go).
	Balances []Balance `json:"balances,omitempty"`
}

// Balance is a holder's balance of one of the scenario's tokens, in base
// units, and why the scenario gives it.
type Balance struct {
	Holder common.Address `json:"holder"`
	Token  common.Address `json:"token"`
	Amount string         `json:"amount"`
	Why    string         `json:"why"`
}

// Option is a minted option (an ERC721 of the market).
type Option struct {
	TokenID       uint64         `json:"tokenId"`
	Owner         common.Address `json:"owner"`
	IsCall        bool           `json:"isCall"`
	Expiry        int64          `json:"expiry"`
	Premium       string         `json:"premium"`
	MintTimestamp int64          `json:"mintTimestamp"`
	MintTxHash    common.Hash    `json:"mintTxHash"`
	Legs          []Leg          `json:"legs"`
	// Minter bought the option (LogMintOption.user); empty means Owner. An
	// option whose Owner differs was transferred after the purchase.
	Minter common.Address `json:"minter,omitempty"`
	// ProtocolFees is LogMintOption.protocolFees, raw units of the
	// collateral; empty means 0.
	ProtocolFees string `json:"protocolFees,omitempty"`
}

// Leg is one opTickMap entry of an option.
type Leg struct {
	Handler   common.Address `json:"handler"`
	Pool      common.Address `json:"pool"`
	Hook      common.Address `json:"hook"`
	TickLower int            `json:"tickLower"`
	TickUpper int            `json:"tickUpper"`
	Liquidity string         `json:"liquidity"`
}

// Exercise is a full exercise of an option at the prime pool's price
// SqrtRatioAtTick(tick). Its profit and size are derived, not stated: each
// leg's collateral is swapped at that price with no fee (clamm.SwapAtPrice)
// and the LPs' amountReq is subtracted.
type Exercise struct {
	TokenID     uint64      `json:"tokenId"`
	Tick        int         `json:"tick"`
	BlockNumber uint64      `json:"blockNumber"`
	Timestamp   int64       `json:"timestamp"`
	TxHash      common.Hash `json:"txHash"`
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
	// Version is 1 for a DopexV2OptionMarket (V1), else 2.
	Version int `json:"version,omitempty"`
	// PositionManager defaults to DefaultPositionManager.
	PositionManager common.Address `json:"positionManager,omitempty"`
	// OtherPools are pools besides the prime pool the market approved
	// (updateAddress): approvedPools answers true for them and the prime
	// pool, and the history approves each after the constructor.
	OtherPools []common.Address `json:"otherPools,omitempty"`
	// Pricing is the market's optionPricing() contract and fee strategy
	// (chaintest.Pricing's model); none: the market prices nothing.
	Pricing *chaintest.Pricing `json:"pricing,omitempty"`
}

// approvedPools are the pools the market approved: its prime pool and its
// OtherPools.
func (m Market) approvedPools() []common.Address {
	return append([]common.Address{m.PrimePool}, m.OtherPools...)
}

// DefaultPositionManager is DopexV2PositionManager on Arbitrum and Mantle
// (stryke-xyz/clamm broadcast/DeployPositionManager.s.sol).
var DefaultPositionManager = common.HexToAddress("0xE4bA6740aF4c666325D49B3112E4758371386aDc")

// HandlerState is a handler's state as the strikes chain reads it.
type HandlerState struct {
	// Version 1 is UniswapV3SingleTickLiquidityHandler (no hooks), else 2.
	Version int  `json:"version,omitempty"`
	Paused  bool `json:"paused,omitempty"`
	// NotWhitelisted: the position manager has not whitelisted the handler
	// for this market.
	NotWhitelisted bool `json:"notWhitelisted,omitempty"`
}

// HookState is a bounded-TTL hook (BoundedTTLHook_0Day/_1Week).
type HookState struct {
	// MaxTTL is the longest option ttl in seconds it admits.
	MaxTTL uint64 `json:"maxTtl"`
	// NotWhitelisted: the hook's owner has not whitelisted the market.
	NotWhitelisted bool `json:"notWhitelisted,omitempty"`
}

// pm is the market's position manager.
func (m Market) pm() common.Address {
	if m.PositionManager == (common.Address{}) {
		return DefaultPositionManager
	}
	return m.PositionManager
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
	for _, b := range s.Balances {
		if v, ok := new(big.Int).SetString(b.Amount, 10); !ok || v.Sign() < 0 || v.BitLen() > 256 {
			return nil, fmt.Errorf("balance of %s: bad amount %q", b.Holder.Hex(), b.Amount)
		}
		if _, ok := s.Tokens[b.Token]; !ok || b.Why == "" {
			return nil, fmt.Errorf("balance of %s: token %s is not the scenario's, or no why is given", b.Holder.Hex(), b.Token.Hex())
		}
	}
	for _, e := range s.Exercises {
		if _, err := s.exerciseAmounts(e); err != nil {
			return nil, err
		}
	}
	for _, st := range s.Settlements {
		if _, _, err := s.settlementAmounts(st); err != nil {
			return nil, err
		}
		for _, e := range s.Exercises {
			if e.TokenID == st.TokenID {
				return nil, fmt.Errorf("option %d is both exercised in full and settled", st.TokenID)
			}
		}
	}
	return &s, nil
}

// option returns the option with that token id.
func (s *Scenario) option(id uint64) (Option, bool) {
	for _, o := range s.Options {
		if o.TokenID == id {
			return o, true
		}
	}
	return Option{}, false
}

// primePool returns the market's prime pool.
func (s *Scenario) primePool() (Pool, bool) {
	for _, p := range s.Pools {
		if p.Address == s.Market.PrimePool {
			return p, true
		}
	}
	return Pool{}, false
}

// Range is the option's overall [tickLower, tickUpper]: opData's ticks.
func (o Option) Range() (int, int) {
	lo, hi := o.Legs[0].TickLower, o.Legs[0].TickUpper
	for _, l := range o.Legs[1:] {
		lo, hi = min(lo, l.TickLower), max(hi, l.TickUpper)
	}
	return lo, hi
}

type exerciseAmounts struct {
	size, profit, sqrtPriceX96 *big.Int
}

func (s *Scenario) exerciseAmounts(e Exercise) (exerciseAmounts, error) {
	o, ok := s.option(e.TokenID)
	if !ok || len(o.Legs) == 0 {
		return exerciseAmounts{}, fmt.Errorf("exercise of unknown option %d", e.TokenID)
	}
	pool, ok := s.primePool()
	if !ok {
		return exerciseAmounts{}, fmt.Errorf("no prime pool")
	}
	collateral := s.Market.PutAsset
	if o.IsCall {
		collateral = s.Market.CallAsset
	}
	collateralIs0 := collateral == pool.Token0
	sqrtP, err := clamm.SqrtRatioAtTick(e.Tick)
	if err != nil {
		return exerciseAmounts{}, err
	}
	out := exerciseAmounts{size: new(big.Int), profit: new(big.Int), sqrtPriceX96: sqrtP}
	for _, l := range o.Legs {
		liq, ok := new(big.Int).SetString(l.Liquidity, 10)
		if !ok {
			return exerciseAmounts{}, fmt.Errorf("option %d: bad liquidity %q", o.TokenID, l.Liquidity)
		}
		leg, err := clamm.ExerciseLeg(l.TickLower, l.TickUpper, liq, collateralIs0)
		if err != nil {
			return exerciseAmounts{}, err
		}
		got := clamm.SwapAtPrice(leg.AmountToSwap, sqrtP, collateralIs0)
		out.size.Add(out.size, leg.AmountToSwap)
		out.profit.Add(out.profit, got.Sub(got, leg.AmountReq))
	}
	if out.profit.Sign() <= 0 {
		return exerciseAmounts{}, fmt.Errorf("option %d exercised at tick %d out of the money", o.TokenID, e.Tick)
	}
	return out, nil
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

// Populate loads the scenario's state at its head into the fake node; the
// subgraph's entities are indexed from its history (Index).
func (s *Scenario) Populate(node *chaintest.Node) {
	node.Lock()
	// The node names blocks as the scenario's indexed subgraph does, so
	// both halves of an answer name one block alike.
	chainID := s.ChainID
	node.Hashes = func(n uint64) common.Hash { return blockHash(chainID, n) }
	for a, t := range s.Tokens {
		if node.Tokens[a] == nil { // another scenario of the chain may have stated balances
			node.Tokens[a] = &chaintest.Token{Decimals: t.Decimals, Symbol: t.Symbol}
		}
	}
	for _, b := range s.Balances {
		amount, _ := new(big.Int).SetString(b.Amount, 10)
		node.Tokens[b.Token].SetBalance(b.Holder, amount)
	}
	version := s.Market.Version
	if version == 0 {
		version = 2
	}
	market := &chaintest.Market{Name: s.Market.Name, CallAsset: s.Market.CallAsset, PutAsset: s.Market.PutAsset, PrimePool: s.Market.PrimePool,
		PositionManager: s.Market.pm(), Version: version, Options: map[uint64]*chaintest.Option{}, Pricing: s.Market.Pricing,
		ApprovedPools: s.Market.approvedPools()}
	s.populateHandlers(node)
	for a, st := range s.Hooks {
		h := node.Hooks[a]
		if h == nil {
			h = &chaintest.Hook{Owner: common.HexToAddress("0x000000000000000000000000000000000000000a"), MaxTTL: st.MaxTTL}
			node.Hooks[a] = h
		}
		if !st.NotWhitelisted {
			h.Allow(s.Market.Address)
		}
	}
	for _, o := range s.Options {
		lo, hi := o.Range()
		opt := &chaintest.Option{Owner: o.Owner, IsCall: o.IsCall, TickLower: lo, TickUpper: hi, Expiry: uint64(o.Expiry)}
		for _, l := range o.Legs {
			liq, _ := new(big.Int).SetString(l.Liquidity, 10)
			if s.closed(o.TokenID) {
				liq = new(big.Int) // a full exercise or a settlement leaves no liquidity to use
			}
			opt.Legs = append(opt.Legs, chaintest.Leg{Handler: l.Handler, Pool: l.Pool, Hook: l.Hook, TickLower: l.TickLower, TickUpper: l.TickUpper, Liquidity: liq})
		}
		market.Options[o.TokenID] = opt
	}
	for _, d := range s.Delegates { // in time order: the last status stays
		market.Delegate(d.Owner, d.Delegate, d.Status)
	}
	node.Markets[s.Market.Address] = market
	if uint64(s.Block.Timestamp) > node.BlockTimestamp {
		node.BlockTimestamp, node.BlockNumber = uint64(s.Block.Timestamp), s.Block.Number
		if _, ok := blockRates[s.ChainID]; ok {
			// Past blocks' headers on the history's clock, which dates
			// its events (blockAt): at one second per block back from the
			// head, a block a day back by the history was dated four days
			// back, before events its answers count.
			node.TimeOf = func(n uint64) uint64 { return uint64(max(s.timeAt(n), 0)) }
		}
	}
	for _, p := range s.Pools {
		sqrt, _ := p.SqrtPriceX96()
		node.Pools[p.Address] = &chaintest.Pool{Token0: p.Token0, Token1: p.Token1, Fee: p.Fee, TickSpacing: p.TickSpacing, SqrtPriceX96: sqrt, Tick: p.Tick}
	}
	node.Unlock()
}

// populateHandlers deploys the market's position manager and every handler
// the scenario names, whitelisted for the market unless stated otherwise.
func (s *Scenario) populateHandlers(node *chaintest.Node) {
	pm := node.PositionManagers[s.Market.pm()]
	if pm == nil {
		pm = &chaintest.PositionManager{}
		node.PositionManagers[s.Market.pm()] = pm
	}
	named := map[common.Address]bool{}
	for h := range s.Handlers {
		named[h] = true
	}
	for _, st := range s.Strikes {
		named[st.Handler] = true
	}
	for _, o := range s.Options {
		for _, l := range o.Legs {
			named[l.Handler] = true
		}
	}
	for h := range named {
		st := s.Handlers[h]
		version := st.Version
		if version == 0 {
			version = 2
		}
		node.Handlers[h] = &chaintest.Handler{Version: version, Paused: st.Paused}
		if !st.NotWhitelisted {
			pm.Allow(h, s.Market.Address)
		}
	}
}

func lower(a common.Address) string { return strings.ToLower(a.Hex()) }
