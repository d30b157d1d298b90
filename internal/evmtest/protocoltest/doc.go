// Package protocoltest is a heavy test-only package: it deploys a Stryke
// CLAMM stand-in (option markets V2 and V1, position manager, single-tick
// handlers V2 and V1, SwapRouterSwapper, OneInchSwapper and a fake 1inch
// AggregationRouterV5, a 24h TTL hook, an AutoExerciseTimeBased delegate
// whose executor role the deployer takes on first use, and on demand an OpenSettlement
// settler (DeployOpenSettlement, OpenSettle);
// Solidity in sol/, compiled by ../testdata/compile.mjs, CI diffs the
// artifacts) next to the real Uniswap V3 contracts from npm (factory,
// pools, NonfungiblePositionManager, SwapRouter, QuoterV2) on
// go-ethereum's simulated EVM, and drives them.
//
// The stand-ins are written from reading stryke-xyz/clamm, not copied. They
// have the real contracts' ABIs, events and custom errors and follow their
// order of operations where money is decided (each .sol file says how and
// where it differs), and they hold liquidity in real Uniswap pools, so
// swaps, re-mints and fees move real prices. Only tests import this
// package: it links the simulated backend, which takes minutes to build.
//
// Using it:
//
//	p := protocoltest.Deploy(t, protocoltest.Config{})        // WETH/USDC at ~3000, fee 500
//	_, tick := p.Slot0(p.Pool)
//	r := protocoltest.Range{TickLower: tick + 100, TickUpper: tick + 110} // Hook, Handler, Pool optional
//	_, shares, err := p.Deposit(p.Users[0], r, liquidity)     // LP through the position manager
//	id, rc, err := p.Buy(p.Users[1], protocoltest.Option{IsCall: true,
//		TickLower: r.TickLower, TickUpper: r.TickUpper, TTL: 3600,
//		Legs: []protocoltest.Leg{{Range: r, Liquidity: shares}}})
//	p.SwapToTick(p.Users[2], 500, tick+300)                    // move the price
//	rc, err = p.Exercise(p.Users[1], id, []protocoltest.ExerciseLeg{
//		{Swapper: p.Swapper, SwapData: protocoltest.UniV3SwapData(500, minOut), Liquidity: shares}})
//	p.Events(rc)                                               // decoded logs; p.Find(rc, "LogExerciseOption")
//
// Sends simulate first and return a *RevertError naming the custom error
// (IsRevert(err, "NotEnoughAfterSwap")). Chain.Block batches transactions
// into one block. p.Chain.RPC() is the node's JSON-RPC client for the
// gateway's readers; p.Quoter is QuoterV2, p.Router the SwapRouter.
//
// Pricing: the V2 market's premium is 1% of spot per call asset until
//
//	pr := p.DeployPricing(protocoltest.PricingConfig{IVs: map[uint64]uint64{3600: 50}, FeePercentage: 340000})
//
// points it at TestOptionPricing (IV table per ttl, skew, xSYK discount by
// tx.origin: p.SetIVs, p.SetSkew, p.SetDiscounts, p.MintXSyk) and
// TestFeeStrategy, fees to pr.FeeTo; pr.WeekendHook refuses weekend
// purchases. p.DeployPricingLinearV2 does the same with
// TestOptionPricingLinearV2 (OptionPricingLinearV2's three-argument
// getVolatility). The simulated chain has no Multicall3: p.DeployMulticall3()
// deploys one for chain.Options.Multicall3.
//
// Uniswap's artifacts come from npm: run `npm ci` in ../testdata first.
package protocoltest
