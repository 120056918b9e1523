#!/usr/bin/env bash
# Sets up pyiceberg (with pyarrow) in .state/producers/pyiceberg/venv; idempotent. Prints the producer's home
# directory (its interpreter is <home>/venv/bin/python). The catalog tests drive the Iceberg REST fixture
# (scripts/stack/stack.sh, port 8281) with it: ingest/icebergsync/testdata/pyiceberg_driver.py.
source "$(dirname "$0")/lib.sh"
venv pyiceberg "import pyiceberg.catalog.rest, pyarrow"
echo "$STATE/producers/pyiceberg"
