"""The Spark session both real-producer jobs use (job.py, rest_job.py): local, bound to 127.0.0.1, with the
OpenLineage listener sending every event to Headwater over the HTTP transport with an API key and to a file for
the test's logs, and Iceberg's SQL extensions."""
from pyspark.sql import SparkSession


def builder(app, work, url, key, namespace, events, jars):
    return (
        SparkSession.builder.appName(app)
        .master("local[1]")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.jars", jars)
        .config("spark.sql.warehouse.dir", f"{work}/warehouse")
        .config("spark.extraListeners", "io.openlineage.spark.agent.OpenLineageSparkListener")
        .config("spark.openlineage.namespace", namespace)
        .config("spark.openlineage.transport.type", "composite")
        .config("spark.openlineage.transport.continueOnFailure", "false")
        .config("spark.openlineage.transport.transports.hw.type", "http")
        .config("spark.openlineage.transport.transports.hw.url", url)
        .config("spark.openlineage.transport.transports.hw.endpoint", "/api/v1/lineage")
        .config("spark.openlineage.transport.transports.hw.auth.type", "api_key")
        .config("spark.openlineage.transport.transports.hw.auth.apiKey", key)
        .config("spark.openlineage.transport.transports.file.type", "file")
        .config("spark.openlineage.transport.transports.file.location", events)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
    )
