// A pool's slot0, read through the ABI of its DEX's family of pools (the
// layout networks.json gives the handler's DEX): Uniswap V3 and its forks
// end in a uint8 feeProtocol and unlocked, PancakeSwap V3 and its forks in a
// uint32 feeProtocol and unlocked, Aerodrome Slipstream's CLPool in unlocked
// alone. A pool whose DEX is unknown ('' layout) is read through the two
// leading outputs every layout shares (abis/Pool.json), which Graph Node
// decodes as long as it ignores the words after them.
import { Address, BigInt } from '@graphprotocol/graph-ts';
import { Pool as PoolContract } from '../generated/templates/MarketV2/Pool';
import { Slot0UniswapV3 } from '../generated/templates/MarketV2/Slot0UniswapV3';
import { Slot0PancakeV3 } from '../generated/templates/MarketV2/Slot0PancakeV3';
import { Slot0AerodromeCL } from '../generated/templates/MarketV2/Slot0AerodromeCL';

export class PoolSlot0 {
  constructor(public ok: bool, public sqrtPriceX96: BigInt, public tick: i32) {}
}

export function readSlot0(pool: Address, layout: string): PoolSlot0 {
  if (layout == 'uniswap-v3') {
    const r = Slot0UniswapV3.bind(pool).try_slot0();
    return r.reverted ? failed() : new PoolSlot0(true, r.value.getSqrtPriceX96(), r.value.getTick());
  }
  if (layout == 'pancake-v3') {
    const r = Slot0PancakeV3.bind(pool).try_slot0();
    return r.reverted ? failed() : new PoolSlot0(true, r.value.getSqrtPriceX96(), r.value.getTick());
  }
  if (layout == 'aerodrome-cl') {
    const r = Slot0AerodromeCL.bind(pool).try_slot0();
    return r.reverted ? failed() : new PoolSlot0(true, r.value.getSqrtPriceX96(), r.value.getTick());
  }
  const r = PoolContract.bind(pool).try_slot0();
  return r.reverted ? failed() : new PoolSlot0(true, r.value.getSqrtPriceX96(), r.value.getTick());
}

function failed(): PoolSlot0 {
  return new PoolSlot0(false, BigInt.zero(), 0);
}
