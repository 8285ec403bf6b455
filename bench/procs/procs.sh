#!/usr/bin/env bash
# Create+confirm pairs with 1, 2 and 3 `payd serve` processes on one PostgreSQL, at 16 and 64 clients: the curve
# of pairs/s as processes are added, what each pair cost (CPU of payd and of PostgreSQL, transactions), and a check
# that the background work the processes share ran once.
#   bench/procs/procs.sh [CLIENTS=16,64] [SECONDS=10] [PROCS=1,2,3]
# For each (processes, clients): a fresh database on 127.0.0.1:5432, one merchant and one webhook endpoint on a local
# receiver answering 200 (bench/procs/receiver: kept-alive connections, so delivery keeps up with the payments and
# the deliveries of a step's events fall in its window whatever the number of processes), N `payd serve` on their
# own ports sharing the database and its secrets key (workers on in every process), and one wrk per process carrying
# its share of the clients (bench/wrk/payments.lua, pairs mode).
# Before the load each step also leaves background work for the processes to share: EXPIRING intents left in
# requires_action (PAYD_INTENT_EXPIRY=20s; the expiry job is made due once they are old enough) and SUBS customers on a
# test clock with a monthly subscription each (the clock is advanced one month after the load, so each is invoiced for
# its second period by whichever process claims the work).
# Then, with the load stopped and the webhook queue drained (up to DRAIN seconds, default 300): any event written
# twice for one object and type, any event with two deliveries to the endpoint, any event the receiver got twice, any
# intent expired twice (two payment_intent.canceled events) and any subscription invoiced twice for one period (all
# must be 0). PAYD_BIN=path runs that binary.
# HOOKS=off disables the endpoint for the load (the pairs' events go to no endpoint; it is enabled again after), so
# a step measures the pairs without their deliveries. PROFILE_DIR=dir with a binary built with -tags payd_pprof
# writes each process's CPU profile of the load window there (cpu-N-C-I.prof).
# Prints one line per step:
#   procs clients pairs/s p99_ms pairs: processes, clients, pairs/s (sum over the processes), the worst process's
#     pair p99, pairs made;
#   cpu/pair: the payd processes' CPU time per pair during the load, microseconds (summed over them; steadier than
#     pairs/s on a loaded machine); pg/pair: the same for the PostgreSQL backends serving the database;
#     tx/pair: its transactions (committed or rolled back) per pair;
#   events attempts: events written and delivery attempts made during the load; cpu/att: the payd processes' CPU per
#     attempt while the backlog drained after the load (when there was one); cpu/pex: cpu/pair less the window's
#     attempts at cpu/att, the pair without its deliveries;
#   backlog drain_s att/s: deliveries pending when the load stopped, the seconds from then to the last attempt, and
#     the attempts per second in that time (the one endpoint's delivery rate while it had a backlog);
#   dup_ev dup_del dup_recv pending expired dup_exp invoices dup_bill: the checks above, deliveries still pending
#     after the drain, intents expired (of EXPIRING), invoices (of 2 x SUBS).
set -euo pipefail
clients=${1:-16,64}; T=${2:-10}; procs=${3:-1,2,3}
EXPIRING=${EXPIRING:-50}; SUBS=${SUBS:-5}; DRAIN=${DRAIN:-300}; HOOKS=${HOOKS:-on}; PROFILE_DIR=${PROFILE_DIR:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d); pids=(); recv=
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "$recv" ] && kill "$recv" 2>/dev/null
  [ -n "${db:-}" ] && dropdb -h 127.0.0.1 -U postgres --if-exists "$db"
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'echo "procs.sh: line $LINENO exited $? (step: ${n:-} processes, ${c:-} clients)" >&2' ERR
if [ -n "${PAYD_BIN:-}" ]; then cp "$PAYD_BIN" "$dir/payd"; else (cd "$root" && go build -o "$dir/payd" ./cmd/payd); fi
(cd "$root" && go build -o "$dir/receiver" ./bench/procs/receiver)
"$dir/receiver" >"$dir/receiver.addr" 2>"$dir/receiver.log" & recv=$!
for _ in $(seq 1 100); do [ -s "$dir/receiver.addr" ] && break; sleep 0.05; done
raddr=$(head -1 "$dir/receiver.addr")
export PAYD_SECRETS_KEY=${PAYD_SECRETS_KEY:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')}
export PAYD_RATE_LIMIT=0 PAYD_LOG_LEVEL=warn PAYD_DEMO=false PAYD_SANCTIONS_LIST= PAYD_INTENT_EXPIRY=20s
psq() { psql -h 127.0.0.1 -U postgres -tAq "$db" -c "$1"; }
# api METHOD PATH [BODY]: one call to the first process with the merchant's key; prints the answer.
api() { curl -sf -X "$1" "http://127.0.0.1:${ports[0]}$2" -H "Authorization: Bearer $sk" -H 'Content-Type: application/json' \
  -H "Idempotency-Key: procs-$RANDOM$RANDOM" ${3:+-d "$3"}; }
field() { sed "s/.*\"$1\":\"\{0,1\}\([^\",]*\).*/\1/"; }
echo "uptime: $(uptime)"
tick=$(getconf CLK_TCK)
# cpu_of PIDS...: their CPU time (user + system) so far, in seconds.
cpu_of() { for p in "$@"; do cat "/proc/$p/stat" 2>/dev/null; done | awk -v t="$tick" '{s += $14 + $15} END{printf "%.2f", s / t}'; }
# xacts: the transactions the database has ended (committed or rolled back) so far; pgcpu: the CPU time of the
# PostgreSQL backends serving it, in seconds (a backend that ends within the window takes its share with it).
xacts() { psq "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"; }
pgcpu() { cpu_of $(psq "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()") 2>/dev/null || echo 0; }
row() { printf '%-5s %-7s %-7s %-6s %-6s %-8s %-7s %-7s %-6s %-8s %-7s %-7s %-7s %-7s %-5s %-6s %-7s %-8s %-7s %-7s %-7s %-8s %s\n' "$@"; }
row procs clients pairs/s p99_ms pairs cpu/pair pg/pair tx/pair events attempts cpu/att cpu/pex backlog drain_s att/s dup_ev dup_del dup_recv pending expired dup_exp invoices dup_bill
step=0
for n in ${procs//,/ }; do
  for c in ${clients//,/ }; do
    step=$((step + 1)); db=payd_procs_$$_${step}_${n}_$c; createdb -h 127.0.0.1 -U postgres "$db"
    export PAYD_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
    "$dir/payd" migrate >/dev/null 2>&1
    sk=$("$dir/payd" merchant create --name procs --json | sed 's/.*"secret_keys":\["\([^"]*\)".*/\1/')
    pids=(); ports=()
    for i in $(seq 1 "$n"); do
      port=$((20000 + RANDOM % 20000)); ports+=("$port")
      PAYD_CPUPROFILE=${PROFILE_DIR:+$PROFILE_DIR/cpu-$n-$c-$i.prof} PAYD_ADDR=127.0.0.1:$port "$dir/payd" serve >"$dir/serve$i.log" 2>&1 & pids+=($!)
    done
    for port in "${ports[@]}"; do
      for _ in $(seq 1 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
    done
    ep=$(api POST /v1/webhook_endpoints "{\"url\":\"http://$raddr/hook\",\"enabled_events\":[\"*\"]}" | field id)
    # Background work to share: intents to expire, subscriptions to invoice on a test clock.
    for i in $(seq 1 "$EXPIRING"); do
      api POST /v1/payment_intents '{"amount_minor":500,"currency":"DJF","provider":"bank_a","customer_msisdn":"+25377000001","description":"procs-expire"}' >/dev/null
    done
    expiring_since=$(date +%s)
    now=$(date +%s)
    clock=$(api POST /v1/test_helpers/test_clocks "{\"frozen_time\":$now}" | field id)
    for i in $(seq 1 "$SUBS"); do
      cus=$(api POST /v1/customers "{\"name\":\"Sub $i\",\"test_clock\":\"$clock\",\"default_payment\":{\"provider\":\"wallet_c\",\"customer_msisdn\":\"+25377123456\"}}" | field id)
      api POST /v1/subscriptions "{\"customer\":\"$cus\",\"currency\":\"DJF\",\"interval\":\"month\",\"items\":[{\"description\":\"Fibre\",\"amount_minor\":1500}]}" >/dev/null
    done
    # HOOKS=off: the endpoint is disabled for the load (events then made go to no endpoint), enabled again after.
    [ "$HOOKS" = off ] && api POST "/v1/webhook_endpoints/$ep" '{"disabled":true}' >/dev/null
    [ -n "$PROFILE_DIR" ] && kill -USR1 "${pids[@]}"
    wpids=()
    for i in $(seq 0 $((n - 1))); do
      share=$(( c / n + (i < c % n ? 1 : 0) ))
      wrk -t1 -c"$share" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:${ports[$i]}" -- "$sk" "p$$-$step-$n-$c-$i" 2 pairs \
        >"$dir/wrk$i.out" 2>&1 & wpids+=($!)
    done
    # The window starts after wrk's warm-up (payments.lua counts pairs from then on).
    sleep 2; cpu0=$(cpu_of "${pids[@]}"); t0=$(date +%s%6N); tx0=$(xacts); pg0=$(pgcpu)
    wait "${wpids[@]}"
    cpu1=$(cpu_of "${pids[@]}"); t1=$(date +%s%6N); tx1=$(xacts); pg1=$(pgcpu)
    backlog=$(psq "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")
    [ -n "$PROFILE_DIR" ] && kill -USR2 "${pids[@]}"
    [ "$HOOKS" = off ] && api POST "/v1/webhook_endpoints/$ep" '{"disabled":false}' >/dev/null
    # The work done in the window besides the pairs: attempts made (deliveries), events written.
    inwin=$(psq "SELECT count(*) FROM webhook_attempts WHERE at >= $t0 AND at < $t1")
    evwin=$(psq "SELECT count(*) FROM events WHERE created_at >= $t0 AND created_at < $t1")
    # The drain: the payd processes' CPU and the attempts made from the end of the load until nothing is pending
    # (at most DRAIN seconds), so the single-endpoint delivery rate and the CPU of one attempt are measured apart.
    dcpu0=$(cpu_of "${pids[@]}")
    rate=$(cat "$dir"/wrk*.out | awk '/^pairs /{s += $4} END{printf "%d", s}')
    p99=$(cat "$dir"/wrk*.out | awk '/^pairs /{if ($8 > m) m = $8} END{printf "%.1f", m}')
    wrong=$(cat "$dir"/wrk*.out | awk '/^wrong answers:/{s += $3} END{print s + 0}')
    # The clock moves one month (every process's workers may claim the invoicing); the expiry job is made due once
    # the intents left are past PAYD_INTENT_EXPIRY (it otherwise runs once a minute).
    api POST "/v1/test_helpers/test_clocks/$clock/advance" "{\"frozen_time\":$((now + 32 * 86400))}" >/dev/null
    sleep $(( expiring_since + 21 - $(date +%s) > 0 ? expiring_since + 21 - $(date +%s) : 0 ))
    psq "UPDATE jobs SET run_at = 0 WHERE kind = 'payment_intent.expire' AND status = 'queued'" >/dev/null
    for _ in $(seq 1 300); do
      [ "$(psq "SELECT count(*) FROM payment_intents WHERE description = 'procs-expire' AND status = 'requires_action'")" = 0 ] &&
        [ "$(psq "SELECT status FROM test_clocks WHERE id = '$clock'")" = ready ] && break
      sleep 0.2
    done
    for _ in $(seq 1 $((DRAIN * 5))); do
      [ "$(psq "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")" = 0 ] && break; sleep 0.2
    done
    dcpu1=$(cpu_of "${pids[@]}")
    # The backlog's attempts (deliveries made before the load stopped; later ones are the expiry's and billing's).
    read -r after last <<<"$(psq "SELECT count(*), COALESCE(max(a.at), 0) FROM webhook_attempts a JOIN webhook_deliveries d
      ON d.id = a.delivery_id WHERE a.at >= $t1 AND d.created_at < $t1" | tr '|' ' ')"
    dupr=$(curl -sf "http://$raddr/stats" | awk '{print $4}')
    dupev=$(psq "SELECT count(*) FROM (SELECT object_id, type FROM events GROUP BY object_id, type HAVING count(*) > 1) d")
    dupdel=$(psq "SELECT count(*) FROM (SELECT event_id, endpoint_id FROM webhook_deliveries GROUP BY event_id, endpoint_id HAVING count(*) > 1) d")
    pending=$(psq "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")
    expired=$(psq "SELECT count(*) FROM payment_intents WHERE description = 'procs-expire' AND status = 'canceled'")
    dupexp=$(psq "SELECT count(*) FROM (SELECT object_id FROM events WHERE type = 'payment_intent.canceled' GROUP BY object_id HAVING count(*) > 1) d")
    invoices=$(psq "SELECT count(*) FROM invoices")
    dupbill=$(psq "SELECT count(*) FROM (SELECT subscription_id, period_start FROM invoices GROUP BY 1, 2 HAVING count(*) > 1) d")
    pairs=$(cat "$dir"/wrk*.out | awk '/^pairs /{s += $2} END{print s + 0}')
    cpp=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$pairs" 'BEGIN{printf "%d", n ? (b - a) / n * 1e6 : 0}')
    # cpu/att: the processes' CPU per attempt during the drain; cpu/pex: CPU per pair in the window less the window's
    # attempts at that price (what the pairs cost, like with like however much delivery fell inside the window).
    read -r cpa cppx drain arate <<<"$(awk -v c="$dcpu1" -v b="$dcpu0" -v a="$after" -v w="$cpu1" -v v="$cpu0" \
      -v k="$inwin" -v n="$pairs" -v s="$t1" -v e="$last" -v q="$backlog" 'BEGIN{p = a && q ? (c - b) / a : 0
      x = n ? ((w - v) - k * p) / n * 1e6 : 0; d = a ? (e - s) / 1e6 : 0
      printf "%d %d %.1f %d", p * 1e6, x, d, (d > 0 ? a / d : 0)}')"
    read -r pgpp txpp <<<"$(awk -v a="$pg0" -v b="$pg1" -v x="$tx0" -v y="$tx1" -v n="$pairs" 'BEGIN{printf "%d %.2f", n ? (b - a) / n * 1e6 : 0, n ? (y - x) / n : 0}')"
    row "$n" "$c" "$rate" "$p99" "$pairs" "$cpp" "$pgpp" "$txpp" "$evwin" "$inwin" "$cpa" "$cppx" "$backlog" "$drain" "$arate" "$dupev" "$dupdel" "$dupr" "$pending" \
      "$expired/$EXPIRING" "$dupexp" "$invoices/$((2 * SUBS))" "$dupbill"
    [ "$wrong" = 0 ] || { echo "wrong answers: $wrong"; cat "$dir"/wrk*.out; }
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
    pids=(); dropdb -h 127.0.0.1 -U postgres --if-exists "$db"; db=
  done
done
echo "uptime: $(uptime)"
