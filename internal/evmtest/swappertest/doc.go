// Package swappertest checks the exercise prepare's swappers end to end on
// the simulated EVM (the test protocol of internal/evmtest/protocoltest
// next to real Uniswap V3 and its QuoterV2): swappers learned from the
// chain's own exercises through the subgraph's compiled mappings, and the
// per-DEX quoter registry with its simulation fallback, each prepared
// transaction sent as built and paying what the answer said.
// Heavy (links the simulated backend): tests only, in a package of its own.
package swappertest
