#!/usr/bin/env bash
# Prints the package figures issue 15 measures, per Go package of the module (non-test lines, exported
# identifiers, interfaces, files; generated.go, *_gen.go, tests and testdata left out), the method count of named
# types (lineage.Service and the other wide ones) and summary lines (median lines, median exported, packages over
# the 1,500-line / 40-exported bar). Standard library only (scripts/structure/main.go). Arguments go to it:
#   scripts/structure.sh -types lineage.Service,authz.Store
set -euo pipefail
cd "$(dirname "$0")/.."
exec go run scripts/structure/main.go "$@"
