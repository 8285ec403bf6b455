#!/usr/bin/env bash
# Create+confirm pairs with 1, 2 and 3 `payd serve` processes on one PostgreSQL, at 16 and 64 clients: the curve
# of pairs/s as processes are added, and a check that the background work they share ran once.
#   bench/procs/procs.sh [CLIENTS=16,64] [SECONDS=10] [PROCS=1,2,3]
# For each (processes, clients): a fresh database on 127.0.0.1:5432, one merchant and one webhook endpoint (a local
# receiver answering 200), N `payd serve` on their own ports sharing the database and its secrets key (workers on in
# every process), and one wrk per process carrying its share of the clients (bench/wrk/payments.lua, pairs mode).
# Before the load each step also leaves background work for the processes to share: EXPIRING intents left in
# requires_action (PAYD_INTENT_EXPIRY=20s; the expiry job is made due once they are old enough) and SUBS customers on a
# test clock with a monthly subscription each (the clock is advanced one month after the load, so each is invoiced for
# its second period by whichever process claims the work).
# Then, with the load stopped and the webhook queue drained: any event written twice for one object and type, any
# event delivered more than once to the endpoint, any intent expired twice (two payment_intent.canceled events) and
# any subscription invoiced twice for one period (all must be 0). PAYD_BIN=path runs that binary.
# Prints one line per step: processes, clients, pairs/s (sum over the processes), the worst process's pair p99,
# the payd processes' CPU time per pair during the load (summed over them; steadier than pairs/s on a loaded machine),
# duplicate events, duplicate deliveries, deliveries still pending, intents expired (of EXPIRING) and expired twice,
# invoices (of 2 x SUBS) and periods invoiced twice.
set -euo pipefail
clients=${1:-16,64}; T=${2:-10}; procs=${3:-1,2,3}
EXPIRING=${EXPIRING:-50}; SUBS=${SUBS:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d); pids=(); recv=
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ -n "$recv" ] && kill "$recv" 2>/dev/null
  [ -n "${db:-}" ] && dropdb -h 127.0.0.1 -U postgres --if-exists "$db"
  rm -rf "$dir"
}
trap cleanup EXIT
if [ -n "${PAYD_BIN:-}" ]; then cp "$PAYD_BIN" "$dir/payd"; else (cd "$root" && go build -o "$dir/payd" ./cmd/payd); fi
rport=$((20000 + RANDOM % 20000))
python3 -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0))); self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()' "$rport" & recv=$!
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
cpu_of() { for p in "$@"; do cat "/proc/$p/stat"; done | awk -v t="$tick" '{s += $14 + $15} END{printf "%.2f", s / t}'; }
printf '%-9s %-7s %-9s %-12s %-12s %-10s %-14s %-8s %-8s %-12s %-9s %s\n' processes clients pairs/s worst_p99_ms cpu_us/pair dup_events \
  dup_deliveries pending expired dup_expiry invoices dup_billing
for n in ${procs//,/ }; do
  for c in ${clients//,/ }; do
    db=payd_procs_$$_${n}_$c; createdb -h 127.0.0.1 -U postgres "$db"
    export PAYD_DATABASE_URL="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
    "$dir/payd" migrate >/dev/null 2>&1
    sk=$("$dir/payd" merchant create --name procs --json | sed 's/.*"secret_keys":\["\([^"]*\)".*/\1/')
    pids=(); ports=()
    for i in $(seq 1 "$n"); do
      port=$((20000 + RANDOM % 20000)); ports+=("$port")
      PAYD_ADDR=127.0.0.1:$port "$dir/payd" serve >"$dir/serve$i.log" 2>&1 & pids+=($!)
    done
    for port in "${ports[@]}"; do
      for _ in $(seq 1 200); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
    done
    curl -sf -o /dev/null -X POST "http://127.0.0.1:${ports[0]}/v1/webhook_endpoints" -H "Authorization: Bearer $sk" \
      -H 'Content-Type: application/json' -d "{\"url\":\"http://127.0.0.1:$rport/hook\",\"enabled_events\":[\"*\"]}"
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
    wpids=(); cpu0=$(cpu_of "${pids[@]}")
    for i in $(seq 0 $((n - 1))); do
      share=$(( c / n + (i < c % n ? 1 : 0) ))
      wrk -t1 -c"$share" -d"${T}s" -s "$root/bench/wrk/payments.lua" "http://127.0.0.1:${ports[$i]}" -- "$sk" "p$$-$n-$c-$i" 2 pairs \
        >"$dir/wrk$i.out" 2>&1 & wpids+=($!)
    done
    wait "${wpids[@]}"
    cpu1=$(cpu_of "${pids[@]}")
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
    for _ in $(seq 1 150); do
      [ "$(psq "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")" = 0 ] && break; sleep 0.2
    done
    dupev=$(psq "SELECT count(*) FROM (SELECT object_id, type FROM events GROUP BY object_id, type HAVING count(*) > 1) d")
    dupdel=$(psq "SELECT count(*) FROM (SELECT event_id, endpoint_id FROM webhook_deliveries GROUP BY event_id, endpoint_id HAVING count(*) > 1) d")
    pending=$(psq "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'")
    expired=$(psq "SELECT count(*) FROM payment_intents WHERE description = 'procs-expire' AND status = 'canceled'")
    dupexp=$(psq "SELECT count(*) FROM (SELECT object_id FROM events WHERE type = 'payment_intent.canceled' GROUP BY object_id HAVING count(*) > 1) d")
    invoices=$(psq "SELECT count(*) FROM invoices")
    dupbill=$(psq "SELECT count(*) FROM (SELECT subscription_id, period_start FROM invoices GROUP BY 1, 2 HAVING count(*) > 1) d")
    pairs=$(cat "$dir"/wrk*.out | awk '/^pairs /{s += $2} END{print s + 0}')
    cpp=$(awk -v a="$cpu0" -v b="$cpu1" -v n="$pairs" 'BEGIN{printf "%d", n ? (b - a) / n * 1e6 : 0}')
    printf '%-9s %-7s %-9s %-12s %-12s %-10s %-14s %-8s %-8s %-12s %-9s %s\n' "$n" "$c" "$rate" "$p99" "$cpp" "$dupev" "$dupdel" "$pending" \
      "$expired/$EXPIRING" "$dupexp" "$invoices/$((2 * SUBS))" "$dupbill"
    [ "$wrong" = 0 ] || { echo "wrong answers: $wrong"; cat "$dir"/wrk*.out; }
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done
    pids=(); dropdb -h 127.0.0.1 -U postgres --if-exists "$db"; db=
  done
done
echo "uptime: $(uptime)"
