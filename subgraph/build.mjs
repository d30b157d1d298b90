// Builds the subgraph for every network of networks.json: `graph codegen`
// once (the mappings import only the templates' generated classes, which
// every manifest shares), then `graph build` of each network's manifest,
// arbitrum-one's into build/ and each other network's into build/<network>
// (the layout the mapping tests read). `npm run build` runs this.
import { execFileSync } from 'node:child_process';

const graph = new URL('./node_modules/.bin/graph', import.meta.url).pathname;
const env = { ...process.env, GRAPH_SKIP_NEW_VERSION_CHECK: 'true' };
const run = args => execFileSync(graph, args, { stdio: 'inherit', env, cwd: new URL('.', import.meta.url).pathname });

const list = execFileSync(process.execPath, [new URL('./manifest.mjs', import.meta.url).pathname, '--list'], { encoding: 'utf8' });
run(['codegen']);
for (const line of list.trim().split('\n')) {
  const [network, manifest] = line.split(' ');
  run(network === 'arbitrum-one' ? ['build', manifest] : ['build', manifest, '--output-dir', `build/${network}`]);
}
