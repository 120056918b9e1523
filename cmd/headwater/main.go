// Command headwater runs Headwater: `serve` (HTTP gateway + GraphQL, and the consumer in-process unless told
// otherwise), `ingest` (the consumer alone), `migrate`, `replay` and `version`. Wiring lives in this package only.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "headwater:", err)
		os.Exit(1)
	}
}
