#!/usr/bin/env bash
# The warm-world ingestion procedure (docs/adr/0038): every step of the ingestion-cost work is measured with it.
# Runs on the bench Neo4j (bench profile, bolt 7688, state in .state-bench/, as scripts/bench.sh) beside the test
# stack's Kafka and Redis, against one `headwater serve --consumer`, and prints one table row per run:
#
#   offered/s | projected/s | lag trend | receive-to-visible P50/P95/P99 | send-to-visible P99 (1 Hz sample) |
#   CPU ms/event by process and all-in | tx-log KB/event | load average
#
# Procedure: a warm-up run creates world $WORLD (90 s at 600 events/s, --finish-runs, simulated time hours back);
# the measured runs continue it in simulated time, each after the previous one and ending before now: 300/s,
# 500/s, a closed-loop ceiling (a 30,000-event corpus as fast as the gateway takes it; projected/s over the time
# to project all of it), then 1,000/s. Each measured run sends a corpus generated before its clock starts (the
# generator is off the measured path), reads lag and receive-to-visible from the projector's metrics at 1 Hz,
# CPU by process from /proc and the Neo4j transaction log's growth, and drains before the next run.
#
#   HEADWATER_BIN=path    the headwater binary to measure (default: built from this tree into bin/)
#   LABEL=name            names the results (default: the binary's git describe, or "local")
#   WORLD=prefix          the world's prefix (default: bi<MMDDHHMM>)
#   RUN_SECONDS=90        each open-loop measured run's sending time
#   WARM_SECONDS=90       the warm-up's sending time (0: none; WORLD was warmed by an earlier invocation)
#   RUNS="300 500 closed 1000"   which measured runs, in order
#   CLOSED_EVENTS=30000   the closed-loop run's corpus; HIGH_SECONDS (default RUN_SECONDS) the 1,000/s run's time
#   OUT=dir               where result JSON goes (default loadtest/out/bench-ingest/$LABEL)
#   SERVE_FLAGS="..."     extra flags for headwater serve (e.g. --consumer-batch-wait=500ms)
#   FINISH_RUNS=1         each measured run also ends the runs it started (--finish-runs), so it leaves no open
#                         run behind: an open run pins its job's checkpoint for 24 h of event time, and every
#                         later event of the job folds all runs since (each run on the world then costs more than
#                         the one before, whatever the build; docs/adr/0040-ingest-cpu-bisect.md)
#   KAFKA_PORT=9092       the Kafka to use (e.g. one of the bench's own: HEADWATER_STACK_ONLY=kafka
#                         HEADWATER_KAFKA_PORT=9094 HEADWATER_STATE_DIR=.state-bench scripts/stack/stack.sh up)
#   BOLT_PORT=7688, REDIS_PORT=6379, API_PORT=8186, METRICS_PORT=9196, BENCH_PROFILE=bench
#                         a private stack's ports (with BENCH_STATE its state directory: the Neo4j on BOLT_PORT must
#                         keep its transaction log in $BENCH_STATE/neo4j), so two series can run side by side;
#                         BENCH_PROFILE is the stack profile the bench Neo4j starts with when none listens there
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=${BENCH_STATE:-$PWD/.state-bench}   # BENCH_STATE: another bench state directory (its Neo4j on 7688)
BOLT_PORT=${BOLT_PORT:-7688}; REDIS_PORT=${REDIS_PORT:-6379}
BOLT=bolt://127.0.0.1:$BOLT_PORT
API=127.0.0.1:${API_PORT:-8186}; METRICS=127.0.0.1:${METRICS_PORT:-9196}
RUN_SECONDS=${RUN_SECONDS:-90}
WARM_SECONDS=${WARM_SECONDS:-90}
RUNS=${RUNS:-"300 500 closed 1000"}
TAG=$(date -u +%m%d%H%M)
WORLD=${WORLD:-bi$TAG}
log() { printf 'bench-ingest: %s\n' "$*" >&2; }
# cpu_of PID: CPU seconds of a process so far (user + system, /proc/PID/stat fields 14 and 15).
cpu_of() { awk '{ sub(/.*\) /, ""); print ($12 + $13) / 100 }' "/proc/$1/stat"; }
# Kafka and Redis are shared with other work on this machine: their CPU rate while this benchmark is idle is
# measured for BG_SECONDS before each run and subtracted (the "net" columns).
BG_SECONDS=${BG_SECONDS:-15}
background() { # -> "kafka-cores redis-cores"
  local k0 r0 k1 r1
  k0=$(cpu_of "$KAFKA_PID"); r0=$(cpu_of "$REDIS_PID"); sleep "$BG_SECONDS"; k1=$(cpu_of "$KAFKA_PID"); r1=$(cpu_of "$REDIS_PID")
  awk -v k0="$k0" -v k1="$k1" -v r0="$r0" -v r1="$r1" -v s="$BG_SECONDS" 'BEGIN { printf "%.4f %.4f\n", (k1 - k0) / s, (r1 - r0) / s }'
}
row() { # result.json offered kafka-background-cores redis-background-cores
  jq -r --arg offered "$2" --argjson kbg "$3" --argjson rbg "$4" '.ingest as $i | $i.cost as $c |
    ($c.windowSeconds * 1000 / ([$c.projected, 1] | max)) as $msw |
    (($c.cpuMsPerEvent.kafka // 0) - $kbg * $msw) as $kn | (($c.cpuMsPerEvent.redis // 0) - $rbg * $msw) as $rn |
    [$offered, ($c.projectedPerSec|floor), ($c.projectedPerSecWindow|floor), ($c.lagTrendPerSec*10|round/10), $c.lagMaxWhileSending,
     ($c.receiveToVisible.p50Ms|round), ($c.receiveToVisible.p95Ms|round), ($c.receiveToVisible.p99Ms|round),
     ($i.visibleLatency.p99Ms|round),
     ($c.cpuMsPerEvent.headwater*1000|round/1000), ($c.cpuMsPerEvent.neo4j*1000|round/1000),
     ($c.cpuMsPerEvent.kafka*1000|round/1000), ($kn*1000|round/1000), ($rn*1000|round/1000),
     ($c.allInMsPerEvent*1000|round/1000), (($c.cpuMsPerEvent.headwater + $c.cpuMsPerEvent.neo4j + $kn + $rn)*1000|round/1000),
     ($c.generatorMsPerEvent*1000|round/1000),
     ($c.txLogKBPerEvent*100|round/100), "\($c.loadAvg1.start)/\($c.loadAvg1.end)"] | "| " + join(" | ") + " |"' "$1"
}
HEADER="| offered/s | projected/s (send) | projected/s (window) | lag trend /s | lag max | r2v P50 ms | r2v P95 ms | r2v P99 ms | s2v P99 ms (1 Hz) | headwater ms/ev | neo4j ms/ev | kafka ms/ev (raw) | kafka ms/ev (net) | redis ms/ev (net) | all-in ms/ev (raw) | all-in ms/ev (net) | hwload ms/ev | tx-log KB/ev | load 1m start/end |"

# `scripts/bench-ingest.sh rows DIR` prints the table again from a finished series' results (run-*.json and the
# background CPU rates saved beside them).
if [ "${1:-}" = rows ]; then
  echo "$HEADER"; echo "|$(printf '%.0s---|' $(seq 1 19))"
  for r in ${RUNS}; do
    [ -f "$2/run-$r.json" ] || continue
    read -r KBG RBG <"$2/background-$r.txt" 2>/dev/null || { KBG=0; RBG=0; }
    row "$2/run-$r.json" "$r" "$KBG" "$RBG"
  done
  exit 0
fi

mkdir -p "$STATE/logs" bin
HEADWATER_STATE_DIR=$STATE HEADWATER_STACK_PROFILE=${BENCH_PROFILE:-bench} HEADWATER_STACK_ONLY=neo4j HEADWATER_NEO4J_BOLT_PORT=$BOLT_PORT \
  scripts/stack/stack.sh up
go build -o bin/hwload ./loadtest/cmd/hwload
if [ -z "${HEADWATER_BIN:-}" ]; then
  go build -o bin/headwater ./cmd/headwater
  HEADWATER_BIN=bin/headwater
fi
LABEL=${LABEL:-local}
OUT=${OUT:-loadtest/out/bench-ingest/$LABEL}
mkdir -p "$OUT"
export HEADWATER_NEO4J_URI=$BOLT
"$HEADWATER_BIN" migrate --log-level=warn

pid_on() { ss -ltnpH "sport = :$1" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1; }
NEO4J_PID=$(pid_on "$BOLT_PORT"); KAFKA_PID=$(pid_on "${KAFKA_PORT:-9092}"); REDIS_PID=$(pid_on "$REDIS_PORT")
TXDIR=$STATE/neo4j/data/transactions/neo4j

cat >"$STATE/policy-ingest.yaml" <<POLICY
version: 1
hiddenNeighbours: OMIT
roles:
  - name: bench-admins
    grants: [{privileges: [MANAGE_GRANTS], on: {all: true}}]
bindings:
  - {role: bench-admins, subjects: [bench-admin, bench-producer]}
POLICY
TOPIC="bench.ingest.$LABEL.$TAG"
ENVS=$(bin/hwload envs --prefix "$WORLD")
# shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
"$HEADWATER_BIN" serve --http-addr="$API" --http-metrics-addr="$METRICS" --redis-addr=127.0.0.1:$REDIS_PORT --consumer \
  --authz-policy-file="$STATE/policy-ingest.yaml" --authz-policy-source=bench-ingest --archive-dir="$STATE/archive-$LABEL" \
  --identity-environments="$ENVS" --identity-default-env=prod --kafka-events-topic="$TOPIC" \
  --kafka-quarantine-topic="bench.quarantine" --kafka-consumer-group="bench-ingest-$LABEL-$TAG" \
  --kafka-brokers="127.0.0.1:${KAFKA_PORT:-9092}" \
  --log-format=text --log-level=warn ${SERVE_FLAGS:-} >"$STATE/logs/serve-ingest-$LABEL.log" 2>&1 &
SERVE_PID=$!
trap 'kill $SERVE_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 90); do curl -fsS "http://$API/readyz" >/dev/null 2>&1 && break; sleep 1; done
PRODUCER=$("$HEADWATER_BIN" token create --owner bench-producer --kind producer --log-level=warn)

# Simulated time: ~0.174 s of the generator's simulated time per event (86x at 500/s); each run gets its span
# plus a fifth, the chain ends half an hour before now.
span() { echo $(( $1 * 174 * 12 / 10000 )); } # events -> simulated seconds
# The closed loop sends a corpus of CLOSED_EVENTS; the 1,000/s run lasts HIGH_SECONDS (its backlog must drain).
CLOSED_EVENTS=${CLOSED_EVENTS:-30000}
HIGH_SECONDS=${HIGH_SECONDS:-$RUN_SECONDS}
secs_of() { if [ "$1" -ge 1000 ] 2>/dev/null; then echo "$HIGH_SECONDS"; else echo "$RUN_SECONDS"; fi; }
events_of() { if [ "$1" = closed ]; then echo "$CLOSED_EVENTS"; else echo $(( $1 * $(secs_of "$1") )); fi; }
TOTAL=0
for r in $RUNS; do TOTAL=$(( TOTAL + $(span "$(events_of "$r")") )); done
# CHAIN_START (epoch seconds) sets where the warm-up (or, without one, the first measured run) starts in
# simulated time: a second invocation on the same world starts where the first one's chain ended (printed last).
T=${CHAIN_START:-$(( $(date -u +%s) - 1800 - TOTAL - $(span $((600 * WARM_SECONDS))) ))}
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
common=(--prefix "$WORLD" --url "http://$API" --token "$PRODUCER" --principal bench-producer --batch 10 --neo-4-j-uri "$BOLT"
  --topic "$TOPIC" --metrics-url "http://$METRICS/metrics" --brokers "")

if [ "$WARM_SECONDS" -gt 0 ]; then
  log "warm-up: world $WORLD, $WARM_SECONDS s at 600 events/s from $(iso $T) (not measured)"
  bin/hwload ingest "${common[@]}" --start "$(iso $T)" --rate 600 --duration "${WARM_SECONDS}s" --finish-runs --drain 240s \
    --out "$OUT/warmup.json" --no-charts 2>"$STATE/logs/ingest-$LABEL-warmup.log"
  T=$(( T + $(span $((600 * WARM_SECONDS))) ))
else
  log "no warm-up: world $WORLD is warm already (WARM_SECONDS=0; its earlier runs ended before $(iso $T))"
fi
# wait_idle: until the projector's lag reads 0 (at most 15 min), so no run inherits an earlier one's backlog.
wait_idle() {
  for _ in $(seq 1 900); do
    lag=$(curl -fsS "http://$METRICS/metrics" | awk -v t="$TOPIC" '/^headwater_consumer_lag_messages/ && index($0, "topic=\""t"\"") {s += $2} END {print s + 0}')
    [ "$lag" = 0 ] && return 0
    sleep 1
  done
  log "projector still behind after 15 min (lag $lag)"
}
wait_idle

ROWS=()
for r in $RUNS; do
  n=$(events_of "$r")
  if [ "$r" = closed ]; then
    flags=(--rate 0 --concurrency 8 --duration "${RUN_SECONDS}s" --corpus-events "$n" --drain 600s)
  else
    flags=(--rate "$r" --duration "$(secs_of "$r")s" --drain 600s)
  fi
  [ -n "${FINISH_RUNS:-}" ] && flags+=(--finish-runs)
  wait_idle
  read -r KBG RBG < <(background)
  echo "$KBG $RBG" >"$OUT/background-$r.txt"
  log "run $r: $n events from $(iso $T) (kafka background $KBG cores, redis $RBG)"
  rm -f "$STATE/corpus-$LABEL-$r.bin"
  bin/hwload ingest "${common[@]}" --start "$(iso $T)" "${flags[@]}" --corpus "$STATE/corpus-$LABEL-$r.bin" \
    --cpu-pid headwater="$SERVE_PID" --cpu-pid neo4j="$NEO4J_PID" --cpu-pid kafka="$KAFKA_PID" --cpu-pid redis="$REDIS_PID" \
    --neo4j-tx-dir "$TXDIR" --out "$OUT/run-$r.json" --no-charts 2>"$STATE/logs/ingest-$LABEL-$r.log"
  rm -f "$STATE/corpus-$LABEL-$r.bin"
  ROWS+=("$(row "$OUT/run-$r.json" "$r" "$KBG" "$RBG" || echo "| $r | (no figures: see $OUT/run-$r.json) |")")
  T=$(( T + $(span "$n") ))
done
echo "$LABEL ($HEADWATER_BIN), world $WORLD, topic $TOPIC; the chain ended at CHAIN_START=$T ($(iso $T))"
echo "$HEADER"
echo "|$(printf '%.0s---|' $(seq 1 19))"
printf '%s\n' "${ROWS[@]}"
