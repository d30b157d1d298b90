// Helpers shared by the market and handler mappings.
import { Address, BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { Pool } from '../generated/schema';
import { Pool as PoolContract } from '../generated/templates/MarketV2/Pool';
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

// The Pool entity of an address, created the first time a market or
// handler names it, in block, with slot0() read at the end of that block
// through the ABI of the DEX of the handler that names the pool (slot0.ts;
// a market's prime pool, named before any handler, through the layout the
// network's handlers share). Its tokens (immutable) place it in its token
// pair, whose markets are then asked whether they approve it
// (approval.ts). The entity is not written again: no data source follows
// the pool's Swap events (a busy pool swaps tens of thousands of times a
// day, far more than the protocol has events); each record that carries a
// price reads it at its own block (poolPrice).
export function ensurePool(address: Address, block: BigInt, handler: Address | null = null): Pool {
  let pool = Pool.load(hex(address));
  if (pool == null) {
    pool = new Pool(hex(address));
    const c = PoolContract.bind(address);
    const slot0 = readSlot0(address, layoutOf(handler));
    pool.sqrtPriceX96 = slot0.ok ? slot0.sqrtPriceX96 : ZERO;
    pool.tick = slot0.ok ? slot0.tick : 0;
    const t0 = c.try_token0();
    const t1 = c.try_token1();
    if (!t0.reverted && !t1.reverted) {
      pool.token0 = t0.value;
      pool.token1 = t1.value;
    }
    pool.save();
    poolKnown(pool, block);
  }
  return pool;
}

// The slot0 layout of a handler's DEX; with no handler, the one the
// network's handlers share.
function layoutOf(handler: Address | null): string {
  if (handler) return handlerSlot0(handler);
  return networkSlot0();
}

// The pool's sqrtPriceX96 at the end of the current block: slot0() by
// eth_call (Graph Node calls at the trigger's block), read through the
// ABI of the DEX of the handler that uses the pool (slot0.ts), or, with no
// handler (a market's prime pool), through the layout the network's
// handlers share; 0 if the call reverts.
export function poolPrice(address: Bytes, handler: Address | null = null): BigInt {
  const slot0 = readSlot0(Address.fromBytes(address), layoutOf(handler));
  return slot0.ok ? slot0.sqrtPriceX96 : ZERO;
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
