// Liquidity providers: who holds the shares of each handler range
// (LpPosition, from the handlers' own share transfers, so shares received by
// transfer count), and each deposit and withdrawal (LpDeposit,
// LpWithdrawal). handler.ts calls the record functions from its mint, burn
// and reservation handlers once it has resolved the range, and exports the
// share-transfer handlers the manifests name.
import { Address, BigInt, Bytes, ethereum } from '@graphprotocol/graph-ts';
import { LpDeposit, LpPosition, LpShareMove, LpWithdrawal, Strike } from '../generated/schema';
import { Transfer } from '../generated/templates/HandlerV2/UniswapV3SingleTickLiquidityHandlerV2';
import { TransferBatch, TransferSingle } from '../generated/templates/HandlerV1/UniswapV3SingleTickLiquidityHandler';
import { ZERO, hex, logOrder, poolPrice, wordToAddress, wordToBigInt } from './common';

const ZERO_ADDRESS = Address.zero();

function positionID(handler: Address, tokenId: BigInt, user: Address): string {
  return hex(handler) + '-' + tokenId.toString() + '-' + hex(user);
}

function recordID(e: ethereum.Event): string {
  return e.transaction.hash.toHexString() + '-' + e.logIndex.toString();
}

function loadPosition(handler: Address, tokenId: BigInt, user: Address, e: ethereum.Event): LpPosition {
  const id = positionID(handler, tokenId, user);
  let pos = LpPosition.load(id);
  if (pos == null) {
    pos = new LpPosition(id);
    pos.user = user;
    pos.handler = handler;
    pos.tokenId = tokenId;
    pos.shares = ZERO;
    pos.principal = ZERO;
    pos.reservedLiquidity = ZERO;
    pos.open = false;
    pos.openedAt = e.block.timestamp;
    pos.openedLogOrder = logOrder(e);
  }
  return pos;
}

function savePosition(pos: LpPosition, e: ethereum.Event): void {
  const open = pos.shares.gt(ZERO) || pos.reservedLiquidity.gt(ZERO);
  if (open && !pos.open) {
    pos.openedAt = e.block.timestamp;
    pos.openedLogOrder = logOrder(e);
  }
  pos.open = open;
  pos.updatedAt = e.block.timestamp;
  pos.save();
}

// The range a position is of, once known: copied so that positions can be
// filtered by pool and handler without a join.
function setRange(pos: LpPosition, strike: Strike): void {
  pos.strike = strike.id;
  pos.pool = strike.pool;
  pos.hook = strike.hook;
  pos.tickLower = strike.tickLower;
  pos.tickUpper = strike.tickUpper;
}

function noteMove(handler: Address, tokenId: BigInt, user: Address, amount: BigInt, e: ethereum.Event): void {
  const move = new LpShareMove(positionID(handler, tokenId, user));
  move.txHash = e.transaction.hash;
  move.amount = amount;
  move.save();
}

// The shares of the holder's latest mint or burn in this transaction.
function movedShares(handler: Address, tokenId: BigInt, user: Address, e: ethereum.Event): BigInt {
  const move = LpShareMove.load(positionID(handler, tokenId, user));
  if (move == null || !move.txHash.equals(e.transaction.hash)) return ZERO;
  return move.amount;
}

// One share transfer of `amount` shares of tokenId from `from` to `to`.
// Principal follows the shares pro rata; the range is copied from the
// Strike when the handler has already named it.
function moveShares(handler: Address, from: Address, to: Address, tokenId: BigInt, amount: BigInt, e: ethereum.Event): void {
  if (from.equals(to) || amount.equals(ZERO)) return;
  let principal = ZERO;
  if (!from.equals(ZERO_ADDRESS)) {
    const src = loadPosition(handler, tokenId, from, e);
    if (src.shares.gt(ZERO)) {
      principal = src.principal.times(amount.lt(src.shares) ? amount : src.shares).div(src.shares);
    }
    src.principal = src.principal.minus(principal);
    src.shares = amount.gt(src.shares) ? ZERO : src.shares.minus(amount);
    savePosition(src, e);
    if (to.equals(ZERO_ADDRESS)) noteMove(handler, tokenId, from, amount, e);
  }
  if (!to.equals(ZERO_ADDRESS)) {
    const dst = loadPosition(handler, tokenId, to, e);
    dst.shares = dst.shares.plus(amount);
    dst.principal = dst.principal.plus(principal);
    if (dst.strike == null && !from.equals(ZERO_ADDRESS)) copyRange(dst, handler, tokenId, from);
    savePosition(dst, e);
    if (from.equals(ZERO_ADDRESS)) noteMove(handler, tokenId, to, amount, e);
  }
}

// A receiver's range from the sender's position, which has it once the
// handler has named the range.
function copyRange(dst: LpPosition, handler: Address, tokenId: BigInt, from: Address): void {
  const src = LpPosition.load(positionID(handler, tokenId, from));
  if (src == null) return;
  const strikeID = src.strike;
  if (strikeID == null) return;
  const strike = Strike.load(strikeID as string);
  if (strike != null) setRange(dst, strike);
}

// ERC-6909 Transfer(caller, from, to, id, amount) of the V2 handlers.
export function handleShareTransfer(e: Transfer): void {
  moveShares(e.address, e.params.from, e.params.to, e.params.id, e.params.amount, e);
}

// ERC-1155 TransferSingle(operator, from, to, id, value) of the V1 handler.
export function handleShareTransferSingle(e: TransferSingle): void {
  moveShares(e.address, e.params.from, e.params.to, e.params.id, e.params.value, e);
}

// ERC-1155 TransferBatch(operator, from, to, ids, values) of the V1 handler.
export function handleShareTransferBatch(e: TransferBatch): void {
  const ids = e.params.ids;
  const values = e.params.values;
  for (let i = 0; i < ids.length && i < values.length; i++) {
    moveShares(e.address, e.params.from, e.params.to, ids[i], values[i], e);
  }
}

// keccak256("Transfer(address,address,address,uint256,uint256)"): the V2
// handlers' ERC-6909 share transfer (from, to and id indexed).
const SHARE_TRANSFER_TOPIC = Bytes.fromHexString('0x1b3d7edb2e9c0b0e7c525b20aaaef0f5940d2ed71663c7d39266ecafac728859');

// Who holds the `shares` a LogMintedPosition minted to `minted` when its
// transaction ends: the minted lot followed through the handler's later
// share transfers of the id in the receipt, each from its holder of at
// least the lot (ClammRouterV2.mintPosition has the position manager mint
// to the router, then transfers the shares to its receiver). Without a
// receipt (V1 handlers, whose ERC-1155 shares no router moves) or a
// transfer, `minted`.
function holderAtEnd(e: ethereum.Event, tokenId: BigInt, minted: Address, shares: BigInt): Address {
  const receipt = e.receipt;
  if (receipt == null || shares.equals(ZERO)) return minted;
  let holder = minted;
  const logs = receipt.logs;
  for (let i = 0; i < logs.length; i++) {
    const lg = logs[i];
    if (lg.logIndex.le(e.logIndex) || !lg.address.equals(e.address)) continue;
    if (lg.topics.length != 4 || !lg.topics[0].equals(SHARE_TRANSFER_TOPIC) || lg.data.length != 64) continue;
    if (!wordToBigInt(lg.topics[3]).equals(tokenId) || !wordToAddress(lg.topics[1]).equals(holder)) continue;
    const to = wordToAddress(lg.topics[2]);
    if (to.equals(ZERO_ADDRESS) || wordToBigInt(Bytes.fromUint8Array(lg.data.slice(32, 64))).lt(shares)) continue;
    holder = to;
  }
  return holder;
}

// A LogMintedPosition of the range `strike` whose shares the handler minted
// to `caller` (the position manager's caller). The deposit, and the
// principal, belong to who holds those shares when the transaction ends:
// the caller, or the receiver a router handed them to.
export function recordDeposit(e: ethereum.Event, strike: Strike, caller: Address, liquidity: BigInt): void {
  const handler = e.address;
  const shares = movedShares(handler, strike.tokenId, caller, e);
  const user = holderAtEnd(e, strike.tokenId, caller, shares);
  const pos = loadPosition(handler, strike.tokenId, user, e);
  setRange(pos, strike);
  pos.principal = pos.principal.plus(liquidity);
  savePosition(pos, e);
  const d = new LpDeposit(recordID(e));
  d.user = user;
  d.caller = caller;
  d.handler = handler;
  d.tokenId = strike.tokenId;
  d.strike = strike.id;
  d.pool = strike.pool;
  d.hook = strike.hook;
  d.tickLower = strike.tickLower;
  d.tickUpper = strike.tickUpper;
  d.liquidity = liquidity;
  d.shares = shares;
  d.sqrtPriceX96 = poolPrice(strike.pool, e.address);
  d.blockNumber = e.block.number;
  d.timestamp = e.block.timestamp;
  d.logOrder = logOrder(e);
  d.txHash = e.transaction.hash;
  d.save();
}

function withdrawal(e: ethereum.Event, strike: Strike, user: Address, liquidity: BigInt, kind: string): LpWithdrawal {
  const w = new LpWithdrawal(recordID(e));
  w.kind = kind;
  w.user = user;
  w.handler = e.address;
  w.tokenId = strike.tokenId;
  w.strike = strike.id;
  w.pool = strike.pool;
  w.hook = strike.hook;
  w.tickLower = strike.tickLower;
  w.tickUpper = strike.tickUpper;
  w.liquidity = liquidity;
  w.shares = ZERO;
  w.sqrtPriceX96 = poolPrice(strike.pool, e.address);
  w.blockNumber = e.block.number;
  w.timestamp = e.block.timestamp;
  w.logOrder = logOrder(e);
  w.txHash = e.transaction.hash;
  return w;
}

// A LogBurnedPosition: a burn, until a LogReservedLiquidity right after it
// says it was a reservation.
export function recordBurn(e: ethereum.Event, strike: Strike, user: Address, liquidity: BigInt): void {
  const w = withdrawal(e, strike, user, liquidity, 'Burn');
  w.shares = movedShares(e.address, strike.tokenId, user, e);
  w.save();
  const pos = loadPosition(e.address, strike.tokenId, user, e);
  setRange(pos, strike);
  savePosition(pos, e);
}

// A LogReservedLiquidity: reserveLiquidity emits it right after the
// LogBurnedPosition of the same shares.
export function recordReserve(e: ethereum.Event, strike: Strike, user: Address, liquidity: BigInt): void {
  const burnt = LpWithdrawal.load(e.transaction.hash.toHexString() + '-' + e.logIndex.minus(BigInt.fromI32(1)).toString());
  if (burnt != null && burnt.kind == 'Burn' && burnt.tokenId.equals(strike.tokenId)) {
    burnt.kind = 'Reserve';
    burnt.save();
  }
  const pos = loadPosition(e.address, strike.tokenId, user, e);
  setRange(pos, strike);
  pos.reservedLiquidity = pos.reservedLiquidity.plus(liquidity);
  savePosition(pos, e);
}

// A LogWithdrawReservedLiquidity.
export function recordWithdrawReserved(e: ethereum.Event, strike: Strike, user: Address, liquidity: BigInt): void {
  withdrawal(e, strike, user, liquidity, 'WithdrawReserved').save();
  const pos = loadPosition(e.address, strike.tokenId, user, e);
  setRange(pos, strike);
  pos.reservedLiquidity = liquidity.gt(pos.reservedLiquidity) ? ZERO : pos.reservedLiquidity.minus(liquidity);
  savePosition(pos, e);
}

