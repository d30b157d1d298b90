#!/usr/bin/env bash
# Installs what `go test ./...` needs beyond Go modules, on a fresh machine:
#   - the compiled Uniswap V3 / OpenZeppelin contracts and solc-js the EVM
#     tests deploy (npm, internal/evmtest/testdata);
#   - graph-cli, and the subgraph built with it, whose compiled mappings the
#     mapping and pipeline tests run (npm, subgraph/);
#   - redis-server, which the shared cache tier's tests start on loopback
#     (Debian package; installed only when missing, with sudo when not root).
# The README's test command is `scripts/test-setup.sh && go test ./...`; CI
# runs the same line.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends redis-server
fi

npm ci --prefix internal/evmtest/testdata --no-audit --no-fund --loglevel=error
npm ci --prefix subgraph --no-audit --no-fund --loglevel=error
# graph-cli narrates every step on stderr: shown only when the build fails.
if ! out=$(npm run --prefix subgraph build 2>&1); then
  printf '%s\n' "$out"
  exit 1
fi
