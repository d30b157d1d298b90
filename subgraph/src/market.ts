// Option markets (V1 DopexV2OptionMarket and DopexV2OptionMarketV2): options,
// their legs, owners and states, purchases, exercises, delegates and each
// market's daily sums. The two versions differ only in LogMintOption (V2 adds
// protocolFees); every other event has one signature and one handler here.
import { Address, BigInt, Bytes, ethereum, log } from '@graphprotocol/graph-ts';
import { Exercise, ExerciseDelegate, Market, MarketDayData, Option, OptionLeg, Purchase, Settlement, SettlementLeg, Strike } from '../generated/schema';
import {
  DopexV2OptionMarketV2,
  LogExerciseOption,
  LogMintOption,
  LogOptionsMarketInitialized,
  LogSettleOption,
  LogSplitOption,
  LogUpdateAddress,
  LogUpdateExerciseDelegate,
  Transfer,
} from '../generated/templates/MarketV2/DopexV2OptionMarketV2';
import { LogMintOption as LogMintOptionV1 } from '../generated/templates/MarketV1/DopexV2OptionMarket';
import { ZERO, dayStart, ensurePool, hex, logOrder, poolPrice, wordToAddress, wordToBigInt } from './common';
import { addCallPurchase, addExercise, countBuyer, initDayStats } from './stats';
import { positionId, positionIdV1 } from './handler';
import { DopexV2OptionMarket } from '../generated/templates/MarketV1/DopexV2OptionMarket';
import { marketKnown, marketUpdated } from './approval';
import { recordSwappers } from './swapper';

// keccak256("Transfer(address,address,uint256)"): ERC721's (four topics, the
// id indexed) and ERC20's (three topics, the amount in data) share it.
export const TRANSFER_TOPIC = Bytes.fromHexString('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');

// Who holds option tokenId when its purchase transaction ends: the last
// receiver of the market's ERC721 Transfer of that id in the receipt. A
// router (ClammRouterV2, LimitOrders) mints to itself and hands the NFT on
// after the market's LogMintOption; a direct buyer keeps it. Without a
// receipt, the caller.
function holderAtEnd(e: ethereum.Event, tokenId: BigInt, caller: Address): Address {
  const receipt = e.receipt;
  if (receipt == null) return caller;
  let holder = caller;
  const logs = receipt.logs;
  for (let i = 0; i < logs.length; i++) {
    const lg = logs[i];
    if (!lg.address.equals(e.address) || lg.topics.length != 4 || !lg.topics[0].equals(TRANSFER_TOPIC)) continue;
    if (wordToBigInt(lg.topics[3]).equals(tokenId)) holder = wordToAddress(lg.topics[2]);
  }
  return holder;
}

function optionID(market: Address, tokenId: BigInt): string {
  return hex(market) + '-' + tokenId.toString();
}

// A Market with zero sums, from its constructor's event or, for a market
// discovered by its position manager, from its immutables read by eth_call.
export function createMarket(address: Address, version: i32, primePool: Address, callAsset: Address, putAsset: Address, block: BigInt): void {
  if (Market.load(hex(address)) != null) return;
  const market = new Market(hex(address));
  market.version = version;
  market.primePool = ensurePool(primePool, block).id;
  market.callAsset = callAsset;
  market.putAsset = putAsset;
  market.createdAtBlock = block;
  market.purchases = 0;
  market.callVolume = ZERO;
  market.putVolume = ZERO;
  market.callPremium = ZERO;
  market.putPremium = ZERO;
  market.callProtocolFees = ZERO;
  market.putProtocolFees = ZERO;
  market.exercises = 0;
  market.save();
  marketKnown(market, block);
}

function initialized(e: LogOptionsMarketInitialized, version: i32): void {
  createMarket(e.address, version, e.params.primePool, e.params.callAsset, e.params.putAsset, e.block.number);
}

export function handleMarketInitializedV2(e: LogOptionsMarketInitialized): void {
  initialized(e, 2);
}

// Same signature in V1; the V2 class reads it.
export function handleMarketInitializedV1(e: LogOptionsMarketInitialized): void {
  initialized(e, 1);
}

function day(market: Address, block: ethereum.Block): MarketDayData {
  const start = dayStart(block);
  const id = hex(market) + '-' + start.toString();
  let d = MarketDayData.load(id);
  if (d == null) {
    d = new MarketDayData(id);
    d.market = hex(market);
    d.start = start;
    d.purchases = 0;
    d.callVolume = ZERO;
    d.putVolume = ZERO;
    d.callPremium = ZERO;
    d.putPremium = ZERO;
    d.callProtocolFees = ZERO;
    d.putProtocolFees = ZERO;
    d.exercises = 0;
    initDayStats(d);
  }
  return d;
}

// An open option created by e (a mint or a split) for owner; the caller
// sets its terms and amounts.
function newOption(e: ethereum.Event, tokenId: BigInt, owner: Address, isCall: boolean): Option {
  const option = new Option(optionID(e.address, tokenId));
  option.market = e.address;
  option.tokenId = tokenId;
  option.minter = owner;
  option.owner = owner;
  option.state = 'Open';
  option.isCall = isCall;
  option.mintTimestamp = e.block.timestamp;
  option.mintLogOrder = logOrder(e);
  option.mintTxHash = e.transaction.hash;
  option.exerciseCount = 0;
  return option;
}

const USE_TOPIC = Bytes.fromHexString('0x7fc7ce728583421fb192c9bac9c143fabf47263826e2fb21203a8f7038c093d4');
const MINT_V2_TOPIC = Bytes.fromHexString('0x733a06dcc0387bf816c34d99f254ceb937558fe9d4df66bbe70efa1b2aa1021f');
const MINT_V1_TOPIC = Bytes.fromHexString('0xe423bff11a961b6206c53a1b9fd2d741c7adbd794c6706c376549e2a7086a24b');

// The liquidities of the handlers' LogUsePosition(tokenId, liquidityUsed)
// logs of this mint: those of the receipt after the previous LogMintOption
// (of any market: a router may buy several options in one transaction) and
// before this one, in order: one per leg, as mintOption uses its legs in
// opTickMap order. Empty without a receipt.
function usesBefore(e: ethereum.Event): BigInt[] {
  const out: BigInt[] = [];
  const receipt = e.receipt;
  if (receipt == null) return out;
  const logs = receipt.logs;
  for (let i = 0; i < logs.length; i++) {
    const lg = logs[i];
    if (lg.logIndex.ge(e.logIndex)) break;
    if (lg.topics.length == 0) continue;
    const t = lg.topics[0];
    if (t.equals(MINT_V2_TOPIC) || t.equals(MINT_V1_TOPIC)) out.length = 0;
    else if (t.equals(USE_TOPIC) && lg.topics.length == 1 && lg.data.length == 64) out.push(wordToBigInt(Bytes.fromUint8Array(lg.data.slice(32, 64))));
  }
  return out;
}

// opTickMap(tokenId, i) as of the end of the block, through the ABI of the
// market's version (V1's OptionTicks has no hook).
class LegRead {
  ok: boolean = false;
  handler: Address = Address.zero();
  pool: Address = Address.zero();
  hook: Address = Address.zero();
  tickLower: i32 = 0;
  tickUpper: i32 = 0;
  liquidity: BigInt = ZERO;
}

function readLeg(market: Address, v1: boolean, tokenId: BigInt, i: i32): LegRead {
  const out = new LegRead();
  if (v1) {
    const t = DopexV2OptionMarket.bind(market).try_opTickMap(tokenId, BigInt.fromI32(i));
    if (t.reverted) return out;
    out.handler = t.value.get_handler();
    out.pool = t.value.getPool();
    out.tickLower = t.value.getTickLower();
    out.tickUpper = t.value.getTickUpper();
    out.liquidity = t.value.getLiquidityToUse();
  } else {
    const t = DopexV2OptionMarketV2.bind(market).try_opTickMap(tokenId, BigInt.fromI32(i));
    if (t.reverted) return out;
    out.handler = t.value.get_handler();
    out.pool = t.value.getPool();
    out.hook = t.value.getHook();
    out.tickLower = t.value.getTickLower();
    out.tickUpper = t.value.getTickUpper();
    out.liquidity = t.value.getLiquidityToUse();
  }
  out.ok = true;
  return out;
}

function isV1(market: Address): boolean {
  const m = Market.load(hex(market));
  return m != null && m.version == 1;
}

// The option's legs: opTickMap(tokenId, i) for i < count, so each leg's
// index is its position in the market's opTickMap whether or not its
// handler is indexed. Handler, pool, hook and ticks never change; the
// liquidity is the mint's (its LogUsePosition in the receipt) when the
// receipt holds one use per leg, else liquidityToUse as of the end of the
// block (a split option's; less if the block also exercised it);
// liquidityLeft is liquidityToUse as of the end of the block. strike is
// the leg's Strike when its handler is indexed. Returns whether some leg
// has liquidity left.
function saveLegs(market: Address, optionId: string, tokenId: BigInt, count: i32, minted: BigInt[]): boolean {
  const v1 = isV1(market);
  let left = false;
  for (let i = 0; i < count; i++) {
    const t = readLeg(market, v1, tokenId, i);
    if (!t.ok) continue;
    const leg = new OptionLeg(optionId + '-' + i.toString());
    leg.option = optionId;
    leg.index = i;
    leg.handler = t.handler;
    leg.pool = t.pool;
    leg.hook = t.hook;
    leg.tickLower = t.tickLower;
    leg.tickUpper = t.tickUpper;
    leg.liquidity = minted.length == count ? minted[i] : t.liquidity;
    leg.liquidityLeft = t.liquidity;
    if (t.liquidity.gt(ZERO)) left = true;
    const strikeId = hex(leg.handler) + '-' + hex(leg.pool) + '-' + hex(leg.hook) + '-' + leg.tickLower.toString() + '-' + leg.tickUpper.toString();
    if (Strike.load(strikeId) != null) leg.strike = strikeId;
    leg.save();
  }
  return left;
}

// An exercise, a split (of the parent) or a settlement took liquidity off
// the option's legs: each leg's liquidityLeft is read again (opTickMap at
// the end of the block, so several such events of one option in a block
// all leave the block's final state), and the option's hasLiquidity with
// them. The legs are those saveLegs stored (opData's count of them).
function refreshLegs(market: Address, option: Option): void {
  const v1 = isV1(market);
  let left = false;
  let count = -1; // opData's, read only if a leg is missing
  for (let i = 0; ; i++) {
    const leg = OptionLeg.load(option.id + '-' + i.toString());
    if (leg == null) {
      if (count < 0) count = legCount(market, option.tokenId);
      if (i >= count) break;
      continue; // a leg whose read failed at mint
    }
    const t = readLeg(market, v1, option.tokenId, i);
    if (!t.ok) continue;
    leg.liquidityLeft = t.liquidity;
    leg.save();
    if (t.liquidity.gt(ZERO)) left = true;
  }
  option.hasLiquidity = left;
}

// opData(tokenId).opTickArrayLen, 0 when it reverts.
function legCount(market: Address, tokenId: BigInt): i32 {
  const data = DopexV2OptionMarketV2.bind(market).try_opData(tokenId);
  return data.reverted ? 0 : data.value.getOpTickArrayLen().toI32();
}

// A mintOption: the option, its legs, the purchase and the day's sums.
// opData(tokenId) is written in this transaction and never again, so reading
// it at the end of the block reads what the mint wrote.
function minted(e: ethereum.Event, user: Address, tokenId: BigInt, isCall: boolean, premium: BigInt, withdrawn: BigInt, fees: BigInt): void {
  const id = optionID(e.address, tokenId);
  const buyer = holderAtEnd(e, tokenId, user);
  const option = newOption(e, tokenId, user, isCall);
  option.minter = buyer;
  option.premium = premium;
  option.protocolFees = fees;
  option.totalAssetWithdrawn = withdrawn;

  const data = DopexV2OptionMarketV2.bind(e.address).try_opData(tokenId);
  if (data.reverted) {
    log.warning('opData({}) reverted on {}; option without range, expiry or legs', [tokenId.toString(), hex(e.address)]);
    option.tickLower = 0;
    option.tickUpper = 0;
    option.expiry = ZERO;
    option.hasLiquidity = false;
  } else {
    option.tickLower = data.value.getTickLower();
    option.tickUpper = data.value.getTickUpper();
    option.expiry = data.value.getExpiry();
    option.hasLiquidity = saveLegs(e.address, id, tokenId, data.value.getOpTickArrayLen().toI32(), usesBefore(e));
  }
  option.save();

  const purchase = new Purchase(e.transaction.hash.toHexString() + '-' + e.logIndex.toString());
  purchase.option = id;
  purchase.market = e.address;
  purchase.buyer = buyer;
  purchase.caller = user;
  purchase.isCall = isCall;
  purchase.premium = premium;
  purchase.protocolFees = fees;
  purchase.totalAssetWithdrawn = withdrawn;
  const market = Market.load(hex(e.address));
  purchase.sqrtPriceX96 = market == null ? ZERO : poolPrice(Bytes.fromHexString(market.primePool));
  purchase.blockNumber = e.block.number;
  purchase.timestamp = e.block.timestamp;
  purchase.logOrder = logOrder(e);
  purchase.txHash = e.transaction.hash;
  purchase.save();

  countPurchase(e.address, e.block, isCall, premium, withdrawn, fees);
  const d = day(e.address, e.block);
  countBuyer(d, buyer);
  if (isCall && market != null) addCallPurchase(d, market, purchase.sqrtPriceX96, premium, withdrawn, fees);
  d.save();
}

// Adds a purchase to the market's day and to its running sums (the same
// fields, one UTC day against all time). A market is created by its own
// constructor's LogOptionsMarketInitialized, in the block its data source
// starts at, so a missing Market is a broken manifest: logged, day kept.
function countPurchase(market: Address, block: ethereum.Block, isCall: boolean, premium: BigInt, withdrawn: BigInt, fees: BigInt): void {
  const d = day(market, block);
  d.purchases += 1;
  if (isCall) {
    d.callVolume = d.callVolume.plus(withdrawn);
    d.callPremium = d.callPremium.plus(premium);
    d.callProtocolFees = d.callProtocolFees.plus(fees);
  } else {
    d.putVolume = d.putVolume.plus(withdrawn);
    d.putPremium = d.putPremium.plus(premium);
    d.putProtocolFees = d.putProtocolFees.plus(fees);
  }
  d.save();

  const m = Market.load(hex(market));
  if (m == null) {
    log.error('LogMintOption on {}, which has no Market (no LogOptionsMarketInitialized indexed)', [hex(market)]);
    return;
  }
  m.purchases += 1;
  if (isCall) {
    m.callVolume = m.callVolume.plus(withdrawn);
    m.callPremium = m.callPremium.plus(premium);
    m.callProtocolFees = m.callProtocolFees.plus(fees);
  } else {
    m.putVolume = m.putVolume.plus(withdrawn);
    m.putPremium = m.putPremium.plus(premium);
    m.putProtocolFees = m.putProtocolFees.plus(fees);
  }
  m.save();
}

export function handleMintOptionV2(e: LogMintOption): void {
  const p = e.params;
  minted(e, p.user, p.tokenId, p.isCall, p.premiumAmount, p.totalAssetWithdrawn, p.protocolFees);
}

export function handleMintOptionV1(e: LogMintOptionV1): void {
  const p = e.params;
  minted(e, p.user, p.tokenId, p.isCall, p.premiumAmount, p.totalAssetWithdrawn, ZERO);
}

// An exercise counts in the market's day and running sums whether or not
// its option is known (the sums count LogExerciseOption events); the
// Exercise entity needs its option.
export function handleExerciseOption(e: LogExerciseOption): void {
  const d = day(e.address, e.block);
  d.exercises += 1;
  d.save();
  const market = Market.load(hex(e.address));
  if (market != null) {
    market.exercises += 1;
    market.save();
  }

  const optionId = optionID(e.address, e.params.tokenId);
  const option = Option.load(optionId);
  if (option == null) {
    log.error('LogExerciseOption for unknown option {}', [optionId]);
    return;
  }
  const x = new Exercise(e.transaction.hash.toHexString() + '-' + e.logIndex.toString());
  option.state = 'Exercised';
  option.exerciseCount += 1;
  refreshLegs(e.address, option);
  option.lastExercise = x.id;
  option.save();

  x.option = optionId;
  x.market = e.address;
  x.user = e.params.user;
  let profitToken = new Bytes(0);
  if (market != null) profitToken = option.isCall ? market.putAsset : market.callAsset;
  const paid = payment(e, profitToken, e.params.totalProfit);
  x.exerciser = paid.payee;
  x.delegated = !paid.payee.equals(e.params.user);
  x.totalProfit = e.params.totalProfit;
  if (paid.found) x.profitToOwner = reached(e, profitToken, e.params.user, paid.index);
  else if (!x.delegated) x.profitToOwner = e.params.totalProfit;
  x.totalAssetRelocked = e.params.totalAssetRelocked;
  x.sqrtPriceX96 = market == null ? ZERO : poolPrice(Bytes.fromHexString(market.primePool));
  x.blockNumber = e.block.number;
  x.timestamp = e.block.timestamp;
  x.logOrder = logOrder(e);
  x.txHash = e.transaction.hash;
  x.save();
  recordSwappers(e, x.id, e.params.tokenId);
  addExercise(d, market, option.isCall, e.params.totalProfit, x.sqrtPriceX96);
  d.save();
}

// keccak256("LogExerciseOption(address,uint256,uint256,uint256)"), the same in V1 and V2.
const EXERCISE_TOPIC = Bytes.fromHexString('0x47283bcc199cd4d1c53508922f5a4d8a832a4fdf09854c82acf3ae49da4d446f');

class Payment {
  found: boolean = false;
  payee: Address = Address.zero();
  index: i32 = -1; // position of the payment in the receipt's logs
}

// The account the market paid totalProfit to (its msg.sender): the
// receiver of the market's last Transfer of the profit token before
// LogExerciseOption. An owner calling directly, its smart wallet, a
// delegate or an auto-exercise contract; not the keeper key that sent the
// transaction. Without a receipt or such a transfer: the transaction's
// sender.
function payment(e: ethereum.Event, token: Bytes, amount: BigInt): Payment {
  const out = new Payment();
  out.payee = e.transaction.from;
  const receipt = e.receipt;
  if (receipt == null || token.length == 0) return out;
  const logs = receipt.logs;
  for (let i = 0; i < logs.length; i++) {
    const lg = logs[i];
    if (lg.logIndex.ge(e.logIndex)) break;
    if (!isTransfer(lg, token) || !wordToAddress(lg.topics[1]).equals(e.address)) continue;
    if (!wordToBigInt(lg.data).equals(amount)) continue;
    out.found = true;
    out.payee = wordToAddress(lg.topics[2]);
    out.index = i;
  }
  return out;
}

function isTransfer(lg: ethereum.Log, token: Bytes): boolean {
  return lg.address.equals(token) && lg.topics.length == 3 && lg.topics[0].equals(TRANSFER_TOPIC) && lg.data.length == 32;
}

// What reached the owner of the profit token from the market's payment on,
// until the transaction's next LogExerciseOption (of any market): the
// payment itself when the owner was paid, what a delegate or keeper passed
// on (after its fee) otherwise.
function reached(e: ethereum.Event, token: Bytes, owner: Address, from: i32): BigInt {
  let sum = ZERO;
  const logs = e.receipt!.logs;
  for (let i = from; i < logs.length; i++) {
    const lg = logs[i];
    if (lg.logIndex.gt(e.logIndex) && lg.topics.length > 0 && lg.topics[0].equals(EXERCISE_TOPIC)) break;
    if (isTransfer(lg, token) && wordToAddress(lg.topics[2]).equals(owner)) sum = sum.plus(wordToBigInt(lg.data));
  }
  return sum;
}

// keccak256("LogSettleOption(address,uint256)"), the same in V1 and V2.
const SETTLE_TOPIC = Bytes.fromHexString('0x7568c76a44dadb68dbdbad5bcddec77a5d51c6b64188a85a58d5d54182d89d88');
// The handlers' LogUnusePosition(uint256 tokenId, uint128 liquidityUnused)
// and the position manager's LogUnusePosition(address handler, uint256).
const HANDLER_UNUSE_TOPIC = Bytes.fromHexString('0x64d8efec9e37db387b761d25cf5596ba293cd64d72fbcd86d7bb43b14c3bfaa8');
const MANAGER_UNUSE_TOPIC = Bytes.fromHexString('0xa904e206451b4cf70118a8d8de5262c854b7f410c531a11d1b9cae3963df4c72');

export function handleSettleOption(e: LogSettleOption): void {
  const id = optionID(e.address, e.params.tokenId);
  const option = Option.load(id);
  if (option == null) {
    log.error('LogSettleOption for unknown option {}', [id]);
    return;
  }
  const market = Market.load(hex(e.address));
  const st = new Settlement(e.transaction.hash.toHexString() + '-' + e.logIndex.toString());
  st.option = id;
  st.market = e.address;
  st.user = e.params.user;
  st.sender = e.transaction.from;
  st.settler = e.transaction.from;
  st.settlerProfit = ZERO;
  st.settlerCollateral = ZERO;
  st.settlerPaid = ZERO;
  const logs = e.receipt == null ? new Array<ethereum.Log>(0) : e.receipt!.logs;
  const start = spanStart(logs, e.logIndex);
  if (market != null) settlementMoves(st, logs, start, e, market, option.isCall);
  st.sqrtPriceX96 = market == null ? ZERO : poolPrice(Bytes.fromHexString(market.primePool));
  st.blockNumber = e.block.number;
  st.timestamp = e.block.timestamp;
  st.logOrder = logOrder(e);
  st.txHash = e.transaction.hash;
  st.save();
  settlementLegs(st.id, id, logs, start, e.logIndex, market != null && market.version == 1);

  option.state = 'Settled';
  option.settledAt = e.block.timestamp;
  refreshLegs(e.address, option);
  option.lastSettlement = st.id;
  option.save();
}

// The position in logs of the first log of this settlement's span: just
// after the receipt's previous LogSettleOption or LogExerciseOption (of any
// market) before the event.
function spanStart(logs: ethereum.Log[], at: BigInt): i32 {
  let start = 0;
  for (let i = 0; i < logs.length; i++) {
    const lg = logs[i];
    if (lg.logIndex.ge(at)) break;
    if (lg.topics.length == 0) continue;
    if (lg.topics[0].equals(SETTLE_TOPIC) || lg.topics[0].equals(EXERCISE_TOPIC)) start = i + 1;
  }
  return start;
}

function inList(list: Address[], a: Address): boolean {
  for (let i = 0; i < list.length; i++) if (list[i].equals(a)) return true;
  return false;
}

// Who settled and what the market paid or took from it, from the span's
// token transfers. The market's other counterparties in a settlement are
// the position manager and the legs' handlers, which the re-added
// liquidity goes to (they emit LogUnusePosition in the span), and the
// swappers, which receive collateral only. So: the profit token leaving
// the market to anyone else is the settler's profit; the profit token
// coming in from an account that the market pays collateral in the very
// next transfer is a settler paying for a leg whose range held the price.
function settlementMoves(st: Settlement, logs: ethereum.Log[], start: i32, e: ethereum.Event, market: Market, isCall: boolean): void {
  const profitToken = isCall ? market.putAsset : market.callAsset;
  const collateral = isCall ? market.callAsset : market.putAsset;
  const protocol: Address[] = [];
  for (let i = start; i < logs.length && logs[i].logIndex.lt(e.logIndex); i++) {
    const lg = logs[i];
    if (lg.topics.length > 0 && (lg.topics[0].equals(HANDLER_UNUSE_TOPIC) || lg.topics[0].equals(MANAGER_UNUSE_TOPIC))) protocol.push(lg.address);
  }
  let payer = Address.zero();
  let paid = ZERO;
  let pending = false; // the previous transfer was a payer's profit token into the market
  for (let i = start; i < logs.length && logs[i].logIndex.lt(e.logIndex); i++) {
    const lg = logs[i];
    const isProfit = isTransfer(lg, profitToken);
    const isCollateral = isTransfer(lg, collateral);
    if (!isProfit && !isCollateral) continue;
    const from = wordToAddress(lg.topics[1]);
    const to = wordToAddress(lg.topics[2]);
    const amount = wordToBigInt(lg.data);
    const wasPending = pending;
    pending = false;
    if (isProfit && from.equals(e.address) && !inList(protocol, to)) {
      st.settler = to;
      st.settlerProfit = st.settlerProfit.plus(amount);
    } else if (isProfit && to.equals(e.address) && !inList(protocol, from)) {
      payer = from;
      paid = amount;
      pending = true;
    } else if (isCollateral && wasPending && from.equals(e.address) && to.equals(payer)) {
      st.settler = payer;
      st.settlerPaid = st.settlerPaid.plus(paid);
      st.settlerCollateral = st.settlerCollateral.plus(amount);
    }
  }
}

// The most legs an option can have: mintOption refuses more than 20
// (DopexV2OptionMarket__MaxOptionBuyReached), a split copies the count.
const MAX_LEGS = 20;

// One SettlementLeg per recorded leg of the option, in index order: the
// liquidity of the span's LogUnusePosition from the leg's handler for the
// leg's range, each matched after the previous leg's (0 when the leg was
// skipped). A leg whose opTickMap read reverted at mint has no OptionLeg
// and no SettlementLeg.
function settlementLegs(settlementId: string, optionId: string, logs: ethereum.Log[], start: i32, at: BigInt, v1: boolean): void {
  let cursor = start;
  for (let index = 0; index < MAX_LEGS; index++) {
    const leg = OptionLeg.load(optionId + '-' + index.toString());
    if (leg == null) continue;
    const handler = Address.fromBytes(leg.handler);
    const pool = Address.fromBytes(leg.pool);
    const tokenId = v1 ? positionIdV1(handler, pool, leg.tickLower, leg.tickUpper) : positionId(handler, pool, Address.fromBytes(leg.hook), leg.tickLower, leg.tickUpper);
    const sl = new SettlementLeg(settlementId + '-' + index.toString());
    sl.settlement = settlementId;
    sl.index = index;
    sl.leg = leg.id;
    sl.liquidity = ZERO;
    for (let i = cursor; i < logs.length && logs[i].logIndex.lt(at); i++) {
      const lg = logs[i];
      if (!lg.address.equals(handler) || lg.topics.length != 1 || !lg.topics[0].equals(HANDLER_UNUSE_TOPIC) || lg.data.length != 64) continue;
      if (!wordToBigInt(Bytes.fromUint8Array(lg.data.slice(0, 32))).equals(tokenId)) continue;
      sl.liquidity = wordToBigInt(Bytes.fromUint8Array(lg.data.slice(32, 64)));
      cursor = i + 1;
      break;
    }
    sl.save();
  }
}

// positionSplitter mints newTokenId to `to` with the parent's range, expiry
// and side, and legs of its own in opTickMap (the parent's ranges, the split
// liquidities). It keeps the parent's mint time: its premium was paid then,
// and its ttl runs from then.
export function handleSplitOption(e: LogSplitOption): void {
  const parent = Option.load(optionID(e.address, e.params.tokenId));
  if (parent == null) {
    log.error('LogSplitOption of unknown option {}', [optionID(e.address, e.params.tokenId)]);
    return;
  }
  const option = newOption(e, e.params.newTokenId, e.params.to, parent.isCall);
  option.tickLower = parent.tickLower;
  option.tickUpper = parent.tickUpper;
  option.expiry = parent.expiry;
  option.premium = ZERO;
  option.protocolFees = ZERO;
  option.totalAssetWithdrawn = ZERO;
  option.splitFrom = parent.id;
  option.mintTimestamp = parent.mintTimestamp;
  option.splitTimestamp = e.block.timestamp;
  option.hasLiquidity = false;
  const data = DopexV2OptionMarketV2.bind(e.address).try_opData(e.params.newTokenId);
  if (!data.reverted) option.hasLiquidity = saveLegs(e.address, option.id, e.params.newTokenId, data.value.getOpTickArrayLen().toI32(), []);
  option.save();
  refreshLegs(e.address, parent); // the split took its liquidity off the parent's legs
  parent.save();
}

// updateAddress may have approved or let go any pool (its event names
// none): every pool of the market's pair is asked again (approval.ts).
export function handleUpdateAddress(e: LogUpdateAddress): void {
  const market = Market.load(hex(e.address));
  if (market != null) marketUpdated(market, e.block.number);
}

export function handleUpdateExerciseDelegate(e: LogUpdateExerciseDelegate): void {
  const id = hex(e.address) + '-' + hex(e.params.owner) + '-' + hex(e.params.delegate);
  let d = ExerciseDelegate.load(id);
  if (d == null) {
    d = new ExerciseDelegate(id);
    d.market = e.address;
    d.owner = e.params.owner;
    d.delegate = e.params.delegate;
  }
  d.status = e.params.status;
  d.updatedAt = e.block.timestamp;
  d.save();
}

// The mint's own Transfer precedes LogMintOption/LogSplitOption, which set
// the first owner; later transfers move it.
export function handleTransfer(e: Transfer): void {
  const option = Option.load(optionID(e.address, e.params.id));
  if (option == null) return;
  option.owner = e.params.to;
  option.save();
}
