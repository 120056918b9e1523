#!/usr/bin/env bash
# The query API under more concurrent work than it can run (issue 22, "Overload"): the same closed-loop lineage
# query load, from PRINCIPALS principals at CONCURRENCY requests in flight (each principal under its own 16-request
# limit), against `headwater serve` twice, in the order bound / unbounded / bound: with the process-wide in-flight
# bound (graphql-max-in-flight, default 64, queue wait 250 ms) and with it out of the way (100,000). Prints one row per
# run: served/s, refused/s, P50/P95/P99 of served and of refused answers, timeouts, peak RSS.
#
# It queries a world already in the soak's Neo4j (scripts/soak.sh; WORLD=its prefix, DATASETS=its size):
#
#   WORLD=sk...            required: the world's prefix (printed by scripts/soak.sh)
#   DATASETS=3000          its datasets
#   CONCURRENCY=192        requests in flight (hwload query --concurrency)
#   PRINCIPALS=24          user tokens the requests are spread over
#   SECONDS_PER_RUN=60
#   RETRY_AFTER=1          1: a refused client waits the Retry-After before asking again (hwload --retry-after), as
#                          the OpenLineage and catalog clients do; 0: it asks again at once
#   WARMUP=1               first a warm-up run (reported, labelled warm-up, not one of the three compared)
#   TIMEOUT=10s            hwload's per-query timeout (a request slower than this counts as a timeout)
#   OUT=dir                default loadtest/out/query-overload/<UTC time>
set -euo pipefail
cd "$(dirname "$0")/.."
: "${WORLD:?WORLD=<the soak world prefix> is required}"
DATASETS=${DATASETS:-3000}
CONCURRENCY=${CONCURRENCY:-192}
PRINCIPALS=${PRINCIPALS:-24}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-60}
TIMEOUT=${TIMEOUT:-10s}
RETRY_AFTER=${RETRY_AFTER:-1}
retry=(); [ "$RETRY_AFTER" = 1 ] && retry=(--retry-after)
OUT=${OUT:-loadtest/out/query-overload/$(date -u +%Y%m%dT%H%M%SZ)}
export HEADWATER_STATE_DIR=${HEADWATER_STATE_DIR:-$PWD/.state-soak}
export HEADWATER_NEO4J_BOLT_PORT=${HEADWATER_NEO4J_BOLT_PORT:-7987}
export HEADWATER_REDIS_PORT=${HEADWATER_REDIS_PORT:-6679}
export HEADWATER_KAFKA_PORT=${HEADWATER_KAFKA_PORT:-9392}
export HEADWATER_STACK_ONLY="redis kafka neo4j"
export HEADWATER_NEO4J_URI=bolt://127.0.0.1:$HEADWATER_NEO4J_BOLT_PORT
API=127.0.0.1:8197; METRICS=127.0.0.1:9207
STATE=$HEADWATER_STATE_DIR
mkdir -p "$OUT" "$STATE/logs" bin
scripts/stack/stack.sh up
go build -o bin/hwload ./loadtest/cmd/hwload
go build -o bin/headwater ./cmd/headwater
cat >"$STATE/policy-query-overload.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: readers
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
bindings:
  - {role: readers, subjects: [$(seq -s, -f 'reader-%g' 1 "$PRINCIPALS")]}
POLICY
ENVS=$(bin/hwload envs --prefix "$WORLD")
tokens=()
for i in $(seq 1 "$PRINCIPALS"); do
  tokens+=(--token "$(bin/headwater token create --owner "reader-$i" --kind user --log-level=warn)")
done

run() { # label max-in-flight
  bin/headwater serve --http-addr="$API" --http-metrics-addr="$METRICS" --redis-addr="127.0.0.1:$HEADWATER_REDIS_PORT" \
    --authz-policy-file="$STATE/policy-query-overload.yaml" --authz-policy-source=query-overload \
    --archive-dir="$STATE/archive-query-overload" --kafka-brokers="127.0.0.1:$HEADWATER_KAFKA_PORT" \
    --kafka-events-topic=query-overload.events --kafka-quarantine-topic=query-overload.quarantine \
    --identity-environments="$ENVS" --identity-default-env=prod --graphql-max-in-flight="$2" --log-format=text --log-level=warn >"$STATE/logs/serve-query-overload-$1.log" 2>&1 &
  local pid=$! peak=0 rss
  for _ in $(seq 1 90); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
  bin/hwload query --prefix "$WORLD" --datasets "$DATASETS" --url "http://$API/graphql" --metrics-url "http://$METRICS/metrics" \
    "${tokens[@]}" --neo-4-j-uri "$HEADWATER_NEO4J_URI" --rate 0 --concurrency "$CONCURRENCY" --timeout "$TIMEOUT" "${retry[@]}" \
    --duration "${SECONDS_PER_RUN}s" --out "$OUT/$1.json" --no-charts 2>"$STATE/logs/query-overload-$1.log" &
  local q=$!
  while kill -0 "$q" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    [ "$rss" -gt "$peak" ] && peak=$rss
    sleep 1
  done
  wait "$q" || true
  refused=$(curl -fsS "http://$METRICS/metrics" | awk '/^headwater_graphql_refused_total\{rule="max-in-flight"\}/ {print $2}')
  kill "$pid"; wait "$pid" 2>/dev/null || true
  jq -r --arg lbl "$1" --arg max "$2" --arg refused "${refused:-0}" --arg peak "$((peak / 1024))" --argjson secs "$SECONDS_PER_RUN" '.query |
    "| \($lbl) | \($max) | \(.throughputPerSec*10|round/10) | \(($refused|tonumber)/$secs*10|round/10) | \(.overall.p50Ms|round) | \(.overall.p95Ms|round) | \(.overall.p99Ms|round) | \(.errors|tostring) | \($peak) |"' "$OUT/$1.json"
}
echo "Machine: $(nproc) cores, load at the start $(cut -d' ' -f1-3 /proc/loadavg); world $WORLD ($DATASETS datasets); $CONCURRENCY in flight from $PRINCIPALS principals, ${SECONDS_PER_RUN} s per run, timeout $TIMEOUT, RETRY_AFTER=$RETRY_AFTER"
echo "| run | max in flight | answered/s (served, hwload) | refused/s (503, server metric) | P50 ms | P95 ms | P99 ms | errors by code | peak RSS MiB |"
echo "|---|---|---|---|---|---|---|---|---|"
[ "${WARMUP:-1}" = 1 ] && run warm-up 64 # Neo4j's page cache and the API's caches warmed; reported, not compared
run bound-1 64
run unbounded 100000
run bound-2 64
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
