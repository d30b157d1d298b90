// A pool's candles: one Candle per interval length and interval with a
// swap, updated by every Swap event of the pool in log order, so open is the
// price after the interval's first swap and close after its last. Kept apart
// from pool.ts, which follows the latest price only.
import { BigInt, Bytes } from '@graphprotocol/graph-ts';
import { Candle } from '../generated/schema';
import { hex } from './common';

// The interval lengths served, in seconds: 1m, 5m, 15m, 1h, 4h, 1d.
const INTERVALS: i32[] = [60, 300, 900, 3600, 14400, 86400];

// The start as 10 digits, zero-padded, so candle ids sort by time.
function pad10(v: i32): string {
  let s = v.toString();
  while (s.length < 10) s = '0' + s;
  return s;
}

function abs(v: BigInt): BigInt {
  return v.lt(BigInt.zero()) ? v.neg() : v;
}

// One swap added to the candles of its block time.
export function recordCandles(pool: Bytes, timestamp: BigInt, sqrtPriceX96: BigInt, tick: i32, amount0: BigInt, amount1: BigInt): void {
  const t = timestamp.toI32();
  for (let i = 0; i < INTERVALS.length; i++) {
    const len = INTERVALS[i];
    const start = t - (t % len);
    const id = hex(pool) + '-' + len.toString() + '-' + pad10(start);
    let c = Candle.load(id);
    if (c == null) {
      c = new Candle(id);
      c.pool = pool;
      c.interval = len;
      c.start = start;
      c.open = sqrtPriceX96;
      c.high = sqrtPriceX96;
      c.low = sqrtPriceX96;
      c.volume0 = BigInt.zero();
      c.volume1 = BigInt.zero();
      c.swaps = 0;
    }
    if (sqrtPriceX96.gt(c.high)) c.high = sqrtPriceX96;
    if (sqrtPriceX96.lt(c.low)) c.low = sqrtPriceX96;
    c.close = sqrtPriceX96;
    c.closeTick = tick;
    c.volume0 = c.volume0.plus(abs(amount0));
    c.volume1 = c.volume1.plus(abs(amount1));
    c.swaps += 1;
    c.save();
  }
}
