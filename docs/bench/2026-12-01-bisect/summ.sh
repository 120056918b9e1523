#!/usr/bin/env bash
# per label: profile split (s of CPU in 30 s) and alloc/GC per projected event from the end-of-run metrics
cd ${OUTDIR:-/tmp/hwbis/out}
printf '%-16s %6s %6s %6s %6s %6s %6s | %8s %6s %7s %8s\n' label total gcmark Apply gatewy decode malloc allocKB/ev gcs/kev heapMB projected
for d in "$@"; do
  [ -f $d/cpu.pprof ] || continue
  t=$(go tool pprof -top -cum -nodecount=2000 $d/cpu.pprof 2>/dev/null)
  g() { echo "$t" | awk -v p="$1" '$NF ~ p {print $4; exit}' | sed 's/s$//;s/ms$//'; }
  tot=$(echo "$t" | grep -o 'Total samples = [0-9.]*' | awk '{print $4}')
  proj=$(awk '/^headwater_consumer_events_total\{outcome="projected"\}/ {print $2}' $d/metrics.txt)
  alloc=$(awk '/^go_memstats_alloc_bytes_total/ {print $2}' $d/metrics.txt)
  gcs=$(awk '/^go_gc_duration_seconds_count/ {print $2}' $d/metrics.txt)
  heap=$(awk '/^go_memstats_heap_inuse_bytes/ {print $2}' $d/metrics.txt)
  printf '%-16s %6s %6s %6s %6s %6s %6s | %8.0f %6.2f %7.0f %8s\n' $d "$tot" "$(g '^runtime.gcBgMarkWorker$')" "$(g 'Projector..Apply$')" "$(g 'Gateway..handleBatch$')" "$(g 'consumer..handler..decode$')" "$(g '^runtime.mallocgc$')" \
    $(awk -v a=$alloc -v p=$proj 'BEGIN{print a/p/1024}') $(awk -v a=$gcs -v p=$proj 'BEGIN{print a/p*1000}') $(awk -v h=$heap 'BEGIN{print h/1048576}') $proj
done
