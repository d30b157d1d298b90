// A pool's price, followed from its Swap events (Uniswap V3 form and the
// PancakeSwap V3 form with two trailing protocol-fee fields).
import { BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { Pool } from '../generated/schema';
import { Swap, Swap1 } from '../generated/templates/Pool/Pool';
import { hex } from './common';

function record(address: Bytes, sqrtPriceX96: BigInt, tick: i32, block: ethereum.Block): void {
  const pool = Pool.load(hex(address));
  if (pool == null) return; // the template is created with its entity
  pool.sqrtPriceX96 = sqrtPriceX96;
  pool.tick = tick;
  pool.lastSwapBlock = block.number;
  pool.save();
}

export function handleSwap(event: Swap): void {
  record(event.address, event.params.sqrtPriceX96, event.params.tick, event.block);
}

export function handleSwapWithProtocolFees(event: Swap1): void {
  record(event.address, event.params.sqrtPriceX96, event.params.tick, event.block);
}
