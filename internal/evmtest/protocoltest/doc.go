// Package protocoltest is a heavy test-only package: it deploys a Stryke
// CLAMM stand-in (option market V2, position manager, single-tick handler
// V2, swappers, a fake 1inch router, a 24h TTL hook, an auto-exercise
// delegate; Solidity in sol/, compiled by ../testdata/compile.mjs) next to
// the real Uniswap V3 contracts from npm (factory, pools, position manager,
// SwapRouter, QuoterV2) on go-ethereum's simulated EVM, and drives them.
//
// The stand-ins have the real contracts' ABIs, events and errors and follow
// their order of operations where money is decided (see each .sol file),
// and they hold liquidity in real Uniswap pools, so swaps, re-mints and
// fees move real prices. Only tests import this package: it links the
// simulated backend, which takes minutes to build.
//
// Uniswap's artifacts come from npm: run `npm ci` in ../testdata first.
package protocoltest
