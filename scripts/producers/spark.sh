#!/usr/bin/env bash
# Sets up Spark 3.5 in .state/producers/spark: a venv with pyspark, and the OpenLineage listener and Iceberg
# runtime jars fetched from Maven Central into ~/.m2 (then linked into <home>/jars); idempotent. Runs on the
# installed Java 17. Prints the producer's home directory.
source "$(dirname "$0")/lib.sh"
venv spark "import pyspark"
home=$STATE/producers/spark
mkdir -p "$home/jars"
M2=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
for gav in io.openlineage:openlineage-spark_2.12:1.53.0 org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.12.0; do
  IFS=: read -r g a v <<<"$gav"
  jar=$M2/${g//.//}/$a/$v/$a-$v.jar
  if [[ ! -s $jar ]]; then
    echo "producers: fetching $gav from Maven Central (first run only)" >&2
    mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.11.0:get -Dartifact="$gav" -Dtransitive=false \
      -Dmaven.repo.local="$M2" >&2
  fi
  ln -sfn "$jar" "$home/jars/$a.jar"
done
echo "$home"
