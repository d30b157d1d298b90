#!/usr/bin/env bash
# HTTP load benchmark. In one run with the same wrk settings it loads
#
#   bare-mux     a bare gorilla/mux server writing the same bytes: the
#                gateway's body and response headers, captured from a cache
#                hit (the floor issue 5's targets are measured against);
#   bare-net     a plain net/http handler (no router) writing the same
#                bytes: the floor the hit path's target is stated against;
#   bare-direct  the same server writing a large body the way the gateway
#                does (headers flushed, then the body in one write): shown
#                so the gateway's own per-request work can be told apart
#                from how its bytes reach the socket;
#   gateway      the gateway on its embedded demo with a warm cache and its
#                default JSON access log (to /dev/null), as deployed;
#
# and prints each one's throughput and p50/p99, the gateway's ratios and its
# garbage collections in each of its rounds.
#
# The machine is shared and noisy, so the servers are loaded in alternating
# rounds (bare-mux, bare-direct, gateway, bare-mux, ...) and each server's
# requests are summed over its rounds; p50/p99 are the medians of its
# rounds. Servers run pinned to CPU 1 and wrk to CPU 0, so the comparison is
# of server CPU per request, not of who wins the scheduler.
#
#   bench/load.sh [duration-per-round] [connections] [rounds] [path]
#
# BENCH_GW_ADDR, BENCH_BARE_ADDR, BENCH_DIRECT_ADDR, BENCH_NET_ADDR move the
# servers off their default ports 18081-18084. BENCH_THREADS sets wrk's
# threads (the tail target with streams: BENCH_THREADS=2 bench/load.sh 5s 64 3);
# GW_ENV adds settings to the gateway's environment (GW_ENV=CLAMM_STREAMS=true:
# streams on).
#
# Loopback only. Needs wrk (Debian package; installed when missing and root).
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${1:-5s}
CONNS=${2:-32}
ROUNDS=${3:-4}
REQ=${4:-/clamm/strikes-chain?optionMarket=0x501B03BdB431154b8Df17BF1c00756E3a8F21744&chainId=42161&callsReach=100&putsReach=100}
THREADS=${BENCH_THREADS:-1} # wrk threads (BENCH_THREADS), on CPU 0; the servers have CPU 1
# Loopback addresses of the three servers; set them to run beside another
# copy of this script (or anything else on these ports).
GW=${BENCH_GW_ADDR:-127.0.0.1:18081}
BARE=${BENCH_BARE_ADDR:-127.0.0.1:18082}
DIRECT=${BENCH_DIRECT_ADDR:-127.0.0.1:18083}
NET=${BENCH_NET_ADDR:-127.0.0.1:18084}

if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" = 0 ]; then (apt-get update -qq && apt-get install -y -qq wrk) >/dev/null; else echo "install wrk" >&2; exit 1; fi
fi

tmp=$(mktemp -d)
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"; }
pids=()
trap cleanup EXIT

go build -o "$tmp/gateway" ./cmd/clamm-gateway
go build -o "$tmp/bare" ./bench/bare

# The demo with TTLs long enough that every request is a fresh hit.
taskset -c 1 env ${GW_ENV:-} CLAMM_LISTEN=$GW CLAMM_LOG_LEVEL=${CLAMM_LOG_LEVEL:-info} CLAMM_STRIKES_TTL=1h CLAMM_HISTORY_TTL=1h CLAMM_PREPARE_TTL=1h "$tmp/gateway" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -fsS "http://$GW$REQ" -o /dev/null 2>/dev/null && break; sleep 0.1; done
curl -fsS "http://$GW$REQ" -D "$tmp/headers.txt" -o "$tmp/body.json" # a hit, as loaded
grep -q '^X-Cache: HIT' "$tmp/headers.txt" || { echo "gateway did not answer from its cache" >&2; exit 1; }
taskset -c 1 "$tmp/bare" -listen "$BARE" -path "${REQ%%\?*}" -body "$tmp/body.json" -headers "$tmp/headers.txt" &
pids+=($!)
taskset -c 1 "$tmp/bare" -listen "$DIRECT" -path "${REQ%%\?*}" -body "$tmp/body.json" -headers "$tmp/headers.txt" -direct &
pids+=($!)
taskset -c 1 "$tmp/bare" -listen "$NET" -path "${REQ%%\?*}" -body "$tmp/body.json" -headers "$tmp/headers.txt" -net &
pids+=($!)
for addr in "$BARE" "$DIRECT" "$NET"; do
  for _ in $(seq 100); do curl -fsS "http://$addr$REQ" -o /dev/null 2>/dev/null && break; sleep 0.1; done
done

run() { taskset -c 0 wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency "http://$1$REQ"; }
ms() { # wrk latency ("812.00us", "1.20ms", "1.01s") to milliseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}
parse() { # rps p50 p99
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$1")
  p50=$(ms "$(awk '$1 == "50%" {print $2}' "$1")")
  p99=$(ms "$(awk '$1 == "99%" {print $2}' "$1")")
  echo "$rps $p50 $p99"
}

bytes=$(wc -c < "$tmp/body.json")
echo "response: $bytes-byte body, $(grep -c ': ' "$tmp/headers.txt") headers; $ROUNDS alternating rounds of wrk -t$THREADS -c$CONNS -d$DURATION; $(nproc) cores"
# The gateway's garbage collections in a round (its /metrics), the tail's
# suspect: each mark phase slows the hits beside it, and the sweep after it
# kept the network unpolled (gctune.NudgeNetpoll).
gcs() { curl -fsS "http://$GW/metrics" | awk '$1 == "go_gc_duration_seconds_count" {print $2}'; }
gcrounds=()
for i in $(seq "$ROUNDS"); do
  run "$BARE" > "$tmp/bare.$i.txt"
  run "$DIRECT" > "$tmp/direct.$i.txt"
  run "$NET" > "$tmp/net.$i.txt"
  before=$(gcs)
  run "$GW" > "$tmp/gw.$i.txt"
  gcrounds+=($(($(gcs) - before)))
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
summary() { # name prefix -> "req/s p50 p99", each the median of the rounds
  local rpss=() p50s=() p99s=() rps p50 p99
  for f in "$tmp/$1".*.txt; do
    read -r rps p50 p99 < <(parse "$f")
    rpss+=("$rps"); p50s+=("$p50"); p99s+=("$p99")
  done
  echo "$(printf '%s\n' "${rpss[@]}" | median) $(printf '%s\n' "${p50s[@]}" | median) $(printf '%s\n' "${p99s[@]}" | median)"
}
read -r breq bp50 bp99 < <(summary bare)
read -r dreq dp50 dp99 < <(summary direct)
read -r nreq np50 np99 < <(summary net)
read -r greq gp50 gp99 < <(summary gw)
echo "each figure is the median of the $ROUNDS rounds"
printf '%-12s %10s %10s %10s\n' server req/s p50_ms p99_ms
printf '%-12s %10.0f %10s %10s\n' bare-mux "$breq" "$bp50" "$bp99"
printf '%-12s %10.0f %10s %10s\n' bare-direct "$dreq" "$dp50" "$dp99"
printf '%-12s %10.0f %10s %10s\n' bare-net "$nreq" "$np50" "$np99"
printf '%-12s %10.0f %10s %10s\n' gateway "$greq" "$gp50" "$gp99"
awk -v g="$greq" -v b="$breq" -v d="$dreq" -v n="$nreq" -v gp="$gp99" -v bp="$bp99" -v dp="$dp99" -v np="$np99" 'BEGIN {
  printf "throughput ratio gateway/bare-net: %.3f (target >= 1.0)\n", g/n
  printf "p99 ratio gateway/bare-net: %.3f (target <= 1.2)\n", gp/np
  printf "throughput ratio gateway/bare-mux: %.3f (target >= 0.9)\n", g/b
  printf "p99 ratio gateway/bare-mux: %.3f (target <= 1.5)\n", gp/bp
  printf "for comparison, gateway/bare-direct: throughput %.3f, p99 %.3f\n", g/d, gp/dp
}'
echo "gateway garbage collections per round: ${gcrounds[*]}"
# Each round's p99 beside its collections: whether a round's tail is the
# collector's shows here.
rounds_p99() { local f out=(); for i in $(seq "$ROUNDS"); do f="$tmp/$1.$i.txt"; out+=("$(parse "$f" | awk '{print $3}')"); done; echo "${out[*]}"; }
echo "p99 per round (ms): gateway $(rounds_p99 gw); bare-net $(rounds_p99 net)"
