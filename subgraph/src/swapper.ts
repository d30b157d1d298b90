// Swappers learned from the chain's own exercises. LogExerciseOption names
// neither the swappers nor the swap data; the transaction's input does. It
// is decoded by hand (ABI words, no host decode): exerciseOption called on
// the market, or wrapped in calls whose ABI is known: the market's (or any
// contract's) multicall(bytes[]) and multicall(uint256,bytes[]), Multicall3's
// aggregate3 and AutoExerciseTimeBased.autoExercise. A wrapper this file
// does not know leaves the exercise without swappers; nothing is guessed.
//
// Work is bounded per transaction, since anyone can send an exercise of
// their own option with crafted input: at most MAX_CALLS calls are decoded
// (each wrapper and each exerciseOption counts one) and MAX_LEGS legs
// collected; past either, decoding stops and what was found so far is
// recorded. A child offset a wrapper's array repeats is decoded once
// (offsets aliasing one child would otherwise multiply the work by the
// array's length at each level), and swappers are counted with a map.
import { Address, BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { ExerciseSwapper, Swapper } from '../generated/schema';
import { Swapper as SwapperContract } from '../generated/templates/MarketV2/Swapper';
import { hex, wordToAddress, wordToBigInt } from './common';

const EXERCISE_OPTION = '0x32f530a7'; // exerciseOption((uint256,address[],bytes[],uint256[]))
const MULTICALL = '0xac9650d8'; // multicall(bytes[])
const MULTICALL_DEADLINE = '0x5ae401dc'; // multicall(uint256,bytes[])
const AGGREGATE3 = '0x82ad56cb'; // aggregate3((address,bool,bytes)[])
const AUTO_EXERCISE = '0xa1e7f075'; // autoExercise(address,uint256,uint256,(uint256,address[],bytes[],uint256[]))
// Wrappers nest: a keeper's aggregate3 of a multicall is two levels; more
// is not decoded (bounded work per transaction).
const MAX_DEPTH = 4;
// The decode budget of one transaction (see above): far above a real
// exercise's (a keeper's batch of a few options, a few legs each).
const MAX_CALLS = 64;
const MAX_LEGS = 64;

// One leg's swapper as an exercise's parameters named it.
class LegSwap {
  swapper: Address;
  word: BigInt | null; // swapData's first word, when it has one
  constructor(swapper: Address, word: BigInt | null) {
    this.swapper = swapper;
    this.word = word;
  }
}

// Decode is one transaction's decoding: the option sought, the legs
// found and the calls decoded so far (the budget).
class Decode {
  tokenId: BigInt;
  legs: LegSwap[] = [];
  calls: i32 = 0;
  constructor(tokenId: BigInt) {
    this.tokenId = tokenId;
  }
  // spent is true once the budget is used up: nothing more is decoded.
  spent(): bool {
    return this.calls >= MAX_CALLS || this.legs.length >= MAX_LEGS;
  }
}

// u32At is the ABI word at off as a non-negative offset or length, -1
// when it is out of range or does not fit (a malformed input decodes to
// nothing, never aborts the handler).
function u32At(d: Bytes, off: i32): i32 {
  if (off < 0 || off + 32 > d.length) return -1;
  for (let i = 0; i < 28; i++) if (d[off + i] != 0) return -1;
  const v: u32 = ((<u32>d[off + 28]) << 24) | ((<u32>d[off + 29]) << 16) | ((<u32>d[off + 30]) << 8) | (<u32>d[off + 31]);
  if (v > 0x00ffffff) return -1;
  return <i32>v;
}

function wordAt(d: Bytes, off: i32): Bytes {
  return Bytes.fromUint8Array(d.subarray(off, off + 32));
}

function selector(d: Bytes): string {
  if (d.length < 4) return '';
  return Bytes.fromUint8Array(d.subarray(0, 4)).toHexString();
}

// bytesAt is the `bytes` value whose length word is at off, empty when
// there is none (Bytes | null would meet ByteArray's overloaded != in
// AssemblyScript 0.19, which its compiler cannot take).
function bytesAt(d: Bytes, off: i32): Bytes {
  const n = u32At(d, off);
  if (n < 0 || off + 32 + n > d.length) return new Bytes(0);
  return Bytes.fromUint8Array(d.subarray(off + 32, off + 32 + n));
}

// legSwaps collects into x.legs the swappers of exercised legs of every
// exerciseOption for x.tokenId found in call (a selector and its
// arguments), within x's budget.
function legSwaps(call: Bytes, x: Decode, depth: i32): void {
  if (depth > MAX_DEPTH || x.spent()) return;
  x.calls++;
  const sel = selector(call);
  const args = Bytes.fromUint8Array(call.subarray(4));
  if (sel == EXERCISE_OPTION) {
    paramsAt(args, u32At(args, 0), x);
  } else if (sel == AUTO_EXERCISE) {
    paramsAt(args, u32At(args, 96), x);
  } else if (sel == MULTICALL) {
    eachBytes(args, u32At(args, 0), x, depth);
  } else if (sel == MULTICALL_DEADLINE) {
    eachBytes(args, u32At(args, 32), x, depth);
  } else if (sel == AGGREGATE3) {
    eachCall3(args, u32At(args, 0), x, depth);
  }
}

// eachBytes decodes the bytes[] at arr (relative to args) call by call,
// each distinct child offset once.
function eachBytes(args: Bytes, arr: i32, x: Decode, depth: i32): void {
  const n = u32At(args, arr);
  if (arr < 0 || n < 0) return;
  const base = arr + 32;
  const seen = new Set<i32>();
  for (let i = 0; i < n && !x.spent(); i++) {
    const off = u32At(args, base + 32 * i);
    if (off < 0) return;
    if (seen.has(off)) continue;
    seen.add(off);
    legSwaps(bytesAt(args, base + off), x, depth + 1);
  }
}

// eachCall3 decodes aggregate3's (address target, bool allowFailure,
// bytes callData)[], each distinct callData offset once.
function eachCall3(args: Bytes, arr: i32, x: Decode, depth: i32): void {
  const n = u32At(args, arr);
  if (arr < 0 || n < 0) return;
  const base = arr + 32;
  const seen = new Set<i32>();
  for (let i = 0; i < n && !x.spent(); i++) {
    const t = u32At(args, base + 32 * i);
    if (t < 0) return;
    const off = u32At(args, base + t + 64);
    if (off < 0 || seen.has(t + off)) continue;
    seen.add(t + off);
    legSwaps(bytesAt(args, base + t + off), x, depth + 1);
  }
}

// paramsAt decodes ExerciseOptionParams {optionId, swapper[], swapData[],
// liquidityToExercise[]} at t (relative to args): the swapper of each leg
// exercised (liquidity above 0), when optionId is x.tokenId.
function paramsAt(args: Bytes, t: i32, x: Decode): void {
  if (t < 0 || t + 128 > args.length || !wordToBigInt(wordAt(args, t)).equals(x.tokenId)) return;
  const sw = u32At(args, t + 32), sd = u32At(args, t + 64), lq = u32At(args, t + 96);
  if (sw < 0 || sd < 0 || lq < 0) return;
  const n = u32At(args, t + sw);
  if (n < 0 || n != u32At(args, t + lq)) return;
  const dataLen = u32At(args, t + sd);
  for (let i = 0; i < n && x.legs.length < MAX_LEGS; i++) {
    const liq = t + lq + 32 + 32 * i;
    if (liq + 32 > args.length) return;
    if (wordToBigInt(wordAt(args, liq)).isZero()) continue;
    const a = t + sw + 32 + 32 * i;
    if (a + 32 > args.length) return;
    const swapper = wordToAddress(wordAt(args, a));
    if (swapper.equals(Address.zero())) continue;
    let word: BigInt | null = null;
    if (dataLen == n) {
      const off = u32At(args, t + sd + 32 + 32 * i);
      const data = off < 0 ? new Bytes(0) : bytesAt(args, t + sd + 32 + off);
      if (data.length >= 32) word = wordToBigInt(wordAt(data, 0));
    }
    x.legs.push(new LegSwap(swapper, word));
  }
}

// recordSwappers records the swappers exercise exerciseId's transaction
// passed to the market for option tokenId: an ExerciseSwapper per
// distinct swapper, and a Swapper the first time the chain sees one.
export function recordSwappers(e: ethereum.Event, exerciseId: string, tokenId: BigInt): void {
  const x = new Decode(tokenId);
  legSwaps(e.transaction.input, x, 0);
  const legs = x.legs;
  // Legs per swapper, and each swapper's first leg in order found.
  const count = new Map<string, i32>();
  const firsts: LegSwap[] = [];
  for (let i = 0; i < legs.length; i++) {
    const k = hex(legs[i].swapper);
    if (count.has(k)) {
      count.set(k, count.get(k) + 1);
    } else {
      count.set(k, 1);
      firsts.push(legs[i]);
    }
  }
  for (let i = 0; i < firsts.length; i++) {
    const a = firsts[i].swapper;
    learn(e, exerciseId, firsts[i]);
    const r = new ExerciseSwapper(exerciseId + '-' + hex(a));
    r.exercise = exerciseId;
    r.swapper = hex(a);
    r.market = e.address;
    r.legs = count.get(hex(a));
    r.blockNumber = e.block.number;
    r.timestamp = e.block.timestamp;
    r.save();
  }
}

// learn creates the Swapper of leg's contract the first time it is seen,
// with its kind from what it answers at this block.
function learn(e: ethereum.Event, exerciseId: string, leg: LegSwap): void {
  const id = hex(leg.swapper);
  if (Swapper.load(id) != null) return;
  const s = new Swapper(id);
  s.address = leg.swapper;
  s.kind = 'unknown';
  const c = SwapperContract.bind(leg.swapper);
  const sr = c.try_sr();
  if (!sr.reverted) {
    s.kind = 'swapRouter';
    s.router = sr.value;
  } else {
    const inch = c.try_oneInchRouter();
    if (!inch.reverted) {
      s.kind = 'oneInch';
      s.router = inch.value;
    }
  }
  s.swapDataWord = leg.word;
  s.firstExercise = exerciseId;
  s.market = e.address;
  s.blockNumber = e.block.number;
  s.timestamp = e.block.timestamp;
  s.save();
}
