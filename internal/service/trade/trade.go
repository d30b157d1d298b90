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
	checked SwapperChecks
	addOns  *addOnLog
}

// SwapperChecks says which configured swappers failed the start-up check
// (package service's CheckContracts): no code, or not the configured kind.
type SwapperChecks interface {
	// SwapperProblem is why chainID's configured swapper id failed; false
	// when it passed or has not been checked (yet).
	SwapperProblem(chainID uint64, id string) (string, bool)
}

// New returns the side over the given chains; checked (nil: none) names
// the configured swappers the exercise prepare's auto and direct leave out.
func New(chains vocab.Chains, strikes vocab.StrikeReader, checked SwapperChecks) *Trade {
	return &Trade{chains: chains, strikes: strikes, checked: checked, addOns: &addOnLog{}}
}
