// Market statistics beyond the daily sums market.ts keeps: call-asset
// amounts valued in the put asset at the prime pool's price of the event,
// exercise profits, and each day's distinct buyers. Kept apart from the
// option bookkeeping so the two change independently.
import { BigInt, Bytes } from '@graphprotocol/graph-ts';
import { Market, MarketDayBuyer, MarketDayData } from '../generated/schema';
import { ZERO, hex } from './common';

// 2^192, built by multiplication (bigInt.times is a host function every
// Graph Node provides; pow is not needed for one constant).
function q192(): BigInt {
  const q32 = BigInt.fromU64(4294967296);
  const q64 = q32.times(q32);
  return q64.times(q64).times(q64);
}

// amount of the market's call asset in put-asset units at sqrtPriceX96 (the
// prime pool's, token1 per token0): times the price when the call asset is
// token0 (the lower address), divided by it otherwise; floored once, 0 at a
// zero price.
export function callInPut(m: Market, amount: BigInt, sqrtPriceX96: BigInt): BigInt {
  if (sqrtPriceX96.isZero() || amount.isZero()) return ZERO;
  const p2 = sqrtPriceX96.times(sqrtPriceX96);
  if (hex(m.callAsset) < hex(m.putAsset)) return amount.times(p2).div(q192());
  return amount.times(q192()).div(p2);
}

// New fields of a day created by market.ts's day().
export function initDayStats(d: MarketDayData): void {
  d.callProfit = ZERO;
  d.putProfit = ZERO;
  d.callVolumeInPut = ZERO;
  d.callPremiumInPut = ZERO;
  d.callProtocolFeesInPut = ZERO;
  d.putProfitInPut = ZERO;
  d.buyers = 0;
}

// A call purchase's amounts valued in the put asset, added to its day.
export function addCallPurchase(d: MarketDayData, m: Market, sqrtPriceX96: BigInt, premium: BigInt, withdrawn: BigInt, fees: BigInt): void {
  d.callVolumeInPut = d.callVolumeInPut.plus(callInPut(m, withdrawn, sqrtPriceX96));
  d.callPremiumInPut = d.callPremiumInPut.plus(callInPut(m, premium, sqrtPriceX96));
  d.callProtocolFeesInPut = d.callProtocolFeesInPut.plus(callInPut(m, fees, sqrtPriceX96));
}

// The buyer's record of the day, created at its first purchase that day,
// which also counts it in the day's distinct buyers.
export function countBuyer(d: MarketDayData, buyer: Bytes): void {
  const id = d.market + '-' + d.start.toString() + '-' + hex(buyer);
  if (MarketDayBuyer.load(id) != null) return;
  const b = new MarketDayBuyer(id);
  b.market = d.market;
  b.start = d.start;
  b.buyer = buyer;
  b.save();
  d.buyers += 1;
}

// An exercise's profit added to its day: a call's is paid in the put
// asset, a put's in the call asset (also valued in the put asset).
export function addExercise(d: MarketDayData, m: Market | null, isCall: boolean, profit: BigInt, sqrtPriceX96: BigInt): void {
  if (isCall) {
    d.callProfit = d.callProfit.plus(profit);
    return;
  }
  d.putProfit = d.putProfit.plus(profit);
  if (m != null) d.putProfitInPut = d.putProfitInPut.plus(callInPut(m, profit, sqrtPriceX96));
}
