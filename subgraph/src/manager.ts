// Discovery: a position manager whitelists every handler (LogUpdateWhitelistHandler)
// and every (handler, app) pair an option market uses
// (LogUpdateWhitelistHandlerWithApp). Both generations of position manager
// emit these two events with the same signatures (DopexV2PositionManager
// and DopexV2PositionManagerV2), so one mapping serves every position
// manager the manifests list. Each contract named there the first time is
// recorded as a Deployment; one the manifest does not list is probed by
// eth_call for its kind and indexed from the matching template from that
// block on. A contract that is neither kind is recorded as Unreadable and
// otherwise ignored: a probe that reverts never fails the subgraph.
import { Address, BigInt, ethereum, log } from '@graphprotocol/graph-ts';
import { Deployment } from '../generated/schema';
import { HandlerV1, HandlerV2, MarketV1, MarketV2 } from '../generated/templates';
import { DopexV2OptionMarketV2 } from '../generated/templates/MarketV2/DopexV2OptionMarketV2';
import { DopexV2OptionMarket } from '../generated/templates/MarketV1/DopexV2OptionMarket';
import { UniswapV3SingleTickLiquidityHandlerV3 } from '../generated/templates/PositionManager/UniswapV3SingleTickLiquidityHandlerV3';
import { UniswapV3SingleTickLiquidityHandlerV2 } from '../generated/templates/HandlerV2/UniswapV3SingleTickLiquidityHandlerV2';
import { UniswapV3SingleTickLiquidityHandler } from '../generated/templates/HandlerV1/UniswapV3SingleTickLiquidityHandler';
import {
  LogUpdateWhitelistHandler,
  LogUpdateWhitelistHandlerWithApp,
} from '../generated/templates/PositionManager/DopexV2PositionManager';
import { knownKind } from './registry';
import { hex } from './common';
import { createMarket } from './market';

function record(address: Address, kind: string, handler: boolean, manager: Address, isStatic: boolean, block: BigInt): void {
  const d = new Deployment(hex(address));
  d.kind = kind;
  d.handler = handler;
  d.positionManager = manager;
  d.inManifest = isStatic;
  d.discoveredAtBlock = block;
  d.save();
}

// A V3 handler answers whitelistedPools (its deposits take only listed
// pools) besides reserveCooldown; a V2 handler only reserveCooldown; a V1
// handler only lockedBlockDuration.
function handlerKind(address: Address): string {
  if (!UniswapV3SingleTickLiquidityHandlerV3.bind(address).try_whitelistedPools(Address.zero()).reverted) return 'HandlerV3';
  if (!UniswapV3SingleTickLiquidityHandlerV2.bind(address).try_reserveCooldown().reverted) return 'HandlerV2';
  if (!UniswapV3SingleTickLiquidityHandler.bind(address).try_lockedBlockDuration().reverted) return 'HandlerV1';
  return 'Unreadable';
}

function discoverHandler(address: Address, e: ethereum.Event): void {
  if (Deployment.load(hex(address)) != null) return;
  const known = knownKind(address);
  if (known != '') {
    record(address, known, true, e.address, true, e.block.number);
    return;
  }
  const kind = handlerKind(address);
  record(address, kind, true, e.address, false, e.block.number);
  // a V3 handler logs the V2 handler's events, which the V2 template reads
  if (kind == 'HandlerV3' || kind == 'HandlerV2') HandlerV2.create(address);
  else if (kind == 'HandlerV1') HandlerV1.create(address);
  else log.warning('position manager {} whitelisted {}, which is no handler this subgraph reads', [hex(e.address), hex(address)]);
}

// A market's immutables (its position manager, prime pool and assets),
// read once: they cannot change. A contract that does not answer them, or
// names another position manager, is no market of this one.
function discoverMarket(address: Address, e: ethereum.Event): void {
  if (Deployment.load(hex(address)) != null) return;
  const known = knownKind(address);
  if (known != '') {
    record(address, known, false, e.address, true, e.block.number);
    return;
  }
  const m = DopexV2OptionMarketV2.bind(address);
  const pm = m.try_positionManager();
  const prime = m.try_primePool();
  const call = m.try_callAsset();
  const put = m.try_putAsset();
  if (pm.reverted || prime.reverted || call.reverted || put.reverted || !pm.value.equals(e.address)) {
    record(address, 'Unreadable', false, e.address, false, e.block.number);
    log.warning('position manager {} whitelisted app {}, which is no option market of it', [hex(e.address), hex(address)]);
    return;
  }
  const v1 = !DopexV2OptionMarket.bind(address).try_ttlToVol(BigInt.zero()).reverted;
  record(address, v1 ? 'MarketV1' : 'MarketV2', false, e.address, false, e.block.number);
  createMarket(address, v1 ? 1 : 2, prime.value, call.value, put.value, e.block.number);
  if (v1) MarketV1.create(address);
  else MarketV2.create(address);
}

export function handleWhitelistHandler(e: LogUpdateWhitelistHandler): void {
  if (e.params._status) discoverHandler(e.params._handler, e);
}

export function handleWhitelistHandlerWithApp(e: LogUpdateWhitelistHandlerWithApp): void {
  if (!e.params._status) return;
  discoverHandler(e.params._handler, e);
  discoverMarket(e.params._app, e);
}
