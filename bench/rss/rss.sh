#!/bin/sh
# Resident memory of a real `payd serve` under the payment-intent benchmark.
#
#   bench/rss/rss.sh [sqlite|postgres] [clients] [duration] [extra payd env, e.g. GOMEMLIMIT=off]
#
# Builds payd and bench/payments, starts `payd serve` (SQLite in a temporary
# directory, or a fresh schema of $PAYD_TEST_DATABASE_URL), drives it with
# bench/payments at the given clients, samples VmRSS every 200 ms and prints
# the peak (VmHWM) and the last sample. Run from the repository root.
set -eu
engine=${1:-sqlite}; clients=${2:-16}; duration=${3:-20s}; shift 3 2>/dev/null || true
dir=$(mktemp -d)
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; [ -n "${schema:-}" ] && psql "$PAYD_TEST_DATABASE_URL" -qc "DROP SCHEMA $schema CASCADE" >/dev/null 2>&1; rm -rf "$dir"' EXIT
go build -o "$dir/payd" ./cmd/payd
go build -o "$dir/bench" ./bench/payments
if [ "$engine" = postgres ]; then
  schema=rss_$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
  psql "$PAYD_TEST_DATABASE_URL" -qc "CREATE SCHEMA $schema"
  db="$PAYD_TEST_DATABASE_URL&search_path=$schema"
else
  db="sqlite:$dir/payd.db"
fi
export PAYD_DATABASE_URL="$db" PAYD_SECRETS_KEY=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a \
  PAYD_DEMO=false PAYD_RATE_LIMIT=0 PAYD_LOG_LEVEL=warn PAYD_SANCTIONS_LIST= PAYD_ADDR=127.0.0.1:0
sk=$("$dir/payd" merchant create --name rss --json | sed 's/.*"secret_keys":\["\([^"]*\)".*/\1/')
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
env PAYD_ADDR=127.0.0.1:$port "$@" "$dir/payd" serve >"$dir/serve.log" 2>&1 &
pid=$!
until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null; do sleep 0.1; done
( while kill -0 $pid 2>/dev/null; do awk '/VmRSS/{print $2}' /proc/$pid/status >>"$dir/samples" 2>/dev/null; sleep 0.2; done ) &
"$dir/bench" -url "http://127.0.0.1:$port" -key "$sk" -clients "$clients" -duration "$duration" 2>&1 | tail -4
echo "payd $engine, $clients clients: peak RSS $(awk '/VmHWM/{print $2/1024}' /proc/$pid/status) MB, last $(tail -1 "$dir/samples" | awk '{print $1/1024}') MB; load: $(uptime | sed 's/.*load/load/')"
