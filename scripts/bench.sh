#!/usr/bin/env bash
# Benchmarks at the design's scale (docs/loadtest.md). Runs on its own Neo4j in the bench profile (heap 4g, page
# cache 8g) at bolt://127.0.0.1:7688 with state in .state-bench/, beside the test stack's Kafka and Redis.
#
#   scripts/bench.sh            load the history once (BENCH_PREFIX, default bench1; ~20 min), then run the
#                               query, comparison and ingest drivers and write loadtest/out/bench/
#   BENCH_SECONDS=300           duration of each query run (default 90s); ingest runs last INGEST_SECONDS (300s)
#   BENCH_PARTS="query compare ingest"   which parts to run
#
# Every result JSON/markdown/PNG states the machine (cores, memory, CPU) and the data shape it ran on.
set -euo pipefail
cd "$(dirname "$0")/.."
P=${BENCH_PREFIX:-bench1}
OUT=${BENCH_OUT:-loadtest/out/bench}
QS=${BENCH_SECONDS:-90}s
IS=${INGEST_SECONDS:-300}s
BOLT=bolt://127.0.0.1:7688
API=127.0.0.1:8180; METRICS=127.0.0.1:9190          # cache on, consumer on
API_NC=127.0.0.1:8181; METRICS_NC=127.0.0.1:9191    # cache off (uncached runs)
API_Q=127.0.0.1:8182; METRICS_Q=127.0.0.1:9192      # cache on, no consumer (cached runs while ingesting)
STATE=$PWD/.state-bench
mkdir -p "$OUT" "$STATE/logs"
log() { printf 'bench: %s\n' "$*" >&2; }

scripts/stack/stack.sh up                                            # Kafka + Redis (+ test Neo4j)
HEADWATER_STATE_DIR=$STATE HEADWATER_STACK_PROFILE=bench HEADWATER_STACK_ONLY=neo4j HEADWATER_NEO4J_BOLT_PORT=7688 \
  scripts/stack/stack.sh up
go build -o bin/headwater ./cmd/headwater
go build -o bin/hwload ./loadtest/cmd/hwload
export HEADWATER_NEO4J_URI=$BOLT
bin/headwater migrate --log-level=warn

if [ ! -f "$OUT/history-$P.json" ]; then
  log "loading the design-size history under prefix $P (once)"
  bin/hwload history --prefix "$P" --out "$OUT/history-$P.json"
fi

cat >"$STATE/policy.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: bench-admins
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
  - name: bench-prod-analysts
    grants: [{privileges: [VIEW_LINEAGE], on: {environment: prod}}]
bindings:
  - {role: bench-admins, subjects: [bench-admin, bench-producer]}
  - {role: bench-prod-analysts, subjects: [bench-analyst]}
POLICY
# Each bench run ingests fresh generator worlds into its own topic: a later run neither inherits an earlier run's
# backlog nor re-sends events into the simulated time of an earlier run's world (docs/adr/0015).
TAG=$(date -u +%m%d%H%M)
ING="$P-ing$TAG"; INGC="$P-ingc$TAG"; INGW="$P-ingw$TAG"; INGG="$P-ingg$TAG"; TOPIC="bench.events.$TAG"
ENVS=$(bin/hwload envs --prefix "$P" --prefix "$ING" --prefix "$INGC" --prefix "$INGW" --prefix "$INGG")
serve() { # api metrics redis-addr consumer-flag log
  bin/headwater serve --http-addr="$1" --http-metrics-addr="$2" --redis-addr="$3" "$4" \
    --authz-policy-file="$STATE/policy.yaml" --authz-policy-source=bench --archive-dir="$STATE/archive" \
    --identity-environments="$ENVS" --identity-default-env=prod --kafka-events-topic="$TOPIC" \
    --kafka-quarantine-topic="bench.quarantine" --kafka-consumer-group="${GROUP:-bench-projector}" \
    --log-format=text --log-level=warn >"$STATE/logs/$5.log" 2>&1 &
  echo $!
}
PIDS=()
trap 'kill ${PIDS[@]} 2>/dev/null || true' EXIT
# Servers read the grant epoch at most once a second (the default; ADR 0013).
PIDS+=("$(serve $API $METRICS 127.0.0.1:6379 --consumer serve-cached)")
PIDS+=("$(serve $API_NC $METRICS_NC "" --no-consumer serve-uncached)")
# A query-only replica with the cache (API replicas run apart from the projector, as in production).
PIDS+=("$(serve $API_Q $METRICS_Q 127.0.0.1:6379 --no-consumer serve-query)")
for a in $API $API_NC $API_Q; do
  for _ in $(seq 1 90); do curl -fsS "http://$a/readyz" >/dev/null 2>&1 && break; sleep 1; done
done
ADMIN=$(bin/headwater token create --owner bench-admin --log-level=warn)
ANALYST=$(bin/headwater token create --owner bench-analyst --kind user --log-level=warn)
PRODUCER=$(bin/headwater token create --owner bench-producer --kind producer --log-level=warn)

PARTS=${BENCH_PARTS:-"query compare ingest"}
part() { [[ " $PARTS " == *" $1 "* ]]; }
q() { # name url metrics extra-flags...
  local name=$1 url=$2 met=$3; shift 3
  log "query run $name ($QS)"
  bin/hwload query --prefix "$P" --url "http://$url/graphql" --metrics-url "$met" --duration "$QS" \
    --depth=0.2,0.2,0.2,0.2,0.2 --max-nodes 500 --out "$OUT/query-$name.json" "$@"
}
if part query; then
# Latency runs at concurrency 2 (= the cores) so queueing does not dominate; ordinary and hub roots separately.
C=${BENCH_CONCURRENCY:-2}
q uncached-dataset-ordinary $API_NC "" --token "$ADMIN" --concurrency $C --field-share 0 --cached-share 0 --hub-share 0 --as-of-share 0.15
q uncached-dataset-hub      $API_NC "" --token "$ADMIN" --concurrency $C --field-share 0 --cached-share 0 --hub-share 1 --as-of-share 0
q uncached-field-ordinary   $API_NC "" --token "$ADMIN" --concurrency $C --field-share 1 --cached-share 0 --hub-share 0 --as-of-share 0
q uncached-field-hub        $API_NC "" --token "$ADMIN" --concurrency $C --field-share 1 --cached-share 0 --hub-share 1 --as-of-share 0
q scope-admin               $API_NC "" --token "$ADMIN"   --concurrency $C --field-share 0 --cached-share 0 --hub-share 0 --as-of-share 0
q scope-narrow              $API_NC "" --token "$ANALYST" --concurrency $C --field-share 0 --cached-share 0 --hub-share 0 --as-of-share 0
# Throughput run: a mixed load at concurrency 8.
q mixed-c8 $API_NC "" --token "$ADMIN" --concurrency 8 --field-share 0.2 --cached-share 0 --hub-share 0.1 --as-of-share 0.15

q cached-ordinary $API_Q "http://$METRICS_Q/metrics" --token "$ADMIN" --concurrency $C --field-share 0.2 --cached-share 1 --as-of-share 0 --hub-share 0
log "cached query runs while ingestion runs at 200 events/s (closed loop, then open loop at 100 queries/s)"
bin/hwload ingest --prefix "$INGC" --url "http://$API" --token "$PRODUCER" --rate 200 --batch 10 --duration "$(( ${QS%s} * 2 + 10 ))s" \
  --neo-4-j-uri "$BOLT" --topic "$TOPIC" --group bench-projector --out "$OUT/ingest-during-cached.json" &
ING_PID=$!
sleep 5
q cached-during-ingest $API_Q "http://$METRICS_Q/metrics" --token "$ADMIN" --concurrency $C --field-share 0.2 --cached-share 1 --as-of-share 0 --hub-share 0.2
q cached-during-ingest-open100 $API_Q "http://$METRICS_Q/metrics" --token "$ADMIN" --concurrency 8 --rate 100 --field-share 0.2 --cached-share 1 --as-of-share 0 --hub-share 0.2
wait $ING_PID || true
fi

if part compare && bin/hwload compare --help >/dev/null 2>&1; then
  log "naive variable-length Cypher versus the expander"
  bin/hwload compare --prefix "$P" --url "http://$API_NC/graphql" --token "$ADMIN" --neo-4-j-uri "$BOLT" \
    --roots ${COMPARE_ROOTS:-10} --hub-roots ${COMPARE_HUB_ROOTS:-3} --reps 1 --naive-timeout 20s \
    --out "$OUT/compare.json" || log "compare failed (see output)"
fi

if part ingest; then
log "ingest: open loop at 600 events/s for $IS on a fresh world"
bin/hwload ingest --prefix "$ING" --url "http://$API" --token "$PRODUCER" --rate 600 --batch 10 --duration "$IS" \
  --neo-4-j-uri "$BOLT" --topic "$TOPIC" --group bench-projector --out "$OUT/ingest-open-600.json"
# Steady state (ADR 0016): a first run creates a world and finishes the runs it started, the measured run
# continues it in simulated time (its events follow the first run's and end before now; 500 events/s is ~86 s of
# simulated time per second).
IS_S=${IS%s}
S2=$(( $(date -u +%s) - IS_S * 87 - 1800 )); S1=$(( S2 - 3 * 3600 ))
log "ingest: warm world $INGW, 90 s at 600 events/s, then open loop at 500 events/s for $IS"
bin/hwload ingest --prefix "$INGW" --start "$(date -u -d @$S1 +%Y-%m-%dT%H:%M:%SZ)" --url "http://$API" \
  --token "$PRODUCER" --rate 600 --batch 10 --duration 90s --finish-runs --neo-4-j-uri "$BOLT" --topic "$TOPIC" \
  --group bench-projector --out "$OUT/ingest-warmup.json"
bin/hwload ingest --prefix "$INGW" --start "$(date -u -d @$S2 +%Y-%m-%dT%H:%M:%SZ)" --url "http://$API" \
  --token "$PRODUCER" --rate 500 --batch 10 --duration "$IS" --neo-4-j-uri "$BOLT" --topic "$TOPIC" \
  --group bench-projector --out "$OUT/ingest-warm-500.json"
# The gateway's own durable-accept rate: a server without the consumer, the rate limit off, its own topic.
log "ingest: gateway alone, closed loop for 60 s"
GW_TOPIC="bench.gateway.$TAG"
PIDS+=("$(HEADWATER_GATEWAY_RATE_PER_SECOND=0 TOPIC=$GW_TOPIC serve 127.0.0.1:8183 127.0.0.1:9193 "" --no-consumer serve-gateway)")
for _ in $(seq 1 90); do curl -fsS "http://127.0.0.1:8183/readyz" >/dev/null 2>&1 && break; sleep 1; done
bin/hwload ingest --prefix "$INGG" --url "http://127.0.0.1:8183" --token "$PRODUCER" --concurrency 32 --batch 10 \
  --duration 60s --drain 1s --brokers "" --neo-4-j-uri "$BOLT" --out "$OUT/ingest-gateway-alone.json"
# The projector alone: the main server stops consuming, a consumer-only server drains what the gateway run left
# in its topic with nothing else running; projected events are sampled from its metrics 30 s and 150 s in.
log "ingest: projector alone, draining the gateway run's topic for 150 s"
kill "${PIDS[0]}" 2>/dev/null || true
PIDS+=("$(TOPIC=$GW_TOPIC GROUP=bench-drain-$TAG serve 127.0.0.1:8184 127.0.0.1:9194 "" --consumer serve-drain)")
projected() { curl -fsS http://127.0.0.1:9194/metrics 2>/dev/null | awk '/^headwater_projector_events_total\{outcome="projected"\}/ {print int($2)}'; }
sleep 30; A=$(projected); sleep 120; B=$(projected)
echo "projector alone ($GW_TOPIC, one transaction at a time): $(( (${B:-0} - ${A:-0}) / 120 )) events/s between 30 s and 150 s" \
  | tee "$OUT/projector-alone.txt" >&2
fi
log "results in $OUT (*.json, *.md, *.png)"
