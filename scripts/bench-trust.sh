#!/usr/bin/env bash
# The trust signals on the design-size benchmark graph (issue 16, docs/trust.md): the cost the trust gaps add to a
# 3-hop lineage answer, and `coverage` P50/P99, with an inventory of EXPECTED expected jobs (default 16,000: 70 %
# of them the world's own jobs, the rest jobs that never report, each expected to write one of the world's
# datasets; `hwload inventory`).
#
# Runs against the bench Neo4j (bolt 7688, as scripts/bench.sh) holding a history world BENCH_PREFIX (loaded by
# scripts/bench.sh or `hwload history`), with `headwater serve --no-consumer` without the results cache
# (--redis-addr="") and, when the gaps are on, without their per-scope memo (--lineage-trust-gaps-ttl=-1ns), so
# every answer walks and computes its gaps (no reuse between requests). The inventory is registered first; then
# three query runs on the same roots (same seed, 3-hop only, dataset level, ordinary roots, concurrency 2), each on
# a fresh server: OFF (--lineage-disable-trust-gaps), ON, OFF2 (the drift check). Then, on the ON server,
# COVERAGE_N sequential `coverage` requests for one namespace and for everything; the inventory is retired last.
#
#   BENCH_PREFIX=...     the history world (required)
#   QS=90s               each query run's duration
#   EXPECTED=16000       expected jobs in the inventory
#   COVERAGE_N=20        coverage requests per scope
#   OUT=dir              results (default loadtest/out/bench-trust/<prefix>)
#   SCOPE_ROUND=1        also time one round of scoped trend points (0: skip)
#   BENCH_BOLT=bolt://127.0.0.1:7688  the bench Neo4j
set -euo pipefail
cd "$(dirname "$0")/.."
P=${BENCH_PREFIX:?set BENCH_PREFIX to the history world}
QS=${QS:-90s}
EXPECTED=${EXPECTED:-16000}
COVERAGE_N=${COVERAGE_N:-20}
OUT=${OUT:-loadtest/out/bench-trust/$P}
BOLT=${BENCH_BOLT:-bolt://127.0.0.1:7688}
API=127.0.0.1:8187; METRICS=127.0.0.1:9197
STATE=${BENCH_STATE:-$PWD/.state-bench}
mkdir -p "$OUT" "$STATE/logs" bin
log() { printf 'bench-trust: %s\n' "$*" >&2; }
go build -o bin/headwater ./cmd/headwater
go build -o bin/hwload ./loadtest/cmd/hwload
export HEADWATER_NEO4J_URI=$BOLT
bin/headwater migrate --log-level=warn

cat >"$STATE/policy-trust.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: bench-admins
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
bindings:
  - {role: bench-admins, subjects: [bench-admin]}
POLICY
SERVE_PID=
trap 'kill $SERVE_PID 2>/dev/null || true' EXIT
serve() { # extra serve flags...
  [ -z "$SERVE_PID" ] || { kill "$SERVE_PID"; wait "$SERVE_PID" 2>/dev/null || true; }
  bin/headwater serve --http-addr="$API" --http-metrics-addr="$METRICS" --redis-addr="" --no-consumer \
    --authz-policy-file="$STATE/policy-trust.yaml" --authz-policy-source=bench-trust \
    --identity-environments="$(bin/hwload envs --prefix "$P")" --identity-default-env=prod \
    --log-format=text --log-level=warn "$@" >>"$STATE/logs/serve-trust.log" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 90); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
}
serve --lineage-trust-gaps-ttl=-1ns
ADMIN=$(bin/headwater token create --owner bench-admin --log-level=warn)

q() { # name
  log "query run $1 ($QS, 3-hop, dataset level, ordinary roots, c=2)"
  bin/hwload query --prefix "$P" --url "http://$API/graphql" --metrics-url "" --token "$ADMIN" --duration "$QS" \
    --concurrency 2 --depth=0,0,1,0,0 --field-share 0 --cached-share 0 --hub-share 0 --as-of-share 0 \
    --max-nodes 500 --out "$OUT/query-$1.json" --no-charts
}
gql() { curl -fsS -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' "http://$API/graphql" -d "$1"; }

bin/hwload inventory --prefix "$P" --expected "$EXPECTED" --file "$OUT/inventory.json"
bin/headwater inventory register --url "http://$API" --token "$ADMIN" --source bench-trust --kind list \
  --file "$OUT/inventory.json" --log-level=warn
serve --lineage-disable-trust-gaps
q OFF
serve --lineage-trust-gaps-ttl=-1ns
q ON
NS=$(jq -r '.[0].namespace' "$OUT/inventory.json")
cov() { # label namespace-argument
  local i t
  : >"$OUT/coverage-$1.txt"
  for i in $(seq 1 "$COVERAGE_N"); do
    t=$( { /usr/bin/time -f %e curl -fsS -o /dev/null -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
      "http://$API/graphql" -d "{\"query\":\"{ coverage$2 { jobsReporting { numerator denominator } jobsInstrumented { numerator denominator } } }\"}"; } 2>&1 )
    echo "$t" >>"$OUT/coverage-$1.txt"
  done
  sort -n "$OUT/coverage-$1.txt" | awk -v l="$1" '{a[NR]=$1} END {p50=a[int((NR+1)/2)]; p99=a[NR-int(NR/100)]; printf "coverage %s: n=%d P50 %.3f s, P99 %.3f s (max %.3f s)\n", l, NR, p50, p99, a[NR]}'
}
log "coverage for namespace $NS and for everything ($COVERAGE_N sequential requests each)"
gql "{\"query\":\"{ coverage(namespace: \\\"$NS\\\") { jobsReporting { numerator denominator } jobsInstrumented { numerator denominator } } }\"}" >"$OUT/coverage-namespace.json"
gql '{"query":"{ coverage { jobsReporting { numerator denominator } jobsInstrumented { numerator denominator } } }"}' >"$OUT/coverage-all.json"
{ cov namespace "(namespace: \\\"$NS\\\")"; cov all ""; } | tee "$OUT/coverage.txt"
scope_round() { # one round of scoped trend points (ADR 0043), timed by the sampler's own gauge
  local m i
  log "a round of scoped trend points (every namespace, criticality and producer, at most trust.MaxTrendScopes)"
  serve --lineage-trust-gaps-ttl=-1ns --trust-sample-interval=20s --trust-trend-scope-interval=20s
  for i in $(seq 1 "${SCOPE_WAIT:-900}"); do
    m=$(curl -fsS "http://$METRICS/metrics" | grep -E '^headwater_trust_trend_scope' || true)
    grep -q '^headwater_trust_trend_scopes [1-9]' <<<"$m" && break
    sleep 1
  done
  echo "$m" | tee "$OUT/scope-round.txt"
}
[ "${SCOPE_ROUND:-1}" = 0 ] || scope_round
gql '{"query":"mutation { retireInventory(source: \"bench-trust\") }"}' >/dev/null
serve --lineage-disable-trust-gaps
q OFF2
for r in OFF ON OFF2; do
  jq -r --arg r "$r" '.query.overall as $o | "\($r): \($o.count) queries, P50 \($o.p50Ms*10|round/10) ms, P95 \($o.p95Ms*10|round/10) ms, P99 \($o.p99Ms*10|round/10) ms"' "$OUT/query-$r.json"
done | tee "$OUT/summary.txt"
