#!/usr/bin/env bash
# CPU time per operation of PostgreSQL's backends and of the benchmark's own
# process (payd and its in-process load generator), for comparing two builds
# on a machine whose speed drifts: the CPU an operation costs moves less than
# the operations per second do.
#   bench/cpu/per-op.sh BENCH_BINARY [sqlite|postgres] [extra bench flags]
# BENCH_BINARY is a build of ./bench/payments (go build -o /tmp/bp ./bench/payments).
# It runs 16 clients for 10 s after 3 s of warm-up, samples /proc between the
# 4th and the 12th second, and prints ops/s, cores used and ms of CPU per op.
# postgres uses $PAYD_TEST_DATABASE_URL. Every postgres process on the machine
# is counted: run it with nothing else using the database server.
set -euo pipefail
bin=$1; engine=${2:-postgres}; shift $(( $# >= 2 ? 2 : 1 ))
case " $* " in *" -clients"*) echo "per-op.sh runs 16 clients; -clients cannot be changed" >&2; exit 2;; esac
out=$(mktemp)
"$bin" -engine "$engine" -database-url "${PAYD_TEST_DATABASE_URL:-}" -clients 16 -duration 10s -warmup 3s "$@" >"$out" 2>/dev/null & bpid=$!
ticks() { local s=0 t; for p in "$@"; do t=$(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0); s=$((s + ${t:-0})); done; echo "$s"; }
pg() { ticks $(pgrep -x postgres || true); }
sleep 4; p0=$(pg); b0=$(ticks "$bpid"); t0=$(date +%s.%N)
sleep 8; p1=$(pg); b1=$(ticks "$bpid"); t1=$(date +%s.%N)
wait "$bpid"
rate=$(awk '$1==16{print $3}' "$out"); rm -f "$out"
hz=$(getconf CLK_TCK)
awk -v r="$rate" -v p0="$p0" -v p1="$p1" -v b0="$b0" -v b1="$b1" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN{
  dt=t1-t0; pg=(p1-p0)/hz/dt; b=(b1-b0)/hz/dt
  printf "ops/s=%s postgres_cores=%.2f bench_cores=%.2f postgres_ms/op=%.3f bench_ms/op=%.3f\n", r, pg, b, pg*1000/r, b*1000/r}'
