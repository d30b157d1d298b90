// Package protocoltest is a heavy test-only package: it deploys a Stryke
// CLAMM stand-in (option markets V2 and V1, position manager, single-tick
// handlers V2 and V1, SwapRouterSwapper, OneInchSwapper and a fake 1inch
// AggregationRouterV5, a 24h TTL hook, an AutoExerciseTimeBased delegate;
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
// Uniswap's artifacts come from npm: run `npm ci` in ../testdata first.
package protocoltest
