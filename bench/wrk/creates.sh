#!/usr/bin/env bash
# Keyed payment intent creates driven by wrk, the load generator of the HTTP
# floor anchor, against a payd process of its own (not the Go load generator
# in payd's process, which takes a share of the same two cores).
#   bench/wrk/creates.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10]
# postgres uses the server on 127.0.0.1:5432 with a fresh database.
# Needs wrk (apt-get install wrk). Prints wrk's summary and the count of
# answers other than 201 (which must be 0).
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}
. "$(dirname "$0")/serve.sh"
before=$(commit_counts)
wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:$port" -- "$key" "w$$" 0 creates
report_commits "$before"
