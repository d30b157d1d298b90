// A pool's price, followed from its Swap events (Uniswap V3 form and the
// PancakeSwap V3 form with two trailing protocol-fee fields), and its
// candles (candles.ts).
import { BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { Pool } from '../generated/schema';
import { Swap, Swap1 } from '../generated/templates/Pool/Pool';
import { recordCandles } from './candles';
import { hex } from './common';

function record(address: Bytes, sqrtPriceX96: BigInt, tick: i32, amount0: BigInt, amount1: BigInt, block: ethereum.Block): void {
  const pool = Pool.load(hex(address));
  if (pool == null) return; // the template is created with its entity
  pool.sqrtPriceX96 = sqrtPriceX96;
  pool.tick = tick;
  pool.lastSwapBlock = block.number;
  pool.save();
  recordCandles(address, block.timestamp, sqrtPriceX96, tick, amount0, amount1);
}

export function handleSwap(event: Swap): void {
  const p = event.params;
  record(event.address, p.sqrtPriceX96, p.tick, p.amount0, p.amount1, event.block);
}

export function handleSwapWithProtocolFees(event: Swap1): void {
  const p = event.params;
  record(event.address, p.sqrtPriceX96, p.tick, p.amount0, p.amount1, event.block);
}
