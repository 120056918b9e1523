// Command headwater runs Headwater: `serve` (HTTP gateway + GraphQL, and the consumer in-process unless told
// otherwise), `ingest` (the consumer alone), `migrate`, `replay`, `upgrade` and `version`. Wiring lives in this package only.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// GC defaults when GOGC / GOMEMLIMIT are not set. The projector and the gateway allocate mostly short-lived
// decoding garbage, so collecting at 5x the live heap rather than 3x (GOGC 200, ADR 0015) trades memory for CPU;
// the soft memory limit makes the collector run sooner instead once the heap nears it, so a large live heap
// cannot grow the process past it by the GOGC factor (docs/adr/0038-latency-settings-and-the-warm-world-procedure.md).
// A warm projector's live heap was ~1.1 GB (the recent-events cache of 60,000 events ~0.5-0.7 GB; the dataset
// fold state; in-flight batches): under a 2 GiB limit the collector ran whenever the few hundred MB left were
// allocated again and took a third of the process's CPU; at 4 GiB it takes under a fifth, with ~3 GB in use
// (docs/adr/0040-ingest-cpu-bisect.md). The caches are now bounded by bytes (--consumer-recent-events-mib
// 256, --consumer-fold-state-mib 1024; docs/adr/0046-memory-bounds-by-bytes.md; --consumer-job-state-mib 512,
// docs/adr/0079-job-state-saved-write-behind.md), so the live heap stays under half of this limit. Set GOGC / GOMEMLIMIT to override.
const (
	defaultGCPercent   = 400
	defaultMemoryLimit = 4 << 30 // bytes
)

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "headwater:", err)
		os.Exit(1)
	}
}
