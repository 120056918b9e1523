"""The Airflow DAG of the real-producer e2e test (e2e/producers_airflow_test.go); docs/producers/airflow.md.

Two tasks with file Assets as inlets and outlets: `clean` (Python) keeps the completed orders, `summarise` (Bash)
counts them. The OpenLineage provider reports the Assets as the tasks' inputs and outputs. HW_AIRFLOW_WORK is the
directory holding orders.csv (the test's temporary directory).
"""
import csv
import os

import pendulum
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.operators.python import PythonOperator
from airflow.sdk import DAG, Asset

WORK = os.environ["HW_AIRFLOW_WORK"]
ORDERS = Asset(f"file://{WORK}/orders.csv")
CLEAN = Asset(f"file://{WORK}/out/orders_clean.csv")
SUMMARY = Asset(f"file://{WORK}/out/summary.txt")


def clean():
    os.makedirs(f"{WORK}/out", exist_ok=True)
    with open(f"{WORK}/orders.csv") as src, open(f"{WORK}/out/orders_clean.csv", "w", newline="") as dst:
        rows = csv.DictReader(src)
        out = csv.DictWriter(dst, fieldnames=rows.fieldnames)
        out.writeheader()
        out.writerows(r for r in rows if r["status"] == "complete")


with DAG(dag_id="hw_producers_dag", start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), schedule=None, catchup=False):
    PythonOperator(task_id="clean", python_callable=clean, inlets=[ORDERS], outlets=[CLEAN]) >> BashOperator(
        task_id="summarise",
        bash_command=f"wc -l < {WORK}/out/orders_clean.csv > {WORK}/out/summary.txt",
        inlets=[CLEAN],
        outlets=[SUMMARY],
    )
