#!/usr/bin/env bash
# Tracing overhead: keyed payment intent creates as in creates.sh, and also
# payd's own CPU time per create (process_cpu_seconds_total before and after),
# which other work on a shared machine disturbs far less than the rate.
#   bench/wrk/tracing.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10]
# Tracing is on when OTEL_EXPORTER_OTLP_ENDPOINT is set (go run ./bench/otlpsink
# is a receiver that discards); PAYD_BIN=path runs that binary (serve.sh).
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}
. "$(dirname "$0")/serve.sh"
cpu() { curl -sf "http://127.0.0.1:$port/metrics" | awk '/^process_cpu_seconds_total /{print $2}'; }
c0=$(cpu)
out=$(wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:$port" -- "$key" "t$$" 0 creates)
c1=$(cpu)
echo "$out"
n=$(echo "$out" | awk '/requests in/{print $1}')
awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN{printf "payd CPU per create: %.0f us (%.2f s for %d requests)\n", (b - a) / n * 1e6, b - a, n}'
