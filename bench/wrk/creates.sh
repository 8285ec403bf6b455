#!/usr/bin/env bash
# Keyed payment intent creates driven by wrk, the load generator of the HTTP
# floor anchor, against a payd process of its own (not the Go load generator
# in payd's process, which takes a share of the same two cores).
#   bench/wrk/creates.sh [sqlite|postgres] [CLIENTS=16] [SECONDS=10]
# postgres uses $PAYD_TEST_DATABASE_URL's server with a fresh database.
# Needs wrk (apt-get install wrk). Prints wrk's summary and the count of
# answers other than 201 (which must be 0).
set -euo pipefail
engine=${1:-sqlite}; C=${2:-16}; T=${3:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d); pid=
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; [ -n "${db:-}" ] && dropdb -h 127.0.0.1 -U postgres --if-exists "$db"; rm -rf "$dir"' EXIT
(cd "$root" && go build -o "$dir/payd" ./cmd/payd)
url="sqlite:$dir/payd.db"
if [ "$engine" = postgres ]; then
  db=payd_wrk_$$; createdb -h 127.0.0.1 -U postgres "$db"
  url="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
fi
port=$((20000 + RANDOM % 20000))
PAYD_ADDR=127.0.0.1:$port PAYD_DATABASE_URL=$url PAYD_RATE_LIMIT=0 PAYD_LOG_LEVEL=warn \
  "$dir/payd" serve >"$dir/out" 2>&1 & pid=$!
for _ in $(seq 1 100); do grep -q "secret key" "$dir/out" && curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
key=$(awk '/^ *secret key/{print $3; exit}' "$dir/out")
[ -n "$key" ] || { cat "$dir/out"; exit 1; }
wrk -t2 -c"$C" -d"${T}s" -s "$root/bench/wrk/creates.lua" "http://127.0.0.1:$port" -- "$key" "w$$"
