#!/usr/bin/env bash
# Renders /docs in headless Chromium against the embedded demo, checks the
# rendered page shows the three operations, and writes a screenshot.
#
#   scripts/docs-screenshot.sh [out.png]
#
# Needs Debian's chromium (installed when missing and root). Loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-docs.png}
ADDR=127.0.0.1:18095
if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null; else echo "install chromium" >&2; exit 1; fi
fi
tmp=$(mktemp -d)
go build -o "$tmp/gateway" ./cmd/clamm-gateway
CLAMM_LISTEN=$ADDR "$tmp/gateway" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do curl -fsS "http://$ADDR/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
  --disable-component-update --disable-sync --user-data-dir="$tmp/profile" --virtual-time-budget=5000)
chromium "${flags[@]}" --dump-dom "http://$ADDR/docs" > "$tmp/dom.html" 2>/dev/null
chromium "${flags[@]}" --window-size=1200,2200 --screenshot="$OUT" "http://$ADDR/docs" >/dev/null 2>&1
for op in strikesChain exerciseHistory prepareExercise; do
  grep -q "id=\"$op\"" "$tmp/dom.html" || { echo "rendered /docs lacks operation $op" >&2; exit 1; }
done
for path in /clamm/strikes-chain /clamm/exercise/history /clamm/exercise/prepare; do
  grep -q "$path" "$tmp/dom.html" || { echo "rendered /docs lacks $path" >&2; exit 1; }
done
echo "/docs shows the three operations; screenshot: $OUT"
