#!/usr/bin/env bash
# Keyed payment intent creates driven by wrk, the load generator of the HTTP
# floor anchor, against a payd process of its own (not the Go load generator
# in payd's process, which takes a share of the same two cores).
#   bench/wrk/creates.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10]
# postgres uses the server on 127.0.0.1:5432 with a fresh database.
# Needs wrk (apt-get install wrk). Prints wrk's summary, the count of
# answers other than 201 (which must be 0), the units of work per commit and
# payd's own CPU time per create (process_cpu_seconds_total before and
# after), which other work on a shared machine disturbs far less than the
# rate.
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}
. "$(dirname "$0")/serve.sh"
cpu() { curl -sf "http://127.0.0.1:$port/metrics" | awk '/^process_cpu_seconds_total /{print $2}'; }
before=$(commit_counts); cpu0=$(cpu)
out=$(wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:$port" -- "$key" "w$$" 0 creates)
cpu1=$(cpu)
echo "$out"
report_commits "$before"
n=$(echo "$out" | awk '/requests in/{print $1}')
awk -v a="$cpu0" -v b="$cpu1" -v n="$n" 'BEGIN{printf "payd CPU per create: %.0f us (%.2f s for %d creates)\n", (b - a) / n * 1e6, b - a, n}'
