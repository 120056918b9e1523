#!/usr/bin/env bash
# Bisect driver: one warm world, one 300/s run per binary, a 30 s CPU profile of headwater in each run.
set -uo pipefail
cd /work/wt/bisect
export BENCH_STATE=/work/wt/bisect/.state-bisect
OUTROOT=${OUTROOT:-/tmp/hwbis/out2}
export FINISH_RUNS=1
mkdir -p "$OUTROOT"
WORLD=${WORLD:?}
T=${T0:?}
RUN_SECONDS=${RUN_SECONDS:-60}
SPAN=$(( 300 * RUN_SECONDS * 174 * 12 / 10000 ))
watch_profile() { # label
  local l=$1 d=$OUTROOT/$1
  for _ in $(seq 1 600); do pgrep -f "corpus-$l-300.bin" >/dev/null && break; sleep 1; done
  sleep "${PROF_DELAY:-20}"
  curl -fsS -o "$d/cpu.pprof" "http://127.0.0.1:9196/debug/pprof/profile?seconds=30" || echo "profile failed" >&2
  while pgrep -f "corpus-$l-300.bin" >/dev/null; do curl -fsS -o "$d/metrics.tmp" http://127.0.0.1:9196/metrics && mv "$d/metrics.tmp" "$d/metrics.txt"; sleep 3; done
}
for spec in "$@"; do  # label:binary:schema[:warm]
  IFS=: read -r label bin schema warm envs <<<"$spec"
  mkdir -p "$OUTROOT/$label"
  if [ -n "$schema" ] && ss -ltnH 'sport = :7688' | grep -q .; then
    HEADWATER_NEO4J_URI=bolt://127.0.0.1:7688 /tmp/hwbis/bin/setschema "$schema"
  fi
  watch_profile "$label" & WP=$!
  ws=${warm:-0}
  start=$T
  echo "== $label $bin schema=$schema warm=$ws chain_start=$T $(date -u +%T)"
  env $envs KAFKA_PORT=9092 CHAIN_START=$T WORLD=$WORLD HEADWATER_BIN=$bin LABEL=$label RUN_SECONDS=$RUN_SECONDS WARM_SECONDS=$ws \
    RUNS=300 BG_SECONDS=10 OUT=$OUTROOT/$label scripts/bench-ingest.sh 2>&1 | tee "$OUTROOT/$label/bench.txt"
  wait $WP
  T=$(( start + ws * 600 * 174 * 12 / 10000 + SPAN * 11 / 10 + 60 ))
  echo "$T" > "$OUTROOT/next-T"
done
