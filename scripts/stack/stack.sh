#!/usr/bin/env bash
# Fetches and runs Headwater's real stack on a machine without a Docker engine:
# Redis (Debian package), Kafka 4.x in KRaft mode and Neo4j 5.26 Community (both from Maven Central), and the
# Apache Iceberg REST catalog fixture (Maven Central; scripts/stack/iceberg/IcebergRestLauncher.java, compiled here).
#
#   scripts/stack/stack.sh up       fetch what is missing, start what is not running, wait until ready
#   scripts/stack/stack.sh down     stop all four (data stays in the state folder)
#   scripts/stack/stack.sh status   say what runs
#   scripts/stack/stack.sh reset    down, then delete data (keeps downloaded jars)
#
# Settings (environment):
#   HEADWATER_STACK_PROFILE  test (default: small heaps) | bench (design-scale data)
#   HEADWATER_STATE_DIR      where jars, data and logs live (default: <repo>/.state)
#   HEADWATER_STACK_TIMEOUT  seconds to wait for readiness (default 180)
#   HEADWATER_STACK_ONLY     start only these servers (e.g. "neo4j"), default all four
#   HEADWATER_NEO4J_BOLT_PORT, HEADWATER_KAFKA_PORT, HEADWATER_REDIS_PORT, HEADWATER_ICEBERG_PORT  ports (defaults
#                            below), so a second stack (e.g. a benchmark Neo4j with its own state dir) can run beside
#                            the first
# Ports (all bound to 127.0.0.1): Neo4j Bolt 7687, Kafka 9092 (controller = Kafka port + 1), Redis 6379, Iceberg REST
# 8281 (not Iceberg's usual 8181: scripts/bench.sh's API servers use 8180-8184).
# Keep the versions and settings in step with docker/compose.yaml.
set -euo pipefail

NEO4J_VERSION=5.26.30
KAFKA_VERSION=4.4.0
LOG4J_VERSION=2.26.1
REDIS_MAJOR=7
# The Iceberg REST fixture (ADR 0039): iceberg-core's RESTCatalogServlet over a JdbcCatalog on sqlite, on Jetty 12.1.
ICEBERG_VERSION=1.11.0
JETTY_VERSION=12.1.14
HADOOP_VERSION=3.4.2
SQLITE_JDBC_VERSION=3.51.1.0
SLF4J_VERSION=2.0.17

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
STATE=${HEADWATER_STATE_DIR:-$repo/.state}
PROFILE=${HEADWATER_STACK_PROFILE:-test}
TIMEOUT=${HEADWATER_STACK_TIMEOUT:-180}
NEO4J_BOLT_PORT=${HEADWATER_NEO4J_BOLT_PORT:-7687}
KAFKA_PORT=${HEADWATER_KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=$((KAFKA_PORT + 1))
REDIS_PORT=${HEADWATER_REDIS_PORT:-6379}
ICEBERG_PORT=${HEADWATER_ICEBERG_PORT:-8281}
ONLY=${HEADWATER_STACK_ONLY:-redis kafka neo4j iceberg}
wants() { [[ " $ONLY " == *" $1 "* ]]; }

case "$PROFILE" in
  test)  NEO4J_HEAP=512m;  NEO4J_PAGECACHE=256m; KAFKA_HEAP=512m; REDIS_MAXMEM=256mb; ICEBERG_HEAP=256m ;;
  bench) NEO4J_HEAP=4g;    NEO4J_PAGECACHE=8g;   KAFKA_HEAP=1g;   REDIS_MAXMEM=2gb;   ICEBERG_HEAP=1g ;;
  *) echo "stack: HEADWATER_STACK_PROFILE must be 'test' or 'bench', got '$PROFILE'" >&2; exit 2 ;;
esac

log() { printf 'stack: %s\n' "$*" >&2; }
die() { printf 'stack: error: %s\n' "$*" >&2; exit 1; }

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

fetch_jars() { # name pom-file dir extra-mvn-args...
  local name=$1 pom=$2 dir=$3; shift 3
  if [ -f "$dir/.complete" ]; then return 0; fi
  log "fetching $name from Maven Central (first run only; neo4j ~125 MB, kafka ~45 MB, iceberg ~84 MB)"
  rm -rf "$dir"; mkdir -p "$dir"
  mvn -B -q -f "$pom" "$@" \
    org.apache.maven.plugins:maven-dependency-plugin:3.11.0:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dir" >"$STATE/logs/fetch-$name.log" 2>&1 \
    || die "could not fetch $name; see $STATE/logs/fetch-$name.log"
  touch "$dir/.complete"
}

ensure_redis_binary() {
  if command -v redis-server >/dev/null 2>&1; then return 0; fi
  log "installing redis-server from Debian"
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) \
      >"$STATE/logs/apt-redis.log" 2>&1 || die "apt-get install redis-server failed; see $STATE/logs/apt-redis.log"
  else
    die "redis-server is not installed; run: sudo apt-get install redis-server"
  fi
}

start_redis() {
  if port_open $REDIS_PORT; then log "redis already listening on $REDIS_PORT"; return 0; fi
  ensure_redis_binary
  local v; v=$(redis-server --version | sed -n 's/.*v=\([0-9]*\).*/\1/p')
  [ "$v" -ge "$REDIS_MAJOR" ] || die "redis-server $v is older than $REDIS_MAJOR"
  mkdir -p "$STATE/redis"
  redis-server --daemonize yes --bind 127.0.0.1 --port $REDIS_PORT --save "" --appendonly no \
    --maxmemory $REDIS_MAXMEM --maxmemory-policy allkeys-lru \
    --dir "$STATE/redis" --logfile "$STATE/logs/redis.log" --pidfile "$STATE/redis/redis.pid"
}

start_kafka() {
  if port_open $KAFKA_PORT; then log "kafka already listening on $KAFKA_PORT"; return 0; fi
  fetch_jars kafka "$here/poms/kafka.xml" "$STATE/jars/kafka-$KAFKA_VERSION" \
    -Dkafka.version=$KAFKA_VERSION -Dlog4j.version=$LOG4J_VERSION
  local conf=$STATE/kafka/server.properties data=$STATE/kafka/data
  mkdir -p "$STATE/kafka"
  cat >"$conf" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$data
num.partitions=6
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
log.retention.hours=-1
message.max.bytes=10485760
EOF
  cat >"$STATE/kafka/log4j2.yaml" <<EOF
Configuration:
  Appenders:
    File: { name: F, fileName: "$STATE/logs/kafka.log", PatternLayout: { pattern: "[%d] %p %m (%c)%n" } }
  Loggers:
    Root: { level: INFO, AppenderRef: [ { ref: F } ] }
    Logger: [ { name: org.apache.kafka, level: WARN }, { name: kafka, level: WARN }, { name: state.change.logger, level: WARN } ]
EOF
  local cp="$STATE/jars/kafka-$KAFKA_VERSION/*"
  if [ ! -f "$data/meta.properties" ]; then
    java -cp "$cp" -Dlog4j2.configurationFile="$STATE/kafka/log4j2.yaml" kafka.tools.StorageTool format \
      -t "hw-local-kraft-0000000" -c "$conf" >"$STATE/logs/kafka-format.log" 2>&1 \
      || die "kafka storage format failed; see $STATE/logs/kafka-format.log"
  fi
  nohup java -Xms$KAFKA_HEAP -Xmx$KAFKA_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$STATE/kafka/log4j2.yaml" -cp "$cp" kafka.Kafka "$conf" \
    >"$STATE/logs/kafka.out" 2>&1 &
  echo $! >"$STATE/kafka/kafka.pid"
}

start_neo4j() {
  if port_open $NEO4J_BOLT_PORT; then log "neo4j already listening on $NEO4J_BOLT_PORT"; return 0; fi
  fetch_jars neo4j "$here/poms/neo4j.xml" "$STATE/jars/neo4j-$NEO4J_VERSION" -Dneo4j.version=$NEO4J_VERSION
  local home=$STATE/neo4j
  mkdir -p "$home/conf" "$home/data" "$home/logs" "$home/run" "$home/plugins" "$home/import"
  cat >"$home/conf/neo4j.conf" <<EOF
server.default_listen_address=127.0.0.1
server.bolt.enabled=true
server.bolt.listen_address=127.0.0.1:$NEO4J_BOLT_PORT
server.http.enabled=false
server.https.enabled=false
dbms.security.auth_enabled=false
server.directories.data=$home/data
server.directories.logs=$home/logs
server.directories.run=$home/run
server.directories.plugins=$home/plugins
server.directories.import=$home/import
server.memory.heap.initial_size=$NEO4J_HEAP
server.memory.heap.max_size=$NEO4J_HEAP
server.memory.pagecache.size=$NEO4J_PAGECACHE
db.tx_log.rotation.retention_policy=1 files
dbms.usage_report.enabled=false
server.logs.debug.enabled=false
EOF
  nohup java -Xms$NEO4J_HEAP -Xmx$NEO4J_HEAP -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED \
    -Dfile.encoding=UTF-8 -cp "$STATE/jars/neo4j-$NEO4J_VERSION/*" org.neo4j.server.CommunityEntryPoint \
    --home-dir="$home" --config-dir="$home/conf" --console-mode >"$STATE/logs/neo4j.out" 2>&1 &
  echo $! >"$home/neo4j.pid"
}

start_iceberg() {
  if port_open $ICEBERG_PORT; then log "iceberg already listening on $ICEBERG_PORT"; return 0; fi
  command -v javac >/dev/null || die "javac is required to build the Iceberg launcher (Debian: openjdk-17-jdk-headless)"
  local jars=$STATE/jars/iceberg-$ICEBERG_VERSION classes=$STATE/iceberg/classes src=$here/iceberg/IcebergRestLauncher.java
  fetch_jars iceberg "$here/poms/iceberg.xml" "$jars" -Diceberg.version=$ICEBERG_VERSION \
    -Djetty.version=$JETTY_VERSION -Dhadoop.version=$HADOOP_VERSION -Dsqlite.version=$SQLITE_JDBC_VERSION \
    -Dslf4j.version=$SLF4J_VERSION
  mkdir -p "$STATE/iceberg/data" "$classes"
  if [ ! -f "$classes/IcebergRestLauncher.class" ] || [ "$src" -nt "$classes/IcebergRestLauncher.class" ]; then
    javac -nowarn -d "$classes" -cp "$jars/*" "$src" >"$STATE/logs/iceberg-javac.log" 2>&1 \
      || die "could not compile the Iceberg launcher; see $STATE/logs/iceberg-javac.log"
  fi
  nohup java -Xms64m -Xmx$ICEBERG_HEAP -XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$jars/*:$classes" IcebergRestLauncher \
    "$ICEBERG_PORT" "$STATE/iceberg/data" >"$STATE/logs/iceberg.out" 2>&1 &
  echo $! >"$STATE/iceberg/iceberg.pid"
}

wait_ready() { # name port logfile pidfile
  local name=$1 port=$2 logf=$3 pidf=$4 start=$SECONDS
  until port_open "$port"; do
    if [ -n "$pidf" ] && [ -f "$pidf" ] && ! pid_alive "$pidf"; then
      tail -n 20 "$logf" >&2 || true
      die "$name exited during start-up; see $logf"
    fi
    if [ $((SECONDS - start)) -ge "$TIMEOUT" ]; then
      tail -n 20 "$logf" >&2 || true
      die "$name not ready on 127.0.0.1:$port after ${TIMEOUT}s; see $logf (raise HEADWATER_STACK_TIMEOUT if the machine is slow)"
    fi
    sleep 1
  done
  log "$name ready on 127.0.0.1:$port after $((SECONDS - start))s"
}

# Port open is not enough for Neo4j: wait until the database accepts a query.
wait_neo4j_db() {
  local start=$SECONDS
  until grep -q "Started\." "$STATE/logs/neo4j.out" 2>/dev/null || [ ! -f "$STATE/neo4j/neo4j.pid" ]; do
    [ $((SECONDS - start)) -ge "$TIMEOUT" ] && die "neo4j did not finish starting after ${TIMEOUT}s; see $STATE/logs/neo4j.out"
    sleep 1
  done
}

up() {
  mkdir -p "$STATE/logs" "$STATE/jars"
  command -v java >/dev/null || die "java 17+ is required (Debian: openjdk-17-jre-headless)"
  command -v mvn >/dev/null || die "maven is required to fetch Kafka, Neo4j and Iceberg (Debian: maven)"
  log "profile=$PROFILE state=$STATE neo4j=$NEO4J_VERSION kafka=$KAFKA_VERSION"
  if wants redis; then start_redis; fi
  # The two JVMs fetch and start in parallel.
  local n="" k="" i=""
  if wants neo4j; then start_neo4j & n=$!; fi
  if wants kafka; then start_kafka & k=$!; fi
  if wants iceberg; then start_iceberg & i=$!; fi
  if [ -n "$n" ]; then wait $n || die "neo4j start failed"; fi
  if [ -n "$k" ]; then wait $k || die "kafka start failed"; fi
  if [ -n "$i" ]; then wait $i || die "iceberg start failed"; fi
  if wants redis; then wait_ready redis $REDIS_PORT "$STATE/logs/redis.log" ""; fi
  if wants kafka; then wait_ready kafka $KAFKA_PORT "$STATE/logs/kafka.log" "$STATE/kafka/kafka.pid"; fi
  if wants neo4j; then
    wait_ready neo4j $NEO4J_BOLT_PORT "$STATE/logs/neo4j.out" "$STATE/neo4j/neo4j.pid"
    wait_neo4j_db
  fi
  # Jetty opens its port only after the catalog is built, so an open port is a catalog that answers.
  if wants iceberg; then wait_ready iceberg $ICEBERG_PORT "$STATE/logs/iceberg.out" "$STATE/iceberg/iceberg.pid"; fi
  log "up ($ONLY): bolt://127.0.0.1:$NEO4J_BOLT_PORT kafka 127.0.0.1:$KAFKA_PORT redis 127.0.0.1:$REDIS_PORT iceberg http://127.0.0.1:$ICEBERG_PORT"
}

stop_pid() { # name pidfile
  local name=$1 pidf=$2
  if pid_alive "$pidf"; then
    local pid; pid=$(cat "$pidf")
    log "stopping $name (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidf"
}

down() {
  stop_pid neo4j "$STATE/neo4j/neo4j.pid"
  stop_pid kafka "$STATE/kafka/kafka.pid"
  stop_pid redis "$STATE/redis/redis.pid"
  stop_pid iceberg "$STATE/iceberg/iceberg.pid"
}

status() {
  local rc=0
  for s in "redis $REDIS_PORT" "kafka $KAFKA_PORT" "neo4j $NEO4J_BOLT_PORT" "iceberg $ICEBERG_PORT"; do
    set -- $s
    if port_open "$2"; then echo "$1: up (127.0.0.1:$2)"; else echo "$1: down"; rc=1; fi
  done
  return $rc
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  reset) down; rm -rf "$STATE/neo4j" "$STATE/kafka" "$STATE/redis" "$STATE/iceberg" "$STATE/logs" ;;
  *) echo "usage: $0 up|down|status|reset" >&2; exit 2 ;;
esac
