// Writes the subgraph manifests from networks.json (the registry of
// deployments), one per Graph Node network: subgraph.yaml for arbitrum-one
// (the file `graph build` reads by default) and subgraph.<network>.yaml for
// each other network; and src/known.ts, the addresses each network's
// manifest indexes statically (so the position manager's mapping does not
// create a second data source for them) and the slot0 layout of each
// handler's DEX. One manifest per network because the networks index
// different numbers of markets and handlers, which graph-cli's `--network`
// overrides (one address per named data source) cannot express.
// It also writes the gateway's per-chain defaults
// (../internal/config/defaults.json, embedded by internal/config), so that
// the registry is the one place a deployment is written and adding a chain
// is one edit. `node manifest.mjs --list` prints each network and its
// manifest (the build script builds them all); CI runs this and fails when
// a committed file differs.
import { readFileSync, writeFileSync } from 'node:fs';

const registry = JSON.parse(readFileSync(new URL('./networks.json', import.meta.url)));
// the networks, in the registry's order; keys starting with _ are notes
const networks = Object.fromEntries(Object.entries(registry).filter(([name]) => !name.startsWith('_')));

// manifestFile is the manifest of network, relative to subgraph/.
function manifestFile(network) {
  return network === 'arbitrum-one' ? 'subgraph.yaml' : `subgraph.${network}.yaml`;
}

// The slot0 layouts a handler's DEX may declare (networks.json `slot0`),
// each an ABI in abis/ with the full slot0 of that family of pools:
// Uniswap V3 and its forks with a uint8 feeProtocol (Sushi, Butter,
// Thruster, Equalizer), PancakeSwap V3 and its forks with a uint32 one
// (Agni, FusionX, BulletX, Kodiak), and Aerodrome Slipstream's CLPool,
// which has no feeProtocol at all.
const slot0Abis = { 'uniswap-v3': 'Slot0UniswapV3', 'pancake-v3': 'Slot0PancakeV3', 'aerodrome-cl': 'Slot0AerodromeCL' };

// The events V1 and V2 share (same signatures); only LogMintOption differs.
const marketEvents = [
      ['LogExerciseOption(address,uint256,uint256,uint256)', 'handleExerciseOption', true],
      ['LogSettleOption(address,uint256)', 'handleSettleOption', true],
      ['LogSplitOption(address,uint256,uint256,address)', 'handleSplitOption'],
      ['LogUpdateExerciseDelegate(address,address,bool)', 'handleUpdateExerciseDelegate'],
      ['Transfer(indexed address,indexed address,indexed uint256)', 'handleTransfer'],
      // updateAddress: which pools the market approves (src/approval.ts)
      ['LogUpdateAddress(address,address,address)', 'handleUpdateAddress'],
];
const marketEntities = ['Market', 'Pool', 'Option', 'OptionLeg', 'Purchase', 'Exercise', 'Swapper', 'ExerciseSwapper', 'Settlement', 'SettlementLeg', 'ExerciseDelegate', 'MarketDayData', 'MarketPool', 'TokenPair'];
// The events the V1 and V2 handlers share; mint and burn differ (V2 adds the hook).
const handlerEvents = [
      ['LogFeeCompound(address,address,uint256,int24,int24,uint128)', 'handleFeeCompound'],
      ['LogUsePosition(uint256,uint128)', 'handleUsePosition'],
      ['LogUnusePosition(uint256,uint128)', 'handleUnusePosition'],
      ['LogDonation(uint256,uint128)', 'handleDonation'],
];
const handlerEntities = ['Strike', 'StrikeRef', 'Pool', 'DailyDonation', 'DailyFeeCompound', 'LpPosition', 'LpDeposit', 'LpWithdrawal', 'LpShareMove', 'MarketPool', 'TokenPair'];

const managerEvents = [
  ['LogUpdateWhitelistHandler(address,bool)', 'handleWhitelistHandler'],
  ['LogUpdateWhitelistHandlerWithApp(address,address,bool)', 'handleWhitelistHandlerWithApp'],
];

const kinds = {
  manager: {
    file: './src/manager.ts',
    abi: 'DopexV2PositionManager',
    // the discovery probes bind the markets' and handlers' ABIs
    extraAbis: ['DopexV2OptionMarketV2', 'DopexV2OptionMarket', 'UniswapV3SingleTickLiquidityHandlerV3', 'UniswapV3SingleTickLiquidityHandlerV2', 'UniswapV3SingleTickLiquidityHandler'],
    entities: ['Deployment', 'Market', 'Pool', 'MarketPool', 'TokenPair'],
    events: managerEvents,
  },
  market2: {
    file: './src/market.ts',
    abi: 'DopexV2OptionMarketV2',
    // an exercise's swappers are asked what they are (src/swapper.ts)
    extraAbis: ['Swapper'],
    entities: marketEntities,
    events: [
      ['LogOptionsMarketInitialized(address,address,address,address,address)', 'handleMarketInitializedV2'],
      ['LogMintOption(address,uint256,bool,uint256,uint256,uint256)', 'handleMintOptionV2', true],
      ...marketEvents,
    ],
    calls: true,
  },
  market1: {
    file: './src/market.ts',
    abi: 'DopexV2OptionMarket',
    // the mapping binds opData through the V2 ABI (same signature in V1);
    // Graph Node finds a bound contract's ABI among the data source's abis
    extraAbis: ['DopexV2OptionMarketV2', 'Swapper'],
    entities: marketEntities,
    events: [
      ['LogOptionsMarketInitialized(address,address,address,address,address)', 'handleMarketInitializedV1'],
      ['LogMintOption(address,uint256,bool,uint256,uint256)', 'handleMintOptionV1', true],
      ...marketEvents,
    ],
    calls: true,
  },
  handler2: {
    file: './src/handler.ts',
    abi: 'UniswapV3SingleTickLiquidityHandlerV2',
    // a pool a handler names first is probed for the markets of its pair
    // (approvedPools, src/approval.ts)
    extraAbis: ['DopexV2OptionMarketV2'],
    entities: handlerEntities,
    events: [
      // the receipt: who holds the minted shares when the transaction ends (a router's receiver)
      ['LogMintedPosition(uint256,uint128,address,address,address,int24,int24)', 'handleMintedPositionV2', true],
      ['LogBurnedPosition(uint256,uint128,address,address,address,int24,int24)', 'handleBurnedPositionV2'],
      ...handlerEvents,
      ['LogReservedLiquidity(uint256,uint128,address)', 'handleReservedLiquidity'],
      ['LogWithdrawReservedLiquidity(uint256,uint128,address)', 'handleWithdrawReservedLiquidity'],
      // LP shares (src/lp.ts): ERC-6909
      ['Transfer(address,indexed address,indexed address,indexed uint256,uint256)', 'handleShareTransfer'],
    ],
  },
  handler1: {
    file: './src/handler.ts',
    abi: 'UniswapV3SingleTickLiquidityHandler',
    // a pool a handler names first is probed for the markets of its pair
    // (approvedPools, src/approval.ts)
    extraAbis: ['DopexV2OptionMarketV2'],
    entities: handlerEntities,
    events: [
      ['LogMintedPosition(uint256,uint128,address,address,int24,int24)', 'handleMintedPositionV1'],
      ['LogBurnedPosition(uint256,uint128,address,address,int24,int24)', 'handleBurnedPositionV1'],
      ...handlerEvents,
      // LP shares (src/lp.ts): the V1 handler's are ERC-1155
      ['TransferSingle(indexed address,indexed address,indexed address,uint256,uint256)', 'handleShareTransferSingle'],
      ['TransferBatch(indexed address,indexed address,indexed address,uint256[],uint256[])', 'handleShareTransferBatch'],
    ],
  },
};

// Templates give the mappings one stable place for the generated event
// classes (generated/templates/<Name>/), whatever the static data sources of
// a network are called (the pool's ABIs are MarketV2's, which every
// template lists).
// The position manager's mapping instantiates MarketV2, MarketV1, HandlerV2
// and HandlerV1 for contracts it whitelists that the manifest does not list;
// no data source follows a pool (its price is read by eth_call at the
// block of the event that needs it: src/common.ts poolPrice, and
// docs/subgraph.md says why); PositionManager is never
// instantiated (it gives the manager's event classes their place). A
// market is discovered after its constructor, so its template has no
// LogOptionsMarketInitialized handler: the mapping reads the market's
// immutables by eth_call instead.
const templates = [['MarketV2', 'market2'], ['MarketV1', 'market1'], ['HandlerV2', 'handler2'], ['HandlerV1', 'handler1'], ['PositionManager', 'manager']];
const notInTemplates = new Set(['handleMarketInitializedV2', 'handleMarketInitializedV1']);

function body(k, indent, template) {
  const p = ' '.repeat(indent);
  const out = [];
  out.push(`${p}mapping:`);
  out.push(`${p}  kind: ethereum/events`);
  out.push(`${p}  apiVersion: 0.0.9`);
  out.push(`${p}  language: wasm/assemblyscript`);
  out.push(`${p}  file: ${k.file}`);
  out.push(`${p}  entities:`);
  for (const e of k.entities) out.push(`${p}    - ${e}`);
  out.push(`${p}  abis:`);
  // every mapping may read a pool's tokens (common.ts ensurePool) and its
  // price (poolPrice), the latter through the slot0 ABI of the pool's DEX
  for (const a of new Set([k.abi, ...(k.extraAbis || []), 'Pool', ...Object.values(slot0Abis)])) {
    out.push(`${p}    - name: ${a}`);
    out.push(`${p}      file: ./abis/${a}.json`);
  }
  out.push(`${p}  eventHandlers:`);
  // a third element true: the handler reads the transaction receipt
  for (const [ev, h, receipt] of k.events) {
    if (template && notInTemplates.has(h)) continue;
    out.push(`${p}    - event: ${ev}`);
    out.push(`${p}      handler: ${h}`);
    if (receipt) out.push(`${p}      receipt: true`);
  }
  return out;
}

function marketKind(m) {
  if (m.version !== 1 && m.version !== 2) throw new Error(`market ${m.address}: version ${m.version}`);
  return m.version === 2 ? 'market2' : 'market1';
}

// paired throws unless a market states its pair (call and put symbols, the
// hosted API's ticker CALL/PUT, with their evidence) or says in noPair why
// its evidence names none: the gateway's ticker registry test resolves
// every stated pair, and reports every unstated one.
function paired(m) {
  const p = m.pair;
  if (p && m.noPair) throw new Error(`market ${m.address}: both pair and noPair`);
  if (p && (typeof p.call !== 'string' || !p.call || typeof p.put !== 'string' || !p.put || !p.from)) {
    throw new Error(`market ${m.address}: pair needs call, put and from`);
  }
  if (!p && !m.noPair) throw new Error(`market ${m.address}: no pair, and no noPair saying why`);
}

// supersededMarkets is a network's superseded markets, each to the market
// that replaced it (a market's `supersededBy`, with its evidence): the
// gateway marks them deprecated and resolves their ticker to the successor
// (internal/service/market hosted_tickers.go). It throws unless the
// successor is another market row of the network, itself not superseded,
// with the same pair: a successor is what the ticker then names, so it
// must be one, live, and of that ticker.
function supersededMarkets(network, n) {
  const byAddress = new Map(n.markets.map(m => [m.address.toLowerCase(), m]));
  const out = {};
  for (const m of n.markets) {
    const s = m.supersededBy;
    if (!s) continue;
    const next = typeof s.market === 'string' ? byAddress.get(s.market.toLowerCase()) : undefined;
    if (!s.from) throw new Error(`${network} market ${m.address}: supersededBy has no evidence (from)`);
    if (!next || next === m) throw new Error(`${network} market ${m.address}: supersededBy ${s.market} is no other market of the network`);
    if (next.supersededBy) throw new Error(`${network} market ${m.address}: its successor ${s.market} is superseded too; name the live one`);
    if (!m.pair || !next.pair || m.pair.call !== next.pair.call || m.pair.put !== next.pair.put) {
      throw new Error(`${network} market ${m.address}: its successor ${s.market} has another pair`);
    }
    out[m.address] = next.address;
  }
  return out;
}

// A V3 handler emits the V2 handler's events (same signatures; V3 adds
// LogUpdateWhitelistedPools, which nothing here reads), so the V2 mapping
// indexes it; reservations through position manager V2 log the same events.
function handlerKind(h) {
  if (![1, 2, 3].includes(h.version)) throw new Error(`handler ${h.address}: version ${h.version}`);
  if (!slot0Abis[h.slot0]) throw new Error(`handler ${h.address}: slot0 layout ${h.slot0} is none of ${Object.keys(slot0Abis)}`);
  return h.version === 1 ? 'handler1' : 'handler2';
}

function manifest(network) {
  const n = networks[network];
  const lines = [
    `# Generated by \`node manifest.mjs\` from networks.json (${network}, chain ${n.chainId}); edit those, not this.`,
    // 0.0.5: the lowest that carries event handlers' receipts (with apiVersion 0.0.7+)
    'specVersion: 0.0.5',
    'description: Stryke (Dopex V2) option markets and handlers, the subgraph the clamm gateway reads',
    'schema:',
    '  file: ./schema.graphql',
    'dataSources:',
  ];
  const sources = [
    ...n.positionManagers.map(m => [m, 'manager']),
    ...n.markets.map(m => [m, marketKind(m)]),
    ...n.handlers.map(h => [h, handlerKind(h)]),
  ];
  for (const [c, kind] of sources) {
    const k = kinds[kind];
    lines.push(`  - kind: ethereum/contract`, `    name: ${c.name}`, `    network: ${network}`, '    source:');
    lines.push(`      address: "${c.address.toLowerCase()}"`, `      abi: ${k.abi}`, `      startBlock: ${c.startBlock}`);
    lines.push(...body(k, 4));
  }
  lines.push('templates:');
  for (const [name, kind] of templates) {
    const k = kinds[kind];
    lines.push(`  - kind: ethereum/contract`, `    name: ${name}`, `    network: ${network}`, '    source:', `      abi: ${k.abi}`);
    lines.push(...body(k, 4, true));
  }
  return lines.join('\n') + '\n';
}

// Every network's statically indexed markets and handlers with their kind,
// and each handler's slot0 layout. Rows are per network: one wasm serves
// every network, and one address can be different contracts on two chains
// (a deployer's nonce makes the same address everywhere: 0x9fd06bb3 is a
// market on Base and a router on Sonic), so a row counts only on its own
// network (dataSource.network()).
function known() {
  const rows = [];
  const layouts = [];
  for (const [network, n] of Object.entries(networks)) {
    for (const m of n.markets) rows.push([m.address.toLowerCase(), m.version === 2 ? 'MarketV2' : 'MarketV1', network, '']);
    for (const h of n.handlers) rows.push([h.address.toLowerCase(), `HandlerV${h.version}`, network, h.slot0]);
    // a network's pools read by one layout when every handler's DEX shares it
    const own = new Set(n.handlers.map(h => h.slot0));
    layouts.push([network, own.size === 1 ? [...own][0] : '']);
  }
  return [
    '// Generated by `node manifest.mjs` from networks.json; edit that, not this.',
    '// The markets and handlers each network\'s manifest indexes as static data',
    '// sources, with their kind: the position manager\'s mapping records them and',
    '// creates no second data source for them. A handler\'s row also names the',
    '// slot0 layout of its DEX (\'\' for a market).',
    'export const KNOWN_ADDRESSES: string[] = [',
    ...rows.map(r => `  '${r[0]}',`),
    '];',
    'export const KNOWN_NETWORKS: string[] = [',
    ...rows.map(r => `  '${r[2]}',`),
    '];',
    'export const KNOWN_KINDS: string[] = [',
    ...rows.map(r => `  '${r[1]}',`),
    '];',
    'export const KNOWN_SLOT0: string[] = [',
    ...rows.map(r => `  '${r[3]}',`),
    '];',
    '// The slot0 layout every handler of a network shares, \'\' when they differ.',
    'export const NETWORKS: string[] = [',
    ...layouts.map(r => `  '${r[0]}',`),
    '];',
    'export const NETWORK_SLOT0: string[] = [',
    ...layouts.map(r => `  '${r[1]}',`),
    '];',
    '',
  ].join('\n');
}

// evidenced throws unless every row the gateway serves names its evidence
// (`from`): a default the gateway relies on is never an unexplained
// address.
function evidenced(network, what, rows) {
  for (const r of rows) {
    if (r && r.address && !r.from) throw new Error(`${network} ${what} ${r.address} has no evidence (from)`);
  }
}

// gatewayChain is one network's entry of the gateway's defaults: the
// handlers, hooks, pools and periphery of its registry rows, and what only
// the gateway uses from its `gateway` object. Keys in the order the
// gateway's configuration documents them.
function gatewayChain(network, n) {
  const g = n.gateway;
  if (!g || !g.name || !g.multicall3) throw new Error(`${network}: gateway.name and gateway.multicall3 are required`);
  const p = n.periphery || {};
  evidenced(network, 'hook', n.hooks);
  for (const m of n.markets) paired(m);
  evidenced(network, 'pool', n.pools);
  evidenced(network, 'periphery', [p.autoExerciser, p.router, p.limitOrders, ...(p.settlers || [])]);
  const c = { name: g.name, subgraphUrl: '', rpcUrl: '', multicall3: g.multicall3 };
  c.autoExerciser = p.autoExerciser?.address ?? '';
  c.router = p.router?.address ?? '';
  c.limitOrders = p.limitOrders?.address ?? '';
  if ((p.settlers || []).length > 0) c.settlers = p.settlers.map(s => s.address);
  c.handlers = {};
  for (const h of n.handlers) {
    if (!h.dex || !h.slot0 || !h.version) throw new Error(`${network} handler ${h.address} lacks its dex name, slot0 layout or version`);
    handlerKind(h);
    c.handlers[h.address] = { name: h.dex, deprecated: !!h.deprecated, version: h.version, slot0: h.slot0 };
  }
  c.hooks = Object.fromEntries(n.hooks.map(h => [h.address, { name: h.name, maxTtl: h.maxTtl }]));
  c.poolDex = Object.fromEntries(n.pools.map(p => [p.address, p.dex]));
  const superseded = supersededMarkets(network, n);
  if (Object.keys(superseded).length > 0) c.supersededMarkets = superseded;
  c.swappers = g.swappers || {};
  // the DEX quoters, each with its public source in `from` (kept here,
  // not in the defaults); a DEX named in noQuoter says why it has none
  const quoters = g.quoters || {};
  evidenced(network, 'quoter', Object.values(quoters));
  if (Object.keys(quoters).length > 0) {
    c.quoters = Object.fromEntries(Object.entries(quoters).map(([dex, q]) => [dex, { kind: q.kind, address: q.address }]));
  }
  return c;
}

// gatewayDefaults is internal/config/defaults.json: every network by chain
// id, in the registry's order, one row per handler, hook and pool.
function gatewayDefaults() {
  const row = v => JSON.stringify(v).replaceAll('":', '": ').replaceAll(',"', ', "');
  const map = (m, indent) => {
    const keys = Object.keys(m);
    if (keys.length === 0) return '{}';
    const p = ' '.repeat(indent);
    return '{\n' + keys.map(k => `${p}  ${JSON.stringify(k)}: ${row(m[k])}`).join(',\n') + `\n${p}}`;
  };
  const chains = Object.entries(networks).map(([network, n]) => {
    const c = gatewayChain(network, n);
    const fields = Object.entries(c).map(([k, v]) => {
      const text = ['handlers', 'hooks', 'poolDex', 'supersededMarkets', 'swappers', 'quoters'].includes(k) ? map(v, 6) : row(v);
      return `      ${JSON.stringify(k)}: ${text}`;
    });
    return `    "${n.chainId}": {\n${fields.join(',\n')}\n    }`;
  });
  return `{\n  "chains": {\n${chains.join(',\n')}\n  }\n}\n`;
}

if (process.argv.includes('--defaults')) {
  // the gateway's defaults on stdout, written nowhere (internal/config's
  // test compares them with the committed file)
  process.stdout.write(gatewayDefaults());
} else if (process.argv.includes('--list')) {
  // one line per network: its name and manifest, for the build script
  for (const network of Object.keys(networks)) console.log(`${network} ${manifestFile(network)}`);
} else {
  writeFileSync(new URL('./src/known.ts', import.meta.url), known());
  writeFileSync(new URL('../internal/config/defaults.json', import.meta.url), gatewayDefaults());
  for (const network of Object.keys(networks)) {
    writeFileSync(new URL(`./${manifestFile(network)}`, import.meta.url), manifest(network));
  }
}
