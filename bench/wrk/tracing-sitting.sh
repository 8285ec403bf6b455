#!/usr/bin/env bash
# Tracing's cost on keyed creates, in one sitting beside the anchors: ROUNDS rounds, each running
#   1. the anchors (../shared/perf/anchors.sh C T: pgbench payment+outbox, the bare net/http floor),
#   2. payd's CPU per SQLite keyed create (bench/wrk/tracing.sh sqlite C T: process CPU ÷ creates) for three
#      setups, in an order that changes every round (a balanced Latin square: over n rounds, or 2n for an odd
#      count of setups, each setup runs in each place once and right after each other setup once), so that
#      neither a drift of the machine nor what ran just before favours one:
#        notracing  a build with -tags payd_notracing (no tracing compiled in),
#        off        the normal build, no OTLP endpoint set,
#        on         the normal build, every request sampled (always_on), exported to bench/otlpsink (discards),
#        on_before  (only when BEFORE_BINARY is given) that binary, tracing on as for "on": an earlier build.
#   bench/wrk/tracing-sitting.sh ROUNDS C T [NORMAL_BINARY NOTRACING_BINARY [BEFORE_BINARY]]
# Without binaries it builds both from this tree (CGO_ENABLED=0 -trimpath). Prints one line per figure,
# "round=R what=... build=... value=... unit=...", the ratios of each round, then the ratios' mean and median over
# the rounds ("round=all"), and the load average at the start and the end: lines for a record in bench/results.
set -euo pipefail
rounds=${1:?rounds}; C=${2:?clients}; T=${3:?seconds}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../.." && pwd)
anchors=${PAYD_ANCHORS:-$root/../shared/perf/anchors.sh}
tmp=$(mktemp -d)
sinkpid=
trap '[ -n "$sinkpid" ] && kill $sinkpid 2>/dev/null; rm -rf "$tmp"' EXIT
normal=${4:-}; notracing=${5:-}; before=${6:-}
if [ -z "$normal" ]; then
  normal=$tmp/payd; notracing=$tmp/payd-notracing
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$normal" ./cmd/payd &&
    CGO_ENABLED=0 go build -trimpath -tags payd_notracing -o "$notracing" ./cmd/payd)
fi
(cd "$root" && CGO_ENABLED=0 go build -trimpath -o "$tmp/otlpsink" ./bench/otlpsink)
"$tmp/otlpsink" -addr 127.0.0.1:14318 >"$tmp/sink.out" 2>&1 & sinkpid=$!
line() { echo "round=$1 what=$2 build=$3 value=$4 unit=$5"; }
echo "load_average_start=$(cut -d' ' -f1-3 /proc/loadavg) utc=$(date -u +%FT%TZ)"
setups=(notracing off on); ratios=(off/notracing on/notracing on/off)
[ -n "$before" ] && { setups+=(on_before); ratios+=(on_before/notracing on/on_before); }
n=${#setups[@]}
# The rows of a balanced Latin square of n (Williams): 0 1 n-1 2 n-2 ... plus i in row i; for an odd n the same
# rows reversed follow.
first=(0); for k in $(seq 1 $((n - 1))); do first+=($(( k % 2 ? (k + 1) / 2 : n - k / 2 ))); done
order() { # order ROUND: the setups' indexes in that round
  local i=$(( ($1 - 1) % (n % 2 ? 2 * n : n) )) row=() k
  for k in "${first[@]}"; do row+=($(( (k + i) % n ))); done
  if [ "$i" -ge "$n" ]; then for ((k = n - 1; k >= 0; k--)); do echo -n "${row[$k]} "; done; else echo "${row[@]}"; fi
}
declare -A cpu
for r in $(seq 1 "$rounds"); do
  out=$("$anchors" "$C" "$T")
  line "$r" pgbench - "$(echo "$out" | awk -F'tps=' '/pgbench/{print $2}')" tps
  line "$r" floor - "$(echo "$out" | awk -F'rps=' '/floor/{print $2}')" req/s
  for i in $(order "$r"); do
    s=${setups[$i]}
    env=(); bin=$normal
    [ "$s" = notracing ] && bin=$notracing
    [ "$s" = on_before ] && bin=$before
    case $s in on|on_before) env=(OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:14318 OTEL_TRACES_SAMPLER=always_on) ;; esac
    out=$(env "${env[@]}" PAYD_BIN=$bin "$here/tracing.sh" sqlite "$C" "$T")
    cpu[$r,$s]=$(echo "$out" | awk '/CPU per create/{print $5}')
    line "$r" cpu_per_create "$s" "${cpu[$r,$s]}" us
    line "$r" sqlite_creates "$s" "$(echo "$out" | awk '/^Requests\/sec/{print $2}')" req/s
    line "$r" sqlite_creates_wrong "$s" "$(echo "$out" | awk -F': ' '/answers other than 201/{split($2, a, " "); print a[1]}')" answers
  done
  for p in "${ratios[@]}"; do
    a=${p%/*}; b=${p#*/}
    line "$r" "cpu_ratio_${a}_over_$b" - "$(awk -v a="${cpu[$r,$a]}" -v b="${cpu[$r,$b]}" 'BEGIN{printf "%.3f", a / b}')" ratio
  done
done
# Mean and median over the rounds of each setup's CPU per create and of each ratio.
stats() { sort -g | awk '{v[NR]=$1; s+=$1} END{m=(NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); printf "%.3f %.3f", s/NR, m}'; }
for s in "${setups[@]}"; do
  read -r mean med <<<"$(for r in $(seq 1 "$rounds"); do echo "${cpu[$r,$s]}"; done | stats)"
  line all cpu_per_create_mean "$s" "$mean" us; line all cpu_per_create_median "$s" "$med" us
done
for p in "${ratios[@]}"; do
  a=${p%/*}; b=${p#*/}
  read -r mean med <<<"$(for r in $(seq 1 "$rounds"); do awk -v a="${cpu[$r,$a]}" -v b="${cpu[$r,$b]}" 'BEGIN{printf "%.4f\n", a / b}'; done | stats)"
  line all "cpu_ratio_${a}_over_${b}_mean" - "$mean" ratio; line all "cpu_ratio_${a}_over_${b}_median" - "$med" ratio
done
kill $sinkpid 2>/dev/null; wait $sinkpid 2>/dev/null || true; sinkpid=
echo "otlpsink_received=\"$(cat "$tmp/sink.out")\""
echo "load_average_end=$(cut -d' ' -f1-3 /proc/loadavg) utc=$(date -u +%FT%TZ)"
