#!/usr/bin/env bash
# A sitting comparing two builds on the authenticated GET (bench/wrk/get.sh),
# both engines, with the anchors before the first round and after every
# round: in each round the two builds run on SQLite and on PostgreSQL in an
# order that alternates between rounds (old new new old, then new old old
# new), so that neither build always runs first or on a machine warmed by
# the other.
#   bench/wrk/get-sitting.sh ROUNDS C T OLD_BINARY NEW_BINARY
# Prints one line per reading:
#   round=R engine=E build=old|new rps=... cpu_us=... non200=...
# and the anchors' lines and the load average as they are taken.
set -euo pipefail
R=${1:-2}; C=${2:-16}; T=${3:-10}; old=$4; new=$5
here=$(cd "$(dirname "$0")" && pwd)
anchors=${ANCHORS:-$here/../../../shared/perf/anchors.sh}
run() { # round engine build binary
  out=$(PAYD_BIN=$4 bash "$here/get.sh" "$2" "$C" "$T")
  rps=$(echo "$out" | awk '/^Requests\/sec/{print $2}')
  cpu=$(echo "$out" | awk '/payd CPU per request/{print $5}')
  bad=$(echo "$out" | awk '/answers other than 200/{print $5}')
  echo "round=$1 engine=$2 build=$3 rps=$rps cpu_us=$cpu non200=${bad:-?}"
}
echo "load $(uptime | sed 's/.*load average: //') at $(date -u +%H:%M:%S)"
bash "$anchors" "$C" "$T"
for r in $(seq 1 "$R"); do
  if [ $((r % 2)) = 1 ]; then order="old new new old"; else order="new old old new"; fi
  for engine in sqlite postgres; do
    for b in $order; do
      [ "$b" = old ] && bin=$old || bin=$new
      run "$r" "$engine" "$b" "$bin"
    done
  done
  echo "load $(uptime | sed 's/.*load average: //') at $(date -u +%H:%M:%S)"
  bash "$anchors" "$C" "$T"
done
