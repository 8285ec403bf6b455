#!/usr/bin/env bash
# One benchmark sitting, every figure beside the anchors: ROUNDS rounds, each running
#   1. the anchors (../shared/perf/anchors.sh C T: pgbench payment+outbox, the bare net/http floor),
#   2. for every build given: SQLite keyed creates (creates.sh) and PostgreSQL create+confirm pairs (pairs.sh),
#   3. on the first build: payd's CPU per SQLite keyed create with tracing off, then on (every request sampled,
#      exported to bench/otlpsink, which discards); with SITTING_TRACING=0 this part is left out,
#   4. with SITTING_EXTRA=1: stripe-mock's creates (stripemock.sh, when installed), and for every build the
#      authenticated GET of one intent on SQLite and on PostgreSQL (get.sh) with payd's CPU per request,
#   5. the anchors again, so that each figure has an anchor reading before and after it.
# Builds rotate in every round, so a drift of the machine reaches each alike.
#   bench/wrk/sitting.sh ROUNDS C T NAME=BINARY [NAME=BINARY ...]
# Prints one line per figure, "round=R what=... build=NAME value=... unit=...", for bench/results.
set -euo pipefail
rounds=${1:?rounds}; C=${2:?clients}; T=${3:?seconds}; shift 3
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
anchors=${PAYD_ANCHORS:-$root/../shared/perf/anchors.sh}
sink=$(mktemp -d)/otlpsink
(cd "$root" && go build -o "$sink" ./bench/otlpsink)
"$sink" -addr 127.0.0.1:14318 >/dev/null 2>&1 & sinkpid=$!
trap 'kill $sinkpid 2>/dev/null' EXIT
line() { echo "round=$1 what=$2 build=$3 value=$4 unit=$5"; }
for r in $(seq 1 "$rounds"); do
  out=$("$anchors" "$C" "$T")
  line "$r" pgbench - "$(echo "$out" | awk -F'tps=' '/pgbench/{print $2}')" tps
  line "$r" floor - "$(echo "$out" | awk -F'rps=' '/floor/{print $2}')" req/s
  for b in "$@"; do
    name=${b%%=*}; bin=${b#*=}
    out=$(PAYD_BIN=$bin "$here/creates.sh" sqlite "$C" "$T")
    line "$r" sqlite_creates "$name" "$(echo "$out" | awk '/^Requests\/sec/{print $2}')" req/s
    line "$r" sqlite_creates_wrong "$name" "$(echo "$out" | awk -F': ' '/answers other than 201/{split($2, a, " "); print a[1]}')" answers
    line "$r" sqlite_creates_per_commit "$name" "$(echo "$out" | awk '/units per commit/{print $NF}')" units
    line "$r" sqlite_create_cpu "$name" "$(echo "$out" | awk '/payd CPU per create/{print $5}')" us
    out=$(PAYD_BIN=$bin "$here/pairs.sh" postgres "$C" "$T")
    read -r pps p99 wrong <<<"$(echo "$out" | awk '/^pairs /{for(i=1;i<=NF;i++){if($i=="pairs/s")p=$(i+1); if($i=="pair_p99_ms")q=$(i+1)}} /^wrong answers/{w=$3} END{print p, q, w}')"
    line "$r" postgres_pairs "$name" "$pps" pairs/s
    line "$r" postgres_pair_p99 "$name" "$p99" ms
    # The mean pair latency by Little's law: C pairs in flight.
    line "$r" postgres_pair_p99_over_mean "$name" "$(awk -v c="$C" -v r="$pps" -v q="$p99" 'BEGIN{printf "%.2f", q / (c / r * 1000)}')" ratio
    line "$r" postgres_pairs_wrong "$name" "$wrong" answers
  done
  if [ "${SITTING_EXTRA:-0}" = 1 ]; then
    out=$("$here/stripemock.sh" "$C" "$T")
    line "$r" stripemock_creates - "$(echo "$out" | awk '/^Requests\/sec/{print $2}')" req/s
    for b in "$@"; do
      name=${b%%=*}; bin=${b#*=}
      for engine in sqlite postgres; do
        out=$(PAYD_BIN=$bin "$here/get.sh" "$engine" "$C" "$T")
        line "$r" "${engine}_get" "$name" "$(echo "$out" | awk '/^Requests\/sec/{print $2}')" req/s
        line "$r" "${engine}_get_cpu" "$name" "$(echo "$out" | awk '/payd CPU per request/{print $5}')" us
      done
    done
  fi
  out=$("$anchors" "$C" "$T")
  line "$r" pgbench_after - "$(echo "$out" | awk -F'tps=' '/pgbench/{print $2}')" tps
  line "$r" floor_after - "$(echo "$out" | awk -F'rps=' '/floor/{print $2}')" req/s
  [ "${SITTING_TRACING:-1}" = 1 ] || continue
  first=${1#*=}
  for tr in off on; do
    env=()
    [ "$tr" = on ] && env=(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:14318 OTEL_TRACES_SAMPLER=always_on)
    out=$(env "${env[@]}" PAYD_BIN=$first "$here/tracing.sh" sqlite "$C" "$T")
    line "$r" "cpu_per_create_tracing_$tr" "${1%%=*}" "$(echo "$out" | awk '/CPU per create/{print $5}')" us
  done
done
