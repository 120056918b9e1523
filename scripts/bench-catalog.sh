#!/usr/bin/env bash
# Issue 18 benchmark (docs/iceberg.md "Benchmark"): the initial sync of TABLES tables from the Iceberg REST fixture
# and an incremental sync with nothing changed: wall time of each sync, events written, time until the initial
# sync's events are projected, and the Neo4j transaction log each adds. Benchmark only, not in `make test`.
#
# Against the stack the HEADWATER_* variables name (default: the test stack, scripts/stack/stack.sh); tables are
# created through the catalog's REST API (createTable, CREATE_PARALLEL at a time (16): the fixture's sqlite catalog serialises the commits, ~0.04 s per
# table that way on a loaded 2-core machine; the fixture's namespace separator is %2E) under BENCH_PREFIX.n0000, .n0001, ... PER_NS each,
# unless CREATE=0. A `headwater serve` with its own topics projects the events. Before the incremental sync the
# Neo4j transaction log is measured over IDLE seconds with no sync (the serve process's own background writes), so
# the sync's own writes are the difference. INITIAL=0 skips the initial sync and its projection (a second
# incremental measurement over tables an earlier run synced, same BENCH_PREFIX).
#
#   TABLES=30000  PER_NS=1000  BENCH_PREFIX=bcat  CREATE=1  CREATE_PARALLEL=16  INITIAL=1  IDLE=30  OUT=loadtest/out/bench-catalog/<prefix>
set -euo pipefail
cd "$(dirname "$0")/.."
TABLES=${TABLES:-30000}; PER_NS=${PER_NS:-1000}; P=${BENCH_PREFIX:-bcat}; CREATE=${CREATE:-1}; CREATE_PARALLEL=${CREATE_PARALLEL:-16}
INITIAL=${INITIAL:-1}; IDLE=${IDLE:-30}
OUT=${OUT:-loadtest/out/bench-catalog/$P}
STATE=${HEADWATER_STATE_DIR:-$PWD/.state}
ICE=${HEADWATER_ICEBERG_URI:-http://127.0.0.1:8281}
API=127.0.0.1:8197; METRICS=127.0.0.1:9207
TXDIR=$STATE/neo4j/data/transactions/neo4j
mkdir -p "$OUT" bin "$STATE/logs"
log() { printf 'bench-catalog: %s\n' "$*" >&2; }
go build -o bin/headwater ./cmd/headwater
go build -o bin/hwload ./loadtest/cmd/hwload
bin/headwater migrate --log-level=warn

if [ "$CREATE" = 1 ]; then
  start=$(date +%s)
  n=$(( (TABLES + PER_NS - 1) / PER_NS ))
  curl -fsS -o /dev/null -X POST "$ICE/v1/namespaces" -H 'Content-Type: application/json' -d "{\"namespace\":[\"$P\"]}" || true
  for i in $(seq 0 $(( n - 1 ))); do
    ns=$(printf 'n%04d' "$i")
    curl -fsS -o /dev/null -X POST "$ICE/v1/namespaces" -H 'Content-Type: application/json' -d "{\"namespace\":[\"$P\",\"$ns\"]}" || true # 409: there already
    seq 0 $(( PER_NS - 1 )) | xargs -P "$CREATE_PARALLEL" -I{} curl -fsS -o /dev/null -X POST "$ICE/v1/namespaces/$P%2E$ns/tables" \
      -H 'Content-Type: application/json' \
      -d '{"name":"t{}","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","required":false,"type":"long"},{"id":2,"name":"payload","required":false,"type":"string"}]}}'
  done
  log "created $(( n * PER_NS )) tables in $(( $(date +%s) - start )) s"
fi

cat >"$STATE/policy-catalog.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: bench-admins
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
bindings:
  - {role: bench-admins, subjects: [bench-admin, bench-sync]}
POLICY
bin/headwater serve --http-addr="$API" --http-metrics-addr="$METRICS" \
  --authz-policy-file="$STATE/policy-catalog.yaml" --authz-policy-source=bench-catalog --archive-dir="$STATE/archive-catalog" \
  --kafka-events-topic="bench.catalog.$P" --kafka-quarantine-topic=bench.catalog.quarantine --kafka-consumer-group="bench-catalog-$P" \
  --log-format=text --log-level=warn >"$STATE/logs/serve-catalog.log" 2>&1 &
SERVE_PID=$!
trap 'kill $SERVE_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 90); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
TOKEN=$(bin/headwater token create --owner bench-sync --kind service --log-level=warn)
txlog() { bin/hwload txlog --dir "$TXDIR"; }

sync_once() { # label
  local t0 t1 tx0 tx1
  tx0=$(txlog); t0=$(date +%s.%N)
  HEADWATER_ICEBERG_GATEWAY_TOKEN=$TOKEN bin/headwater catalog sync --uri="$ICE" --name="bench-$P" --root="$P" \
    --gateway="http://$API" --log-level=warn >"$OUT/sync-$1.txt"
  t1=$(date +%s.%N)
  grep -m1 '^catalog ' "$OUT/sync-$1.txt" >&2
  echo "$1 sync_seconds=$(echo "$t1 - $t0" | bc) events=$(grep -c '^event ' "$OUT/sync-$1.txt" || true) tx_bytes_during_sync=$(( $(txlog) - tx0 ))" | tee -a "$OUT/result.txt"
}

: >"$OUT/result.txt"
if [ "$INITIAL" = 1 ]; then
sync_once initial
# projection: poll a sample of the initial sync's events until every one is projected
t0=$(date +%s.%N); tx0=$(txlog)
mapfile -t ids < <(grep '^event ' "$OUT/sync-initial.txt" | awk '{print $2}' | awk 'NR % 600 == 0')
ids+=("$(grep '^event ' "$OUT/sync-initial.txt" | tail -1 | awk '{print $2}')")
for id in "${ids[@]}"; do
  for _ in $(seq 1 1800); do
    state=$(curl -fsS "http://$API/graphql" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
      -d "{\"query\":\"{ event(id: \\\"$id\\\") { state } }\"}" | sed -n 's/.*"state":"\([A-Z_]*\)".*/\1/p')
    [ "$state" = PROJECTED ] && break
    sleep 1
  done
done
echo "initial projected_after_sync_seconds=$(echo "$(date +%s.%N) - $t0" | bc) tx_bytes_projecting=$(( $(txlog) - tx0 ))" | tee -a "$OUT/result.txt"
fi
tx0=$(txlog); sleep "$IDLE"
echo "idle seconds=$IDLE tx_bytes=$(( $(txlog) - tx0 ))" | tee -a "$OUT/result.txt"
sync_once incremental
log "results in $OUT/result.txt"
