#!/usr/bin/env bash
# Sets up Airflow 3 with the OpenLineage provider in .state/producers/airflow/venv; idempotent. Prints the
# producer's home directory. Tests give each run its own AIRFLOW_HOME (sqlite), so nothing here is shared state.
source "$(dirname "$0")/lib.sh"
venv airflow "import airflow, airflow.providers.openlineage"
echo "$STATE/producers/airflow"
