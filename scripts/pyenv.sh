#!/usr/bin/env bash
# Creates .state/pyenv with the real OpenLineage Python client (http and kafka transports) for the end-to-end
# tests that drive Headwater the way producers do. Idempotent; prints the interpreter path.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${HEADWATER_STATE_DIR:-$PWD/.state}/pyenv
OL_VERSION=1.54.0
CK_VERSION=2.16.1
if ! "$VENV/bin/python" -c "import openlineage.client, confluent_kafka" >/dev/null 2>&1; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install -q "openlineage-python==$OL_VERSION" "confluent-kafka==$CK_VERSION" >&2
fi
echo "$VENV/bin/python"
