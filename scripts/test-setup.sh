#!/usr/bin/env bash
# Installs what `go test ./...` needs beyond Go modules, on a fresh machine:
#   - the compiled Uniswap V3 / OpenZeppelin contracts and solc-js the EVM
#     tests deploy (npm, internal/evmtest/testdata);
#   - redis-server, which the shared cache tier's tests start on loopback
#     (Debian package; installed only when missing, with sudo when not root).
# Without them `go test ./...` still runs everything else, and the tests
# that need them skip, naming what is missing. The subgraph's compiled
# mappings are committed (subgraph/build): graph-cli is needed only to
# rebuild them after changing the subgraph (npm ci and npm run build in
# subgraph/). The README's test command is
# `scripts/test-setup.sh && go test ./...`; CI runs the same line.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v redis-server >/dev/null; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends redis-server
fi

npm ci --prefix internal/evmtest/testdata --no-audit --no-fund --loglevel=error
