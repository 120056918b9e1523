// Command headwater runs Headwater: `serve` (HTTP gateway + GraphQL, and the consumer in-process unless told
// otherwise), `ingest` (the consumer alone), `migrate`, `replay`, `upgrade` and `version`. Wiring lives in this package only.
package main

import (
	"fmt"
	"os"
	"runtime/debug"
)

// defaultGCPercent is the garbage collector's target when GOGC is not set: the projector and the gateway allocate
// mostly short-lived decoding garbage over a small live heap, so collecting at 3x the live heap rather than 2x
// trades a little memory for CPU (docs/adr/0015-projection-without-history-growth.md).
const defaultGCPercent = 200

func main() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "headwater:", err)
		os.Exit(1)
	}
}
