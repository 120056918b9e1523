#!/usr/bin/env bash
# Runs golangci-lint with the repository's .golangci.yml (layering rules, staticcheck, unused, errorlint,
# errcheck, unparam, modernize, promlinter).
# Installs the pinned version into .state/bin with `go install` (through the Go module proxy) when it is missing
# or another version; idempotent. Arguments go to `golangci-lint run` (default: ./...).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=v2.15.0
BIN_DIR=${HEADWATER_STATE_DIR:-$PWD/.state}/bin
LINT=$BIN_DIR/golangci-lint
if ! "$LINT" version 2>/dev/null | grep -q "version ${VERSION#v} "; then
  mkdir -p "$BIN_DIR"
  echo "lint: installing golangci-lint $VERSION into $BIN_DIR" >&2
  GOBIN=$BIN_DIR go install "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$VERSION"
fi
if [ $# -eq 0 ]; then set -- ./...; fi
# several checkouts may lint at once on one machine (worktrees, a CI rehearsal): wait for the lock, do not fail
exec "$LINT" run --allow-parallel-runners "$@"
