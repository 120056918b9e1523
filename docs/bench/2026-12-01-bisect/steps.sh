#!/usr/bin/env bash
# ms of headwater CPU per projected event by function: (function's share of the profile) x (run's headwater ms/event)
cd ${OUTDIR:-/tmp/hwbis/out}
F='Projector..Apply$ txWriter..projectDatasets$ txWriter..projectJobEdges$ txWriter..projectRuns$ txWriter..refoldRuns$ txWriter..loadRunEvents$ graph.RunKey$ txWriter..storeEvents$ txWriter..exec$ foldAttempt..seal$ foldTx..saveDue$ foldstate.*evictLocked$ foldstate.*Due$ WatermarksWith$ dsState..clone$ txWriter..datasetStates$ loadDatasetStates$ decodeState$ dsState..encode$ txWriter..bindIdentities$ Gateway..handleBatch$ consumer..handler..decode$ archive.*Append$ runtime.gcBgMarkWorker$ runtime.mallocgc$'
printf '%-34s' fn; for d in "$@"; do printf '%14s' "${d:0:13}"; done; echo
declare -A T HW
for d in "$@"; do T[$d]=$(go tool pprof -top -cum -nodecount=5000 $d/cpu.pprof 2>/dev/null); HW[$d]=$(jq '.ingest.cost.cpuMsPerEvent.headwater' $d/run-300.json); done
printf '%-34s' "headwater ms/ev (/proc)"; for d in "$@"; do printf '%14.3f' ${HW[$d]}; done; echo
for f in $F; do
  printf '%-34s' "${f%\$}"
  for d in "$@"; do
    tot=$(echo "${T[$d]}" | grep -o 'Total samples = [0-9.]*' | awk '{print $4}')
    c=$(echo "${T[$d]}" | awk -v p="$f" '$NF ~ p {v=$4; sub(/ms$/,"",v); if ($4 ~ /ms$/) v=v/1000; else sub(/s$/,"",v); print v; exit}')
    awk -v c="${c:-0}" -v t="$tot" -v h="${HW[$d]}" 'BEGIN{printf "%14.3f", c/t*h}'
  done; echo
done
