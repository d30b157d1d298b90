// Handler ranges (Strike): liquidity as the handler's tokenIds(id) getter
// holds it, day sums of donations and compounded fees, and the
// LogUsePosition events a following LogMintOption turns into option legs.
import { Address, BigInt, ByteArray, Bytes, crypto, log } from '@graphprotocol/graph-ts';
import { DailyDonation, DailyFeeCompound, Strike, StrikeRef } from '../generated/schema';
import {
  LogBurnedPosition,
  LogDonation,
  LogFeeCompound,
  LogMintedPosition,
  LogReservedLiquidity,
  LogUnusePosition,
  LogUsePosition,
  LogWithdrawReservedLiquidity,
} from '../generated/templates/HandlerV2/UniswapV3SingleTickLiquidityHandlerV2';
import {
  LogBurnedPosition as LogBurnedPositionV1,
  LogMintedPosition as LogMintedPositionV1,
} from '../generated/templates/HandlerV1/UniswapV3SingleTickLiquidityHandler';
import { ZERO, dayStart, ensurePool, hex, poolPrice } from './common';
import { recordBurn, recordDeposit, recordReserve, recordWithdrawReserved } from './lp';
export { handleShareTransfer, handleShareTransferBatch, handleShareTransferSingle } from './lp';

const ZERO_ADDRESS = Address.zero();

// 32-byte big-endian word of abi.encode for an address or an int24.
function wordAddress(out: Uint8Array, at: i32, a: Address): void {
  for (let i = 0; i < 20; i++) out[at + 12 + i] = a[i];
}
function wordInt(out: Uint8Array, at: i32, v: i32): void {
  const fill: u8 = v < 0 ? 0xff : 0;
  for (let i = 0; i < 28; i++) out[at + i] = fill;
  out[at + 28] = u8((v >> 24) & 0xff);
  out[at + 29] = u8((v >> 16) & 0xff);
  out[at + 30] = u8((v >> 8) & 0xff);
  out[at + 31] = u8(v & 0xff);
}

function toUint(enc: Uint8Array): BigInt {
  const hash = crypto.keccak256(changetype<ByteArray>(enc));
  const le = new Uint8Array(32);
  for (let i = 0; i < 32; i++) le[i] = hash[31 - i];
  return BigInt.fromUnsignedBytes(changetype<Bytes>(le));
}

// The V2 handlers' position id: keccak256(abi.encode(handler, pool, hook,
// tickLower, tickUpper)) as a uint256.
export function positionId(handler: Address, pool: Address, hook: Address, tickLower: i32, tickUpper: i32): BigInt {
  const enc = new Uint8Array(160);
  wordAddress(enc, 0, handler);
  wordAddress(enc, 32, pool);
  wordAddress(enc, 64, hook);
  wordInt(enc, 96, tickLower);
  wordInt(enc, 128, tickUpper);
  return toUint(enc);
}

// The V1 handler's position id: four words, no hook:
// keccak256(abi.encode(handler, pool, tickLower, tickUpper)).
export function positionIdV1(handler: Address, pool: Address, tickLower: i32, tickUpper: i32): BigInt {
  const enc = new Uint8Array(128);
  wordAddress(enc, 0, handler);
  wordAddress(enc, 32, pool);
  wordInt(enc, 64, tickLower);
  wordInt(enc, 96, tickUpper);
  return toUint(enc);
}

function strikeID(handler: Address, pool: Address, hook: Address, tickLower: i32, tickUpper: i32): string {
  return hex(handler) + '-' + hex(pool) + '-' + hex(hook) + '-' + tickLower.toString() + '-' + tickUpper.toString();
}

function refID(handler: Address, tokenId: BigInt): string {
  return hex(handler) + '-' + tokenId.toString();
}

// The Strike a handler event names by position id, or null (logged) when the
// handler never minted it since the start block.
function strikeOf(handler: Address, tokenId: BigInt, what: string): Strike | null {
  const ref = StrikeRef.load(refID(handler, tokenId));
  if (ref == null) {
    log.warning('{} for unknown position {} of handler {}', [what, tokenId.toString(), hex(handler)]);
    return null;
  }
  return Strike.load(ref.strike);
}

// The mint/burn events carry two addresses after the pool: (hook, user) in
// the Uniswap and Sushi handlers, (user, hook) in the PancakeSwap, Agni and
// FusionX ones, under one topic. The one that hashes to the event's tokenId
// with the other fields is the hook.
function resolveStrike(handler: Address, tokenId: BigInt, pool: Address, a: Address, b: Address, tickLower: i32, tickUpper: i32, block: BigInt): Strike | null {
  let hook: Address;
  if (positionId(handler, pool, a, tickLower, tickUpper).equals(tokenId)) {
    hook = a;
  } else if (positionId(handler, pool, b, tickLower, tickUpper).equals(tokenId)) {
    hook = b;
  } else {
    log.error('position {} of handler {} matches neither address as its hook', [tokenId.toString(), hex(handler)]);
    return null;
  }
  return loadOrCreateStrike(handler, tokenId, pool, hook, tickLower, tickUpper, block);
}

// The V1 handler has no hooks: the id is checked against the four-word hash
// and the Strike's hook is the zero address.
function resolveStrikeV1(handler: Address, tokenId: BigInt, pool: Address, tickLower: i32, tickUpper: i32, block: BigInt): Strike | null {
  if (!positionIdV1(handler, pool, tickLower, tickUpper).equals(tokenId)) {
    log.error('position {} of V1 handler {} does not hash to its range', [tokenId.toString(), hex(handler)]);
    return null;
  }
  return loadOrCreateStrike(handler, tokenId, pool, ZERO_ADDRESS, tickLower, tickUpper, block);
}

function loadOrCreateStrike(handler: Address, tokenId: BigInt, pool: Address, hook: Address, tickLower: i32, tickUpper: i32, block: BigInt): Strike {
  const id = strikeID(handler, pool, hook, tickLower, tickUpper);
  let strike = Strike.load(id);
  if (strike == null) {
    strike = new Strike(id);
    strike.tokenId = tokenId;
    strike.handler = handler;
    strike.pool = pool;
    strike.hook = hook;
    strike.tickLower = tickLower;
    strike.tickUpper = tickUpper;
    strike.totalLiquidity = ZERO;
    strike.usedLiquidity = ZERO;
    strike.reservedLiquidity = ZERO;
    const ref = new StrikeRef(refID(handler, tokenId));
    ref.strike = id;
    ref.save();
    ensurePool(pool, block, handler);
  }
  return strike;
}

function addTotal(strike: Strike | null, delta: BigInt): void {
  if (strike == null) return;
  strike.totalLiquidity = strike.totalLiquidity.plus(delta);
  strike.save();
}

// The account of a mint or burn event whose two addresses are (hook, user)
// or (user, hook): the one that is not the resolved hook.
function userOf(strike: Strike, a: Address, b: Address): Address {
  return Address.fromBytes(strike.hook).equals(a) ? b : a;
}

export function handleMintedPositionV2(e: LogMintedPosition): void {
  const p = e.params;
  const strike = resolveStrike(e.address, p.tokenId, p.pool, p.hook, p.user, p.tickLower, p.tickUpper, e.block.number);
  addTotal(strike, p.liquidityMinted);
  if (strike != null) recordDeposit(e, strike, userOf(strike, p.hook, p.user), p.liquidityMinted);
}

export function handleBurnedPositionV2(e: LogBurnedPosition): void {
  const p = e.params;
  const strike = resolveStrike(e.address, p.tokenId, p.pool, p.hook, p.user, p.tickLower, p.tickUpper, e.block.number);
  addTotal(strike, p.liquidityBurned.neg());
  if (strike != null) recordBurn(e, strike, userOf(strike, p.hook, p.user), p.liquidityBurned);
}

export function handleMintedPositionV1(e: LogMintedPositionV1): void {
  const p = e.params;
  const strike = resolveStrikeV1(e.address, p.tokenId, p.pool, p.tickLower, p.tickUpper, e.block.number);
  addTotal(strike, p.liquidityMinted);
  if (strike != null) recordDeposit(e, strike, p.user, p.liquidityMinted);
}

export function handleBurnedPositionV1(e: LogBurnedPositionV1): void {
  const p = e.params;
  const strike = resolveStrikeV1(e.address, p.tokenId, p.pool, p.tickLower, p.tickUpper, e.block.number);
  addTotal(strike, p.liquidityBurned.neg());
  if (strike != null) recordBurn(e, strike, p.user, p.liquidityBurned);
}

function dayID(strike: Strike, start: i32): string {
  return strike.id + '-' + start.toString();
}

// Fees compounded into the range during a mint, before its LogMintedPosition.
export function handleFeeCompound(e: LogFeeCompound): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogFeeCompound');
  if (strike == null) return;
  const liquidity = e.params.liquidity;
  strike.totalLiquidity = strike.totalLiquidity.plus(liquidity);
  strike.save();
  const start = dayStart(e.block);
  let day = DailyFeeCompound.load(dayID(strike, start));
  if (day == null) {
    day = new DailyFeeCompound(dayID(strike, start));
    day.strike = strike.id;
    day.compound = ZERO;
    day.start = start;
  }
  day.compound = day.compound.plus(liquidity);
  day.sqrtPriceX96 = poolPrice(strike.pool, e.address);
  day.save();
}

export function handleDonation(e: LogDonation): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogDonation');
  if (strike == null) return;
  const liquidity = e.params.liquidityDonated;
  strike.totalLiquidity = strike.totalLiquidity.plus(liquidity);
  strike.save();
  const start = dayStart(e.block);
  let day = DailyDonation.load(dayID(strike, start));
  if (day == null) {
    day = new DailyDonation(dayID(strike, start));
    day.strike = strike.id;
    day.donation = ZERO;
    day.start = start;
  }
  day.donation = day.donation.plus(liquidity);
  day.sqrtPriceX96 = poolPrice(strike.pool, e.address);
  day.save();
}

export function handleUsePosition(e: LogUsePosition): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogUsePosition');
  if (strike == null) return;
  strike.usedLiquidity = strike.usedLiquidity.plus(e.params.liquidityUsed);
  strike.save();
}

// unusePositionHandler re-mints L: used falls by L, and what exceeds used
// (rounding in the re-mint) joins the total.
export function handleUnusePosition(e: LogUnusePosition): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogUnusePosition');
  if (strike == null) return;
  const l = e.params.liquidityUnused;
  if (strike.usedLiquidity.ge(l)) {
    strike.usedLiquidity = strike.usedLiquidity.minus(l);
  } else {
    strike.totalLiquidity = strike.totalLiquidity.plus(l.minus(strike.usedLiquidity));
    strike.usedLiquidity = ZERO;
  }
  strike.save();
}

// reserveLiquidity emits LogBurnedPosition (total falls) then this.
export function handleReservedLiquidity(e: LogReservedLiquidity): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogReservedLiquidity');
  if (strike == null) return;
  strike.reservedLiquidity = strike.reservedLiquidity.plus(e.params.liquidityReserved);
  strike.save();
  recordReserve(e, strike, e.params.user, e.params.liquidityReserved);
}

export function handleWithdrawReservedLiquidity(e: LogWithdrawReservedLiquidity): void {
  const strike = strikeOf(e.address, e.params.tokenId, 'LogWithdrawReservedLiquidity');
  if (strike == null) return;
  strike.reservedLiquidity = strike.reservedLiquidity.minus(e.params.liquidityWithdrawn);
  strike.save();
  recordWithdrawReserved(e, strike, e.params.user, e.params.liquidityWithdrawn);
}
