"""The Spark job of the real-producer e2e test (e2e/producers_spark_test.go); docs/producers/spark.md.

Reads a CSV, filters, aggregates, writes parquet and saveAsTable, then Iceberg (Hadoop catalog) CTAS, INSERT,
ALTER TABLE RENAME COLUMN, INSERT, and a read of the table's `.snapshots` metadata table. The OpenLineage listener
sends every event to Headwater over the HTTP transport with an API key, and to a file for the test's logs.

usage: job.py WORKDIR HEADWATER_URL API_KEY JOB_NAMESPACE EVENTS_FILE JARS
"""
import sys

from pyspark.sql import functions as F

import olsession

work, url, key, namespace, events, jars = sys.argv[1:7]

spark = (
    olsession.builder("hw_producers_spark", work, url, key, namespace, events, jars)
    .config("spark.sql.catalog.ice", "org.apache.iceberg.spark.SparkCatalog")
    .config("spark.sql.catalog.ice.type", "hadoop")
    .config("spark.sql.catalog.ice.warehouse", f"{work}/iceberg_wh")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")

schema = "order_id INT, customer_id INT, amount DOUBLE, status STRING"
orders = spark.read.option("header", "true").schema(schema).csv(f"{work}/orders.csv")
totals = (
    orders.filter(F.col("status") == "complete")
    .withColumn("amount_cents", (F.col("amount") * 100).cast("long"))
    .groupBy("customer_id")
    .agg(F.sum("amount_cents").alias("total_cents"))
)
totals.write.mode("overwrite").parquet(f"{work}/out/customer_totals.parquet")
totals.write.mode("overwrite").saveAsTable("customer_totals_tbl")

spark.sql("CREATE NAMESPACE IF NOT EXISTS ice.db")
orders.createOrReplaceTempView("orders_csv")
spark.sql("CREATE TABLE ice.db.orders USING iceberg AS SELECT order_id, customer_id, amount, status FROM orders_csv")
spark.sql("INSERT INTO ice.db.orders VALUES (5, 2, 7.5, 'complete')")
spark.sql("ALTER TABLE ice.db.orders RENAME COLUMN amount TO amount_usd")
spark.sql("INSERT INTO ice.db.orders VALUES (6, 3, 1.25, 'complete')")
spark.sql("SELECT snapshot_id, operation FROM ice.db.orders.snapshots").collect()
spark.stop()
