// Package evmtest holds the gateway's heavy integration tests: real Uniswap
// V3 contracts (factory, pool, NonfungiblePositionManager, QuoterV2,
// SwapRouter) from the compiled artifacts of the npm packages
// @uniswap/v3-core and @uniswap/v3-periphery, with OpenZeppelin ERC20s,
// deployed on go-ethereum's in-process simulated EVM by the test protocol
// (protocoltest), whose markets, position manager and V1/V2 handlers the
// gateway's own ChainedRead (internal/contracts/sol) reads for the market
// and strikes chain's reads. They live apart from the other packages
// because the simulated backend takes minutes to build.
//
// The artifacts come from npm: run `npm ci` in testdata/ first (.ci/run
// does). Without them the tests skip, naming what to run (package prereq);
// CI sets CLAMM_TEST_REQUIRE_ALL, so there a missing artifact fails.
package evmtest
