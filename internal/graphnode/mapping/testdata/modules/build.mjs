// Compiles each purpose-built module of the runtime's tests (the *.ts in
// this folder) to its .wasm beside it, exactly as `graph build` compiles a
// mapping: graph-cli's AssemblyScript (0.19, from subgraph/node_modules)
// with its flags (explicit start, exported runtime, the stub runtime,
// optimized, debug names) and graph-ts's global.ts, so that a module meets
// the host as the subgraph's mappings do. It then writes modules.sum: the
// sha256 of each source and of its .wasm, which TestModulesBuiltFromSource
// holds to the tree. `go generate ./internal/graphnode/mapping` runs this;
// it needs `npm ci` in subgraph/ first.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const subgraph = join(here, '..', '..', '..', '..', '..', 'subgraph');
const libs = join(subgraph, 'node_modules');
const asc = createRequire(join(subgraph, 'package.json'))('assemblyscript/cli/asc');
const global = relative(here, join(libs, '@graphprotocol', 'graph-ts', 'global', 'global.ts'));

await asc.ready;
const sha = file => createHash('sha256').update(readFileSync(join(here, file))).digest('hex');
const sums = [];
for (const src of readdirSync(here).filter(f => f.endsWith('.ts')).sort()) {
  const out = src.replace(/\.ts$/, '.wasm');
  const args = ['--explicitStart', '--exportRuntime', '--runtime', 'stub', src, global,
    '--baseDir', here, '--lib', libs, '--outFile', out, '--optimize', '--debug'];
  let failed;
  asc.main(args, { stdout: process.stdout, stderr: process.stderr }, err => { failed = err; return 0; });
  if (failed) {
    console.error(`${src}: ${failed}`);
    process.exit(1);
  }
  sums.push(`${sha(src)}  ${src}`, `${sha(out)}  ${out}`);
}
writeFileSync(join(here, 'modules.sum'), sums.join('\n') + '\n');
