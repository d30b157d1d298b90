// Swappers learned from the chain's own exercises. LogExerciseOption names
// neither the swappers nor the swap data; the transaction's input does. It
// is decoded by hand (ABI words, no host decode): exerciseOption called on
// the market, or wrapped in calls whose ABI is known: the market's (or any
// contract's) multicall(bytes[]) and multicall(uint256,bytes[]), Multicall3's
// aggregate3 and AutoExerciseTimeBased.autoExercise. A wrapper this file
// does not know leaves the exercise without swappers; nothing is guessed.
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

// One leg's swapper as an exercise's parameters named it.
class LegSwap {
  swapper: Address;
  word: BigInt | null; // swapData's first word, when it has one
  constructor(swapper: Address, word: BigInt | null) {
    this.swapper = swapper;
    this.word = word;
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

// legSwaps collects into out the swappers of exercised legs of every
// exerciseOption for tokenId found in call (a selector and its arguments).
function legSwaps(call: Bytes, tokenId: BigInt, out: LegSwap[], depth: i32): void {
  if (depth > MAX_DEPTH) return;
  const sel = selector(call);
  const args = Bytes.fromUint8Array(call.subarray(4));
  if (sel == EXERCISE_OPTION) {
    paramsAt(args, u32At(args, 0), tokenId, out);
  } else if (sel == AUTO_EXERCISE) {
    paramsAt(args, u32At(args, 96), tokenId, out);
  } else if (sel == MULTICALL) {
    eachBytes(args, u32At(args, 0), tokenId, out, depth);
  } else if (sel == MULTICALL_DEADLINE) {
    eachBytes(args, u32At(args, 32), tokenId, out, depth);
  } else if (sel == AGGREGATE3) {
    eachCall3(args, u32At(args, 0), tokenId, out, depth);
  }
}

// eachBytes decodes the bytes[] at arr (relative to args) call by call.
function eachBytes(args: Bytes, arr: i32, tokenId: BigInt, out: LegSwap[], depth: i32): void {
  const n = u32At(args, arr);
  if (arr < 0 || n < 0) return;
  const base = arr + 32;
  for (let i = 0; i < n; i++) {
    const off = u32At(args, base + 32 * i);
    if (off < 0) return;
    legSwaps(bytesAt(args, base + off), tokenId, out, depth + 1);
  }
}

// eachCall3 decodes aggregate3's (address target, bool allowFailure, bytes callData)[].
function eachCall3(args: Bytes, arr: i32, tokenId: BigInt, out: LegSwap[], depth: i32): void {
  const n = u32At(args, arr);
  if (arr < 0 || n < 0) return;
  const base = arr + 32;
  for (let i = 0; i < n; i++) {
    const t = u32At(args, base + 32 * i);
    if (t < 0) return;
    const off = u32At(args, base + t + 64);
    if (off < 0) continue;
    legSwaps(bytesAt(args, base + t + off), tokenId, out, depth + 1);
  }
}

// paramsAt decodes ExerciseOptionParams {optionId, swapper[], swapData[],
// liquidityToExercise[]} at t (relative to args): the swapper of each leg
// exercised (liquidity above 0), when optionId is tokenId.
function paramsAt(args: Bytes, t: i32, tokenId: BigInt, out: LegSwap[]): void {
  if (t < 0 || t + 128 > args.length || !wordToBigInt(wordAt(args, t)).equals(tokenId)) return;
  const sw = u32At(args, t + 32), sd = u32At(args, t + 64), lq = u32At(args, t + 96);
  if (sw < 0 || sd < 0 || lq < 0) return;
  const n = u32At(args, t + sw);
  if (n < 0 || n != u32At(args, t + lq)) return;
  const dataLen = u32At(args, t + sd);
  for (let i = 0; i < n; i++) {
    const liq = t + lq + 32 + 32 * i;
    if (liq + 32 > args.length || wordToBigInt(wordAt(args, liq)).isZero()) continue;
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
    out.push(new LegSwap(swapper, word));
  }
}

// recordSwappers records the swappers exercise exerciseId's transaction
// passed to the market for option tokenId: an ExerciseSwapper per
// distinct swapper, and a Swapper the first time the chain sees one.
export function recordSwappers(e: ethereum.Event, exerciseId: string, tokenId: BigInt): void {
  const legs: LegSwap[] = [];
  legSwaps(e.transaction.input, tokenId, legs, 0);
  for (let i = 0; i < legs.length; i++) {
    const a = legs[i].swapper;
    let first = true;
    for (let j = 0; j < i; j++) first = first && !legs[j].swapper.equals(a);
    if (!first) continue;
    let count = 0;
    for (let j = i; j < legs.length; j++) if (legs[j].swapper.equals(a)) count++;
    learn(e, exerciseId, legs[i]);
    const x = new ExerciseSwapper(exerciseId + '-' + hex(a));
    x.exercise = exerciseId;
    x.swapper = hex(a);
    x.market = e.address;
    x.legs = count;
    x.blockNumber = e.block.number;
    x.timestamp = e.block.timestamp;
    x.save();
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
