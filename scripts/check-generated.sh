#!/usr/bin/env bash
# Regenerates the gqlgen code and fails when that changes anything tracked: generated code is committed as
# generated, and hand-written code never lives in generated files.
set -euo pipefail
cd "$(dirname "$0")/.."
go run github.com/99designs/gqlgen generate
if ! git diff --exit-code --stat -- resolvers/ schema.graphqls gqlgen.yml; then
  echo "check-generated: regenerating gqlgen code changed the files above; run 'make generate' and commit" >&2
  exit 1
fi
untracked=$(git ls-files --others --exclude-standard -- resolvers/)
if [ -n "$untracked" ]; then
  echo "check-generated: regeneration produced untracked files: $untracked" >&2
  exit 1
fi
echo "check-generated: generated code is up to date"
