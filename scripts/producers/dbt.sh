#!/usr/bin/env bash
# Sets up dbt (dbt-core, dbt-duckdb, openlineage-dbt) in .state/producers/dbt/venv; idempotent. Prints the
# producer's home directory (its venv is <home>/venv; `dbt-ol` is <home>/venv/bin/dbt-ol).
source "$(dirname "$0")/lib.sh"
venv dbt "import dbt.version, dbt.adapters.duckdb, openlineage.common"
echo "$STATE/producers/dbt"
