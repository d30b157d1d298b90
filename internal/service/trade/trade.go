// Package trade holds the use cases of buying and exercising options: the
// purchase quote, prepare, history and positions; the exercise prepare,
// history and delegate; options near expiry and settlements. It reads the
// market's typed strikes through vocab.StrikeReader (filled by package
// market) and imports no other side.
package trade

import "github.com/clamm-gateway/clamm-gateway/internal/service/vocab"

// Trade answers the operations of buying and exercising, one method each.
// Which block an answer is read at is not its concern: the gateway runs
// each call under the pin its endpoint states (package block).
type Trade struct {
	chains  vocab.Chains
	strikes vocab.StrikeReader
	addOns  *addOnLog
}

// New returns the side over the given chains.
func New(chains vocab.Chains, strikes vocab.StrikeReader) *Trade {
	return &Trade{chains: chains, strikes: strikes, addOns: &addOnLog{}}
}
