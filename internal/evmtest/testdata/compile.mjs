// Compiles the gateway's own Solidity (internal/contracts/sol) with solc-js
// at a pinned version and settings, writing each contract's creation code
// and ABI to internal/contracts/sol/<Name>.json. CI recompiles and diffs:
// the committed bytecode is exactly what the committed source compiles to.
//
//   node compile.mjs
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const dir = path.resolve(import.meta.dirname, '../../contracts/sol');
const sources = {};
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.sol')).sort()) {
  sources[f] = { content: fs.readFileSync(path.join(dir, f), 'utf8') };
}
const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'paris', // no PUSH0: runs on every chain the gateway serves
    metadata: { bytecodeHash: 'none' },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
for (const [file, contracts] of Object.entries(out.contracts)) {
  for (const [name, c] of Object.entries(contracts)) {
    const artifact = { contractName: name, source: file, compiler: solc.version(), abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
    fs.writeFileSync(path.join(dir, name + '.json'), JSON.stringify(artifact, null, 2) + '\n');
  }
}
