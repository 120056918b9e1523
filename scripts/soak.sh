#!/usr/bin/env bash
# The soak (issue 22, "Overload"): one `headwater serve --consumer` with its real stack, an ingestion load and a query
# load at the same time for SOAK_SECONDS (default 600), resident memory of every process sampled from /proc every
# SAMPLE_SECONDS, errors counted. Prints one summary and writes, under OUT:
#
#   rss.csv          t_s,headwater_kib,neo4j_kib,kafka_kib,redis_kib,lag (one row per sample)
#   ingest.json      hwload ingest's result (accepted, rejected, throttled, transport errors, send-to-visible)
#   query.json       hwload query's result (latency percentiles, error rate, errors by code)
#   summary.md       the figures below, with the machine and the settings
#
# "Flat memory" is judged on the second half of the soak, after the caches have filled (ADR 0058,
# decision 4): the headwater process's RSS growth between the mean of the first and the last tenth of the second half,
# and its least-squares slope over the second half. The script exits 1 when an acknowledged event is not projected by
# the end of the drain, when any ingest request or query failed, or when that growth exceeds MAX_GROWTH_PCT.
#
# Its own stack by default (state .state-soak, Neo4j 7987, Kafka 9392, Redis 6679, the test profile's memory
# settings), so it never shares a Neo4j with the tests or another benchmark:
#
#   SOAK_SECONDS=600      how long both loads run (the warm-up runs before, not judged)
#   WARM_SECONDS=60       ingestion alone first, so the queries find a world
#   RATE=300              events/s offered (the ingestion issue's sub-saturation point on this machine)
#   QUERY_RATE=5          lineage queries/s offered (open loop; hwload query's realistic mix)
#   SAMPLE_SECONDS=5      the RSS sampling period
#   MAX_GROWTH_PCT=10     the bar for the headwater process's RSS growth over the second half
#   OUT=dir               default loadtest/out/soak/<UTC time>
#   DATASETS=3000         the generated world's datasets (the same shape for both loads; small enough that most
#                         queried roots were ingested before the queries start: a root not ingested yet answers
#                         NOT_FOUND, which is counted and reported, not judged an error)
#   SERVE_FLAGS="..."     extra flags for headwater serve
set -euo pipefail
cd "$(dirname "$0")/.."
SOAK_SECONDS=${SOAK_SECONDS:-600}
WARM_SECONDS=${WARM_SECONDS:-60}
RATE=${RATE:-300}
QUERY_RATE=${QUERY_RATE:-5}
SAMPLE_SECONDS=${SAMPLE_SECONDS:-5}
MAX_GROWTH_PCT=${MAX_GROWTH_PCT:-10}
DATASETS=${DATASETS:-3000}
TAG=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-loadtest/out/soak/$TAG}
export HEADWATER_STATE_DIR=${HEADWATER_STATE_DIR:-$PWD/.state-soak}
export HEADWATER_NEO4J_BOLT_PORT=${HEADWATER_NEO4J_BOLT_PORT:-7987}
export HEADWATER_KAFKA_PORT=${HEADWATER_KAFKA_PORT:-9392}
export HEADWATER_REDIS_PORT=${HEADWATER_REDIS_PORT:-6679}
export HEADWATER_STACK_ONLY="redis kafka neo4j"
BOLT=bolt://127.0.0.1:$HEADWATER_NEO4J_BOLT_PORT
API=127.0.0.1:8196; METRICS=127.0.0.1:9206
STATE=$HEADWATER_STATE_DIR
log() { printf 'soak: %s\n' "$*" >&2; }

mkdir -p "$STATE/logs" "$OUT" bin
scripts/stack/stack.sh up
go build -o bin/hwload ./loadtest/cmd/hwload
go build -o bin/headwater ./cmd/headwater
export HEADWATER_NEO4J_URI=$BOLT
bin/headwater migrate --log-level=warn

pid_on() { ss -ltnpH "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
NEO4J_PID=$(pid_on "$HEADWATER_NEO4J_BOLT_PORT"); KAFKA_PID=$(pid_on "$HEADWATER_KAFKA_PORT"); REDIS_PID=$(pid_on "$HEADWATER_REDIS_PORT")
rss_of() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

cat >"$STATE/policy-soak.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: soak-admins
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
bindings:
  - {role: soak-admins, subjects: [soak-admin, soak-producer]}
POLICY
WORLD=sk$(date -u +%m%d%H%M)
TOPIC="soak.events.$TAG"
ENVS=$(bin/hwload envs --prefix "$WORLD")
# shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
bin/headwater serve --http-addr="$API" --http-metrics-addr="$METRICS" --redis-addr="127.0.0.1:$HEADWATER_REDIS_PORT" --consumer \
  --authz-policy-file="$STATE/policy-soak.yaml" --authz-policy-source=soak --archive-dir="$STATE/archive-$TAG" \
  --identity-environments="$ENVS" --identity-default-env=prod --kafka-events-topic="$TOPIC" \
  --kafka-quarantine-topic="soak.quarantine.$TAG" --kafka-consumer-group="soak-$TAG" \
  --kafka-brokers="127.0.0.1:$HEADWATER_KAFKA_PORT" \
  --log-format=text --log-level=warn ${SERVE_FLAGS:-} >"$STATE/logs/serve-soak-$TAG.log" 2>&1 &
SERVE_PID=$!
SAMPLER_PID=
trap 'kill $SERVE_PID $SAMPLER_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 90); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
PRODUCER=$(bin/headwater token create --owner soak-producer --kind producer --log-level=warn)
READER=$(bin/headwater token create --owner soak-admin --kind user --log-level=warn)

lag() { curl -fsS "http://$METRICS/metrics" 2>/dev/null |
  awk '/^headwater_consumer_lag_messages/ {s += $2} END {print s + 0}'; }
START=$(date +%s)
echo "t_s,headwater_kib,neo4j_kib,kafka_kib,redis_kib,lag" >"$OUT/rss.csv"
( while kill -0 "$SERVE_PID" 2>/dev/null; do
    echo "$(( $(date +%s) - START )),$(rss_of "$SERVE_PID"),$(rss_of "$NEO4J_PID"),$(rss_of "$KAFKA_PID"),$(rss_of "$REDIS_PID"),$(lag)" >>"$OUT/rss.csv"
    sleep "$SAMPLE_SECONDS"
  done ) &
SAMPLER_PID=$!

TOTAL=$(( WARM_SECONDS + SOAK_SECONDS ))
# Simulated time as scripts/bench-ingest.sh spaces it (~0.174 s per event plus a fifth), ending six hours before now:
# --finish-runs sends the terminal events of the runs still open at the end, hours of simulated time later, and the
# gateway refuses an eventTime more than 10 minutes ahead of its clock.
T=$(( $(date -u +%s) - 21600 - RATE * TOTAL * 174 * 12 / 10000 ))
log "world $WORLD: $RATE events/s for $TOTAL s (the first $WARM_SECONDS alone), $QUERY_RATE queries/s for the last $SOAK_SECONDS s"
bin/hwload ingest --prefix "$WORLD" --datasets "$DATASETS" --url "http://$API" --token "$PRODUCER" --principal soak-producer --batch 10 \
  --neo-4-j-uri "$BOLT" --topic "$TOPIC" --metrics-url "http://$METRICS/metrics" --brokers "" \
  --start "$(date -u -d "@$T" +%Y-%m-%dT%H:%M:%SZ)" --rate "$RATE" --duration "${TOTAL}s" --drain 600s --finish-runs \
  --out "$OUT/ingest.json" --no-charts 2>"$STATE/logs/soak-ingest-$TAG.log" &
INGEST_PID=$!
sleep "$WARM_SECONDS"
bin/hwload query --prefix "$WORLD" --datasets "$DATASETS" --url "http://$API/graphql" --metrics-url "http://$METRICS/metrics" --token "$READER" \
  --neo-4-j-uri "$BOLT" --rate "$QUERY_RATE" --duration "${SOAK_SECONDS}s" \
  --out "$OUT/query.json" --no-charts 2>"$STATE/logs/soak-query-$TAG.log" || log "hwload query exited $?"
wait "$INGEST_PID" || log "hwload ingest exited $?"
kill "$SAMPLER_PID" 2>/dev/null || true

# The judgement: the second half of the soak window (after the warm-up), headwater's RSS.
summary=$(awk -F, -v w="$WARM_SECONDS" -v s="$SOAK_SECONDS" -v bar="$MAX_GROWTH_PCT" 'NR > 1 && $1 >= w + s / 2 && $1 <= w + s {
    n++; t[n] = $1; r[n] = $2; if ($2 > peak) peak = $2 }
  END {
    if (n < 4) { print "FAIL too few samples in the second half"; exit }
    k = int(n / 10); if (k < 1) k = 1
    # means of the first and the last tenth
    for (i = 1; i <= k; i++) { first += r[i] / k; last += r[n - k + i] / k }
    for (i = 1; i <= n; i++) { st += t[i]; sr += r[i]; stt += t[i] * t[i]; str += t[i] * r[i] }
    slope = (n * str - st * sr) / (n * stt - st * st) # KiB per second
    growth = (last - first) * 100 / first
    printf "%s first=%.0f last=%.0f peak=%.0f growth_pct=%.2f slope_mib_per_min=%.3f samples=%d\n",
      (growth <= bar ? "PASS" : "FAIL"), first / 1024, last / 1024, peak / 1024, growth, slope * 60 / 1024, n }' "$OUT/rss.csv")
ingest=$(jq -r '.ingest | "sent=\(.sent) accepted=\(.accepted) rejected=\(.rejected) throttled=\(.throttledAttempts) transport_errors=\(.transportErrors) not_visible=\(.notVisible) s2v_p50_ms=\(.visibleLatency.p50Ms|round) s2v_p99_ms=\(.visibleLatency.p99Ms|round) max_lag=\(.maxLag)"' "$OUT/ingest.json")
query=$(jq -r '.query | "throughput=\(.throughputPerSec*100|round/100) error_rate=\(.errorRate) errors=\(.errors|tostring) p50_ms=\(.overall.p50Ms|round) p95_ms=\(.overall.p95Ms|round) p99_ms=\(.overall.p99Ms|round)"' "$OUT/query.json")
peaks=$(awk -F, 'NR > 1 { for (i = 2; i <= 5; i++) if ($i > p[i]) p[i] = $i } END { printf "headwater=%.0f neo4j=%.0f kafka=%.0f redis=%.0f MiB", p[2]/1024, p[3]/1024, p[4]/1024, p[5]/1024 }' "$OUT/rss.csv")
{
  echo "# Soak $TAG"
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load at the end $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Settings: a world of $DATASETS datasets; RATE=$RATE events/s (batches of 10) for $TOTAL s, the first $WARM_SECONDS s alone; QUERY_RATE=$QUERY_RATE/s for $SOAK_SECONDS s;"
  echo "RSS sampled every $SAMPLE_SECONDS s; stack: the test profile (Neo4j heap 512 MiB, page cache 256 MiB); serve flags: ${SERVE_FLAGS:-none}."
  echo
  echo "- headwater RSS over the second half (MiB): $summary"
  echo "- peak RSS over the whole run: $peaks"
  echo "- ingest: $ingest"
  echo "- queries: $query"
} >"$OUT/summary.md"
cat "$OUT/summary.md"
fail=0
[[ $summary == PASS* ]] || { log "memory not flat: $summary"; fail=1; }
jq -e '.ingest | .rejected == 0 and .transportErrors == 0 and .notVisible == 0' "$OUT/ingest.json" >/dev/null || { log "ingest errors or unprojected events"; fail=1; }
jq -e '.query | [.errors | to_entries[] | select(.key != "NOT_FOUND") | .value] | add // 0 | . == 0' "$OUT/query.json" >/dev/null ||
  { log "query errors other than NOT_FOUND"; fail=1; }
exit "$fail"
