// Package market holds the use cases of market data and statistics: the
// option markets, the strikes chain and its typed core (which the trade
// side reads through vocab.StrikeReader), the options chain, mark prices,
// candles, market and chain statistics and the leaderboard. It imports the
// other sides only through package vocab, so Go's import rules keep the
// sides from leaning on each other.
package market

import (
	"github.com/clamm-gateway/clamm-gateway/internal/cache"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// Market answers the operations of market data and statistics, one method
// each. Which block an answer is read at is not its concern: the gateway
// runs each call under the pin its endpoint states (package block).
type Market struct {
	chains vocab.Chains
	// closedCandles are candle windows closed for good (stats_candles.go).
	closedCandles *cache.Cache[Candles]
}

// New returns the side over the given chains.
func New(chains vocab.Chains) *Market {
	return &Market{chains: chains, closedCandles: newClosedCandles()}
}
