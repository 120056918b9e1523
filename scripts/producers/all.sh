#!/usr/bin/env bash
# Sets up every real producer the e2e tests run (dbt, Spark with Iceberg, Airflow, pyiceberg) and prints the
# environment lines the tests read: HEADWATER_TEST_DBT=..., HEADWATER_TEST_SPARK=..., HEADWATER_TEST_AIRFLOW=...,
# HEADWATER_TEST_PYICEBERG=...
set -euo pipefail
d=$(dirname "$0")
echo "HEADWATER_TEST_DBT=$("$d/dbt.sh")"
echo "HEADWATER_TEST_SPARK=$("$d/spark.sh")"
echo "HEADWATER_TEST_AIRFLOW=$("$d/airflow.sh")"
echo "HEADWATER_TEST_PYICEBERG=$("$d/pyiceberg.sh")"
