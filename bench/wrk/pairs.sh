#!/usr/bin/env bash
# Create+confirm pairs driven by wrk (the floor anchor's load generator, in C,
# instead of the Go load generator sharing payd's process and cores): each
# pair is one keyed create and one plain confirm of that intent with the
# sandbox code, like bench/payments. Prints wrk's summary (its latencies are
# per request), then pairs/s and the p50/p99 of a pair, create sent to
# confirm answered, and the count of wrong answers (which must be 0).
#   bench/wrk/pairs.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10]
# postgres uses the server on 127.0.0.1:5432 with a fresh database.
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}
. "$(dirname "$0")/serve.sh"
before=$(commit_counts)
wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:$port" -- "$key" "p$$" 2 pairs
report_commits "$before"
