// Package preparetest checks prepare-exercise against contracts that
// execute the exercise as the real market does (protocoltest: option market
// V2, position manager, single-tick handler V2, SwapRouterSwapper,
// OneInchSwapper, a fake AggregationRouterV5 enforcing its minReturn) next
// to real Uniswap V3 pools on the simulated EVM, so price impact, the
// legs' order and the re-mint rule are the EVM's, not the gateway's.
// Heavy (links the simulated backend): tests only, in a package of its own.
package preparetest
