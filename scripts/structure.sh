#!/usr/bin/env bash
# Prints the package structure figures issue 15 is judged by, one line per package: non-generated non-test lines,
# exported identifiers (exported package-level names + exported methods of exported types), interfaces declared,
# and the exported type with the most methods. Arguments: packages' directories to keep (default: all), e.g.
# `scripts/structure.sh lineage catalog api`.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go run ./scripts/structure .)
if [ $# -eq 0 ]; then
  printf '%s\n' "$out"
  exit 0
fi
printf '%s\n' "$out" | head -1
for d in "$@"; do printf '%s\n' "$out" | awk -v d="$d" '$1 == d'; done
