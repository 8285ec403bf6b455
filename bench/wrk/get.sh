#!/usr/bin/env bash
# Authenticated GETs driven by wrk against a payd process of its own: one
# payment intent is created, then every request reads it back
# (GET /v1/payment_intents/{id}) with the merchant's secret key, so each one
# passes the key check, the access log, the metrics and one read by primary
# key. `balance` reads GET /v1/balance instead. Prints wrk's summary and the
# count of answers other than 200 (which must be 0), and payd's own CPU time
# per request (process_cpu_seconds_total before and after), which other work
# on a shared machine disturbs far less than the rate.
#   bench/wrk/get.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10] [intent|balance]
# postgres uses the server on 127.0.0.1:5432 with a fresh database.
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}; what=${4:-intent}
. "$(dirname "$0")/serve.sh"
path=/v1/balance
if [ "$what" = intent ]; then
  id=$(curl -sf -X POST "http://127.0.0.1:$port/v1/payment_intents" -H "Authorization: Bearer $key" \
    -H "Idempotency-Key: get-$$" -H 'Content-Type: application/json' \
    -d '{"amount_minor":500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377000001"}' |
    sed 's/^{"id":"\([^"]*\)".*/\1/')
  path=/v1/payment_intents/$id
fi
cpu() { curl -sf "http://127.0.0.1:$port/metrics" | awk '/^process_cpu_seconds_total /{print $2}'; }
c0=$(cpu)
out=$(wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/get.lua" "http://127.0.0.1:$port" -- "$key" "$path")
c1=$(cpu)
echo "$out"
n=$(echo "$out" | awk '/requests in/{print $1}')
awk -v a="$c0" -v b="$c1" -v n="$n" 'BEGIN{printf "payd CPU per request: %.0f us (%.2f s for %d requests)\n", (b - a) / n * 1e6, b - a, n}'
