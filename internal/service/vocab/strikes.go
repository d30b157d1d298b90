package vocab

import (
	"context"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// strikesAsk is what the typed strikes core reads: the strikes chain's
// windows (a reach each side), or the one strike a quote names (at).
type StrikesAsk struct {
	Market                common.Address
	CallsReach, PutsReach int
	// at, when set, asks for the ranges struck at one price on one side
	// only, wherever they lie: a quote reads no other strike.
	At *StrikeAt
	// keepHooked keeps the ranges whose hook refuses the market now: a
	// purchase quote asks each hook itself, with the buyer's ttl, and says
	// which hook refuses and why instead of finding no liquidity.
	KeepHooked bool
}

// strikeAt names a strike by its price (the strikes chain's key, put-asset
// units per call asset) and side.
type StrikeAt struct {
	IsCall bool
	Price  float64
}

// strike is one range the market can buy, seen as a strike: the typed
// core the strikes chain renders and the quote and options chain consume.
type StrikeRange struct {
	IsCall bool
	// tick is the strike tick: a call's upper tick, a put's lower tick
	// (the tick the market prices the strike at); price is the market's
	// price of it in whole put assets per call asset, the chain's key.
	Tick                 int
	Price                float64
	Handler, Pool, Hook  common.Address
	HandlerInfo          config.Handler
	TickLower, TickUpper int
	// token is the asset the range holds (token0 when heldIs0).
	Token   chain.Token
	HeldIs0 bool
	// liquidity and free are the range's total and free Uniswap liquidity
	// (free floored at 0); amount and freeAmount the same in token.
	Liquidity, Free    *big.Int
	Amount, FreeAmount *big.Int
	// daily are the range's premium donations and fee compounds (its APR).
	Donations []subgraph.DailyRecord
	Compounds []subgraph.DailyCompound
}

// strikeSet is the typed strikes of one ask, in the strikes chain's order,
// with the subgraph block they reflect and the market's view.
type StrikeSet struct {
	Strikes []StrikeRange
	Meta    subgraph.Meta
	View    *chain.StrikesView
}

// StrikeReader reads the typed strikes an ask names (the market data
// side's strikes core): the purchase quote reads the strikes it fills
// from through it, never through the strikes chain's JSON.
type StrikeReader interface {
	StrikesOf(ctx context.Context, up *Upstreams, ask StrikesAsk) (*StrikeSet, error)
}
