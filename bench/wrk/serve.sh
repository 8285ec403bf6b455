# Sourced by the wrk scenarios: builds payd, starts it on a fresh database of
# the engine asked for ($engine: sqlite in a temporary directory, postgres a
# fresh database on 127.0.0.1:5432 dropped at exit), waits until it is ready
# and sets $port and $key (the demo merchant's secret test key). Everything
# is stopped and removed when the calling script exits. PAYD_BIN=path runs
# that binary instead of building this tree (to compare two builds in one
# sitting).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d); pid=
trap '[ -n "$pid" ] && { kill $pid 2>/dev/null; wait $pid 2>/dev/null; }; [ -n "${db:-}" ] && dropdb -h 127.0.0.1 -U postgres --if-exists "$db"; rm -rf "$dir"' EXIT
if [ -n "${PAYD_BIN:-}" ]; then cp "$PAYD_BIN" "$dir/payd"; else (cd "$root" && go build -o "$dir/payd" ./cmd/payd); fi
url="sqlite:$dir/payd.db"
if [ "$engine" = postgres ]; then
  db=payd_wrk_$$; createdb -h 127.0.0.1 -U postgres "$db"
  url="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
fi
port=$((20000 + RANDOM % 20000))
# PostgreSQL needs the key that encrypts stored secrets; a throwaway one per run.
PAYD_SECRETS_KEY=${PAYD_SECRETS_KEY:-$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')} \
PAYD_ADDR=127.0.0.1:$port PAYD_DATABASE_URL=$url PAYD_RATE_LIMIT=0 PAYD_LOG_LEVEL=warn \
  "$dir/payd" serve >"$dir/out" 2>&1 & pid=$!
for _ in $(seq 1 100); do grep -qs "secret key" "$dir/out" && curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
key=$(awk '/^ *secret key/{print $3; exit}' "$dir/out")
[ -n "$key" ] || { cat "$dir/out"; exit 1; }

# commit_counts prints payd's database commits and the units of work they
# carried so far (payd_db_commits_total, payd_db_committed_units_total).
commit_counts() {
  curl -sf "http://127.0.0.1:$port/metrics" |
    awk '/^payd_db_commits_total /{c=$2} /^payd_db_committed_units_total /{u=$2} END{printf "%d %d\n", c, u}'
}

# report_commits prints the commits and units since counts "$1" (from
# commit_counts), and the units per commit: how many units of work shared a
# commit (group commit on SQLite; 1 on PostgreSQL).
report_commits() {
  read -r c0 u0 <<<"$1"; read -r c1 u1 <<<"$(commit_counts)"
  awk -v c=$((c1 - c0)) -v u=$((u1 - u0)) 'BEGIN{printf "database commits %d, units of work committed %d, units per commit %.2f\n", c, u, (c ? u / c : 0)}'
}
