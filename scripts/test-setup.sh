#!/usr/bin/env bash
# Installs what `go test ./...` needs beyond Go modules, on a fresh machine:
#   - the compiled Uniswap V3 / OpenZeppelin contracts and solc-js the EVM
#     tests deploy (npm, internal/evmtest/testdata);
#   - Foundry's anvil (npm, internal/chain/testdata/anvil), a real node
#     with WebSocket subscriptions;
#   - redis-server, which the shared cache tier's tests start on loopback
#     (Debian package; installed only when missing, with sudo when not root);
#   - PostgreSQL's initdb and pg_ctl, with which the order book's tests start
#     a throw-away cluster on loopback (Debian package postgresql, likewise).
# Without them `go test ./...` still runs everything else, and the tests
# that need them skip, naming what is missing. The subgraph's compiled
# mappings are committed (subgraph/build): graph-cli is needed only to
# rebuild them after changing the subgraph (npm ci and npm run build in
# subgraph/). The README's test command is
# `scripts/test-setup.sh && go test ./...`; CI runs the same line.
set -euo pipefail
cd "$(dirname "$0")/.."

# step says what the script is about to do, then does it: a newcomer sees
# what is installed, and where a slow or failing step is.
step() { printf '== test-setup: %s\n' "$1"; }

if command -v redis-server >/dev/null; then
  step "redis-server found ($(command -v redis-server)): nothing to install"
else
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  step "redis-server is missing: installing the Debian package redis-server${sudo:+ with sudo} (apt-get update, then apt-get install redis-server)"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends redis-server
fi

if command -v pg_ctl >/dev/null || compgen -G '/usr/lib/postgresql/*/bin/pg_ctl' >/dev/null; then
  step "PostgreSQL's pg_ctl found: nothing to install"
else
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  step "PostgreSQL is missing: installing the Debian package postgresql${sudo:+ with sudo} (its initdb and pg_ctl; the tests start their own cluster, not the package's)"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends postgresql
fi

step "npm ci in internal/evmtest/testdata: the Uniswap V3 and OpenZeppelin contracts the EVM tests deploy, and solc-js (about 20 MB into its node_modules)"
npm ci --prefix internal/evmtest/testdata --no-audit --no-fund --loglevel=error
step "npm ci in internal/chain/testdata/anvil: Foundry's anvil, a real node whose WebSocket newHeads a test follows (about 45 MB)"
npm ci --prefix internal/chain/testdata/anvil --no-audit --no-fund --loglevel=error
step "done: run go test ./... (the first build compiles go-ethereum, some minutes)"
