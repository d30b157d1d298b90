// Package orders is the use-case side of signed limit orders (stryke's
// LimitOrders contract): preparing the EIP-712 typed data a user signs,
// an order book that accepts a signed order only once the chain says it
// could be filled, reading the book with each order's status as the chain
// has it, and preparing cancels. Like the other sides it meets the rest
// of the service only through package vocab; its store is its own
// (Repository: SQLite by default, PostgreSQL for replicas sharing a book).
package orders

import (
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/service/vocab"
)

// Limits bound the book. Zero values take the defaults.
type Limits struct {
	// PerMaker is how many orders not yet closed one maker may keep on a
	// chain (default 100): a flood over it is refused, not stored.
	PerMaker int
	// Simulations bounds the fills one fillable answer simulates
	// (default 50): each is an eth_call of an exercise with its swaps.
	Simulations int
}

// Orders answers the order operations.
type Orders struct {
	chains vocab.Chains
	repo   Repository
	limits Limits
}

// New returns the side over the chains and the book's store.
func New(chains vocab.Chains, repo Repository, limits Limits) *Orders {
	if limits.PerMaker <= 0 {
		limits.PerMaker = 100
	}
	if limits.Simulations <= 0 {
		limits.Simulations = 50
	}
	return &Orders{chains: chains, repo: repo, limits: limits}
}

// contractOf is the chain's LimitOrders, or the client's mistake.
func (s *Orders) contractOf(chainID uint64) (*vocab.Upstreams, error) {
	up, err := s.chains.Of(chainID, false)
	if err != nil {
		return nil, err
	}
	if up.Config.LimitOrders == ([20]byte{}) {
		return nil, problem.InvalidParam("chainId", "chain %d has no LimitOrders contract in the deployments registry", chainID)
	}
	return up, nil
}
