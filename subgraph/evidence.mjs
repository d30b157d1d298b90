// Re-checks networks.json against the contracts' deploy broadcasts:
//
//   node evidence.mjs <stryke-xyz/clamm checkout or bare git dir>
//
// For every row whose startBlockIs is "creation", and every periphery
// entry with a `block`, the broadcast its `from` names first
// (broadcast/<script>/<chainId>/run-<n>.json) must hold a CREATE of that
// address (transactions matched to receipts by hash) whose receipt
// succeeded at that block, on the network's chain id. Rows resting on
// other evidence are listed, not checked. It reads the broadcasts with
// `git show` when given a bare repository (the clamm mirror), from the
// work tree otherwise. Not part of CI: the checkout is not on CI machines.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const repo = process.argv[2];
if (!repo) {
  console.error('usage: node evidence.mjs <stryke-xyz/clamm checkout or bare git dir>');
  process.exit(2);
}
const bare = !existsSync(join(repo, 'broadcast'));
const read = path => (bare ? execFileSync('git', ['-C', repo, 'show', `HEAD:${path}`], { encoding: 'utf8', maxBuffer: 1 << 28 }) : readFileSync(join(repo, path), 'utf8'));

const registry = JSON.parse(readFileSync(new URL('./networks.json', import.meta.url)));
let failures = 0;
let checked = 0;
const unchecked = [];

function check(network, chainId, what, address, block, from) {
  const path = (from.match(/broadcast\/[^ ,;()]+\/run-\d+\.json/) || [])[0];
  if (!path) return fail(`${network} ${what} ${address}: 'from' names no broadcast run`);
  if (path.split('/')[2] !== String(chainId)) return fail(`${network} ${what} ${address}: ${path} is not of chain ${chainId}`);
  let run;
  try {
    run = JSON.parse(read(path));
  } catch (e) {
    return fail(`${network} ${what} ${address}: ${path}: ${e.message.split('\n')[0]}`);
  }
  const receipts = new Map((run.receipts || []).map(r => [r.transactionHash, r]));
  const tx = run.transactions.find(t => t.transactionType === 'CREATE' && t.contractAddress?.toLowerCase() === address.toLowerCase());
  if (!tx) return fail(`${network} ${what} ${address}: ${path} creates no such contract`);
  const r = tx.hash && receipts.get(tx.hash);
  if (!r) return fail(`${network} ${what} ${address}: ${path} has no receipt for its creation`);
  if (r.status !== '0x1' || parseInt(r.blockNumber, 16) !== block) {
    return fail(`${network} ${what} ${address}: receipt status ${r.status} at block ${parseInt(r.blockNumber, 16)}, registry says ${block}`);
  }
  checked++;
}

function fail(msg) {
  failures++;
  console.log(`FAIL ${msg}`);
}

for (const [network, n] of Object.entries(registry)) {
  if (network.startsWith('_')) continue;
  const rows = [
    ...n.positionManagers.map(r => ['position manager', r]),
    ...n.markets.map(r => ['market', r]),
    ...n.handlers.map(r => ['handler', r]),
  ];
  for (const [what, r] of rows) {
    if (r.startBlockIs === 'creation') check(network, n.chainId, what, r.address, r.startBlock, r.from);
    else unchecked.push(`${network} ${what} ${r.name} ${r.address}: lower bound ${r.startBlock}`);
  }
  for (const [what, p] of Object.entries(n.periphery)) {
    if (p && p.block !== undefined) check(network, n.chainId, what, p.address, p.block, p.from);
    else if (p && p.address) unchecked.push(`${network} ${what} ${p.address}: no creation receipt`);
  }
}
console.log(`${checked} creation receipts match the registry; ${failures} do not.`);
console.log(`Resting on other evidence (see each row's 'from'):\n  ${unchecked.join('\n  ')}`);
process.exit(failures ? 1 : 0);
