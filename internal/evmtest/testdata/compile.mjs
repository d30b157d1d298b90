// Compiles this repository's Solidity with solc-js at a pinned version and
// settings, writing each contract's creation code and ABI to
// <dir>/<Name>.json beside its source. CI recompiles and diffs: the
// committed bytecode is exactly what the committed source compiles to.
//
//   - internal/contracts/sol: the gateway's own contracts (ChainedRead).
//   - internal/evmtest/protocoltest/sol: the test protocol (option market,
//     position manager, handler, swappers, hooks) that the heavy tests run
//     next to the real Uniswap V3 contracts; it imports OpenZeppelin from
//     this directory's node_modules.
//
//   node compile.mjs
import fs from 'node:fs';
import path from 'node:path';
import solc from 'solc';

const modules = path.resolve(import.meta.dirname, 'node_modules');

// Imports resolve against node_modules only ("@openzeppelin/...").
function findImports(p) {
  const file = path.join(modules, p);
  if (!file.startsWith(modules + path.sep) || !fs.existsSync(file)) return { error: 'not found: ' + p };
  return { contents: fs.readFileSync(file, 'utf8') };
}

function compile(rel) {
  const dir = path.resolve(import.meta.dirname, rel);
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
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (out.errors || []).filter((e) => e.severity === 'error');
  if (errors.length) {
    for (const e of errors) console.error(e.formattedMessage);
    process.exit(1);
  }
  for (const [file, contracts] of Object.entries(out.contracts)) {
    if (!sources[file]) continue; // an import (OpenZeppelin): not ours to write
    for (const [name, c] of Object.entries(contracts)) {
      if (c.evm.bytecode.object === '' || c.abi.length === 0) continue; // interfaces, abstract contracts, internal libraries
      const artifact = { contractName: name, source: file, compiler: solc.version(), abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
      fs.writeFileSync(path.join(dir, name + '.json'), JSON.stringify(artifact, null, 2) + '\n');
    }
  }
}

compile('../../contracts/sol');
compile('../protocoltest/sol');
