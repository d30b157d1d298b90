// Package liquidity holds the use cases of providing liquidity: the deposit
// and withdraw prepares, their histories and the deposit positions. It
// imports the other sides only through package vocab.
package liquidity

import "github.com/clamm-gateway/clamm-gateway/internal/service/vocab"

// Liquidity answers the operations of providing liquidity, one method
// each. Which block an answer is read at is not its concern: the gateway
// runs each call under the pin its endpoint states (package block).
type Liquidity struct {
	chains vocab.Chains
}

// New returns the side over the given chains.
func New(chains vocab.Chains) *Liquidity {
	return &Liquidity{chains: chains}
}
