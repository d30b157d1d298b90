#!/usr/bin/env bash
# Renders /docs in headless Chromium against the embedded demo, checks the
# rendered page shows every API operation of gateway/docs/openapi.json, and
# writes a screenshot.
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
# Every /clamm/ operation the document declares: its id and its path.
ops=$(node -e 'const d = require("./gateway/docs/openapi.json");
for (const [p, v] of Object.entries(d.paths)) if (p.startsWith("/clamm/")) console.log(v.get.operationId + " " + p)')
[ -n "$ops" ] || { echo "no /clamm/ operation in gateway/docs/openapi.json" >&2; exit 1; }
while read -r op path; do
  grep -q "id=\"$op\"" "$tmp/dom.html" || { echo "rendered /docs lacks operation $op" >&2; exit 1; }
  grep -q "$path" "$tmp/dom.html" || { echo "rendered /docs lacks $path" >&2; exit 1; }
done <<< "$ops"
echo "/docs shows the $(wc -l <<< "$ops") API operations; screenshot: $OUT"
