#!/usr/bin/env bash
# Declared lineage at scale (issue 20; docs/declared-lineage.md "At scale"): a generated dbt manifest of MODELS
# models (default 5,000: 10 layers, 5 documented columns and 2 tests per model, 20 exposures) imported into a
# private stack, re-imported, its candidate's pre-release impact asked, and the candidate imported; each step's
# time and Neo4j transaction-log bytes (`hwload dbt`, drive.TxLogPosition, as bench-ingest.sh measures them).
# Not part of `make test`. Run it on a private stack (it writes a serve policy and a project into that Neo4j):
#
#   HEADWATER_STATE_DIR=$PWD/.pstate HEADWATER_NEO4J_BOLT_PORT=7697 HEADWATER_KAFKA_PORT=9097 \
#     HEADWATER_REDIS_PORT=6397 HEADWATER_STACK_ONLY="redis kafka neo4j" scripts/stack/stack.sh up
#   HEADWATER_STATE_DIR=$PWD/.pstate HEADWATER_NEO4J_BOLT_PORT=7697 HEADWATER_KAFKA_PORT=9097 \
#     HEADWATER_REDIS_PORT=6397 scripts/bench-declare.sh
#
#   MODELS=5000 LAYERS=10   the generated project's size
#   OUT=file                the result JSON (default loadtest/out/bench-declare/<UTC time>.json)
#   API_PORT=8187 METRICS_PORT=9197   the serve's ports
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=${HEADWATER_STATE_DIR:?set HEADWATER_STATE_DIR to a private stack state directory (see the header)}
BOLT_PORT=${HEADWATER_NEO4J_BOLT_PORT:?the private stack Neo4j bolt port}
KAFKA_PORT=${HEADWATER_KAFKA_PORT:?the private stack Kafka port}
REDIS_PORT=${HEADWATER_REDIS_PORT:?the private stack Redis port}
API=127.0.0.1:${API_PORT:-8187}; METRICS=127.0.0.1:${METRICS_PORT:-9197}
TAG=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-loadtest/out/bench-declare/$TAG.json}
mkdir -p "$(dirname "$OUT")" "$STATE/logs" bin
go build -o bin/headwater ./cmd/headwater
go build -o bin/hwload ./loadtest/cmd/hwload
export HEADWATER_NEO4J_URI=bolt://127.0.0.1:$BOLT_PORT
bin/headwater migrate --log-level=warn
cat >"$STATE/policy-declare.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: bench-declarers
    grants: [{privileges: [PRODUCE, DESCRIBE, VIEW_LINEAGE], on: {all: true}}]
bindings:
  - {role: bench-declarers, subjects: [anonymous]}
POLICY
bin/headwater serve --http-addr="$API" --http-metrics-addr="$METRICS" --redis-addr="127.0.0.1:$REDIS_PORT" --consumer \
  --kafka-brokers="127.0.0.1:$KAFKA_PORT" --kafka-events-topic="bench.declare.$TAG" --kafka-quarantine-topic="bench.declare.quarantine" \
  --kafka-consumer-group="bench-declare-$TAG" --authz-policy-file="$STATE/policy-declare.yaml" --authz-policy-source=bench-declare \
  --archive-dir="$STATE/archive-declare" --auth-dev-no-auth --log-format=text --log-level=warn >"$STATE/logs/serve-declare-$TAG.log" 2>&1 &
SERVE_PID=$!
trap 'kill $SERVE_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
echo "bench-declare: load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
bin/hwload dbt --url "http://$API" --neo-4-j-uri "$HEADWATER_NEO4J_URI" --tx-dir "$STATE/neo4j/data/transactions/neo4j" \
  --models "${MODELS:-5000}" --layers "${LAYERS:-10}" >"$OUT"
echo "bench-declare: load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
jq -r '.steps[] | "| \(.name) | \(.events) | \(.answerMs) | \(.projectedMs // "") | \(.txLogBytes) | \(.txLogBytesPerNode // 0 | floor) | \(.note // "") |"' "$OUT"
echo "bench-declare: $OUT" >&2
