#!/usr/bin/env bash
# An optional third anchor: stripe-mock (Stripe's API mock, a Go HTTP server
# that validates a request against Stripe's OpenAPI description and answers a
# fixture, storing nothing) creating payment intents under wrk at C clients,
# as bench/wrk/creates.sh drives payd's keyed creates. Prints wrk's summary.
#   bench/wrk/stripemock.sh [CLIENTS=16] [SECONDS=10]
# Needs stripe-mock on PATH or in $(go env GOPATH)/bin:
#   go install github.com/stripe/stripe-mock@v0.203.0
# Without it, prints so and exits 0 (the anchor is optional).
set -euo pipefail
C=${1:-16}; T=${2:-10}
bin=$(command -v stripe-mock || true)
[ -n "$bin" ] || { [ -x "$(go env GOPATH)/bin/stripe-mock" ] && bin=$(go env GOPATH)/bin/stripe-mock; } || true
[ -n "$bin" ] || { echo "stripe-mock not installed: anchor skipped"; exit 0; }
port=$((20000 + RANDOM % 20000))
dir=$(mktemp -d); pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
"$bin" -http-addr "127.0.0.1:$port" >"$dir/out" 2>&1 & pid=$!
for _ in $(seq 1 100); do
  curl -s -o /dev/null -H 'Authorization: Bearer sk_test_123' "http://127.0.0.1:$port/v1/payment_intents" && break; sleep 0.1
done
cat >"$dir/create.lua" <<'LUA'
wrk.method = "POST"
wrk.body = "amount=500&currency=usd&payment_method_types[]=card&description=anchor"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Bearer sk_test_123"
LUA
wrk -t2 -c"$C" -d"${T}s" -s "$dir/create.lua" "http://127.0.0.1:$port/v1/payment_intents"
curl -s -o /dev/null -w 'one create answered %{http_code}\n' -X POST -H 'Authorization: Bearer sk_test_123' \
  -d 'amount=500&currency=usd&payment_method_types[]=card' "http://127.0.0.1:$port/v1/payment_intents"
