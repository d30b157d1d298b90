// Which pools each option market buys from (MarketPool): the market's
// approvedPools(pool), which mintOption requires of every leg's pool. The
// market sets it with updateAddress, and its LogUpdateAddress names no
// pool, so the mapping cannot learn from an event which pool changed: it
// reads approvedPools(pool) for every market and pool of one token pair
// (TokenPair) whenever either side becomes known, and for every pool of a
// market's pair again on each of its LogUpdateAddress. eth_call answers as
// of the end of the block, so a MarketPool is exact at the block it was
// read in and stays so until the market's next LogUpdateAddress.
import { Address, BigInt, Bytes } from '@graphprotocol/graph-ts';
import { Market, MarketPool, Pool, TokenPair } from '../generated/schema';
import { DopexV2OptionMarketV2 } from '../generated/templates/MarketV2/DopexV2OptionMarketV2';

// The pair's id: its two tokens as lowercase hex, the lower first (the
// order Uniswap-style pools keep token0 and token1 in).
function pairID(a: Bytes, b: Bytes): string {
  const x = a.toHexString();
  const y = b.toHexString();
  return x < y ? x + '-' + y : y + '-' + x;
}

function loadPair(id: string): TokenPair {
  let pair = TokenPair.load(id);
  if (pair == null) {
    pair = new TokenPair(id);
    pair.markets = [];
    pair.pools = [];
  }
  return pair;
}

// Reads market's approvedPools(pool) at the end of the block into its
// MarketPool. A market that does not answer (a reverted call) approves
// nothing.
function probe(market: string, prime: string, pool: string, block: BigInt): void {
  const id = market + '-' + pool;
  let mp = MarketPool.load(id);
  if (mp == null) {
    mp = new MarketPool(id);
    mp.market = market;
    mp.pool = pool;
    mp.prime = pool == prime;
  }
  const r = DopexV2OptionMarketV2.bind(Address.fromString(market)).try_approvedPools(Address.fromString(pool));
  mp.approved = !r.reverted && r.value;
  mp.checkedAtBlock = block;
  mp.save();
}

// A pool just became known (its Pool entity created): it joins its pair,
// and every market of the pair is asked whether it approves it.
export function poolKnown(pool: Pool, block: BigInt): void {
  const t0 = pool.token0;
  const t1 = pool.token1;
  if (t0 === null || t1 === null) return; // not a pool of any pair (=== : Bytes overloads ==)
  const pair = loadPair(pairID(t0, t1));
  const pools = pair.pools;
  pools.push(pool.id);
  pair.pools = pools;
  pair.save();
  const markets = pair.markets;
  for (let i = 0; i < markets.length; i++) {
    const m = Market.load(markets[i]);
    if (m != null) probe(m.id, m.primePool, pool.id, block);
  }
}

// A market just became known (its Market entity saved): it joins its pair,
// and is asked whether it approves each pool of the pair known now.
export function marketKnown(market: Market, block: BigInt): void {
  const pair = loadPair(pairID(market.callAsset, market.putAsset));
  const markets = pair.markets;
  markets.push(market.id);
  pair.markets = markets;
  pair.save();
  reprobe(market, pair, block);
}

// LogUpdateAddress of a known market: any pool of its pair may have been
// approved or let go, so each is asked again.
export function marketUpdated(market: Market, block: BigInt): void {
  const pair = TokenPair.load(pairID(market.callAsset, market.putAsset));
  if (pair != null) reprobe(market, pair, block);
}

function reprobe(market: Market, pair: TokenPair, block: BigInt): void {
  const pools = pair.pools;
  for (let i = 0; i < pools.length; i++) probe(market.id, market.primePool, pools[i], block);
}
