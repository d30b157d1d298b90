// Helpers shared by the market, handler and pool mappings.
import { Address, BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { Pool } from '../generated/schema';
import { Pool as PoolTemplate } from '../generated/templates';
import { Pool as PoolContract } from '../generated/templates/Pool/Pool';
import { poolKnown } from './approval';
import { handlerSlot0, networkSlot0 } from './registry';
import { readSlot0 } from './slot0';

export const ZERO = BigInt.zero();
export const DAY = 86400;

// A 32-byte big-endian word as an unsigned BigInt.
export function wordToBigInt(w: Bytes): BigInt {
  const le = new Uint8Array(w.length);
  for (let i = 0; i < w.length; i++) le[i] = w[w.length - 1 - i];
  return BigInt.fromUnsignedBytes(changetype<Bytes>(le));
}

// The address in the low 20 bytes of a 32-byte word (an indexed address topic).
export function wordToAddress(w: Bytes): Address {
  return Address.fromBytes(Bytes.fromUint8Array(w.slice(12, 32)));
}

// The UTC midnight (unix seconds) of a block.
export function dayStart(block: ethereum.Block): i32 {
  const t = block.timestamp.toI32();
  return t - (t % DAY);
}

// Lowercase 0x-hex of an address: the form every id uses.
export function hex(a: Bytes): string {
  return a.toHexString();
}

// The Pool entity of an address, created (with a data source following its
// Swap events) the first time a market or handler names it, in block. Its
// price is seeded from slot0() read at the end of that block (the one
// eth_call whose value can change within a block: exact unless the pool
// swaps later in the same block, whose Swap events then update it); from
// then on its own Swap events keep it. slot0 is read through the ABI of the
// DEX of the handler that names the pool (slot0.ts); a market's prime pool,
// named before any handler, through the layout the network's handlers
// share. Its tokens (immutable) place it in its token pair, whose markets
// are then asked whether they approve it (approval.ts).
export function ensurePool(address: Address, block: BigInt, handler: Address | null = null): Pool {
  let pool = Pool.load(hex(address));
  if (pool == null) {
    pool = new Pool(hex(address));
    const c = PoolContract.bind(address);
    let layout = networkSlot0();
    if (handler) layout = handlerSlot0(handler);
    const slot0 = readSlot0(address, layout);
    pool.sqrtPriceX96 = slot0.ok ? slot0.sqrtPriceX96 : ZERO;
    pool.tick = slot0.ok ? slot0.tick : 0;
    pool.lastSwapBlock = ZERO;
    const t0 = c.try_token0();
    const t1 = c.try_token1();
    if (!t0.reverted && !t1.reverted) {
      pool.token0 = t0.value;
      pool.token1 = t1.value;
    }
    pool.save();
    PoolTemplate.create(address);
    poolKnown(pool, block);
  }
  return pool;
}

// The pool's price as of the current log: that of the latest Swap processed.
export function poolPrice(address: Bytes): BigInt {
  const pool = Pool.load(hex(address));
  return pool == null ? ZERO : pool.sqrtPriceX96;
}

const TWO16 = BigInt.fromI32(65536);

// The position of an event's log in the chain: blockNumber × 2^32 +
// logIndex (a block's logs are numbered from 0, far below 2^32). Lists
// ordered by it are in chain order with no ties, where a timestamp ties
// every record of a block (and of several blocks on chains faster than a
// block a second) and Graph Node then breaks the tie by id.
export function logOrder(e: ethereum.Event): BigInt {
  return e.block.number.times(TWO16).times(TWO16).plus(e.logIndex);
}
