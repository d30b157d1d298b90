// Package vocab is the vocabulary the use-case sides share and the only
// package through which they meet: the upstreams of a chain (Chain,
// Subgraph, Upstreams, Chains), the values every side's answers are made
// of (Token, Tx, BlockRef, Approval, Handler, HookRules, TokenAmount),
// the typed strikes the market side reads and the trade side consumes
// (StrikeRange, StrikeSet, StrikeReader), and the few readings of pricing
// answers both render. A side that needs another side's work asks for it
// here as an interface, and internal/service wires it.
package vocab
