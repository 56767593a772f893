#!/usr/bin/env bash
# Local Kafka and PostgreSQL for tests and local runs, without Docker.
#
#   docker/local/services.sh up      start what is needed (idempotent), print the env to use
#   docker/local/services.sh down    stop them (a service named by KAFKA_BROKERS / DATABASE_URL is left alone)
#   docker/local/services.sh status  say what runs
#   docker/local/services.sh run CMD...  `up` when KAFKA_BROKERS / DATABASE_URL are unset, then CMD
#
# Kafka 4.4 (single node, KRaft broker+controller) runs from jars that Maven resolves from
# docker/local/pom.xml. PostgreSQL comes from the Debian binaries: as root through
# pg_ctlcluster (the cluster on SLUICE_LOCAL_PG_PORT, made if missing; `down` stops it only if
# this SLUICE_LOCAL_DIR's `up` started it), as another user through initdb into a project
# folder. Data and logs live under .local/ (git-ignored), or SLUICE_LOCAL_DIR.
#
# Opt-in, for tests that need a secured broker of their own (test/helpers/secured-broker.ts);
# unset, the broker is plaintext as below:
#   SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES  a file appended to server.properties (same placeholders;
#                                        a key given again there wins), e.g. a SASL_SSL listener
#   SLUICE_LOCAL_KAFKA_SCRAM             SCRAM users created when the storage is formatted, one
#                                        per line: SCRAM-SHA-512=[name=app,password=...]
#   SLUICE_LOCAL_KAFKA_CLIENT_PROPERTIES client settings of the readiness check (TLS, SASL)
#   SLUICE_LOCAL_KAFKA_CLUSTER_ID        the cluster id the storage is formatted with (random when
#                                        unset): the brokers of one multi-node cluster share it
#                                        (test/helpers/kafka-cluster.ts, bench/chaos --cluster)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
LOCAL_DIR="${SLUICE_LOCAL_DIR:-$ROOT/.local}"
KAFKA_PORT="${SLUICE_LOCAL_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${SLUICE_LOCAL_KAFKA_CONTROLLER_PORT:-9093}"
PG_PORT="${SLUICE_LOCAL_PG_PORT:-5432}"
PG_VERSION="${SLUICE_LOCAL_PG_VERSION:-15}"
KAFKA_READY_SECONDS=90

KAFKA_DIR="$LOCAL_DIR/kafka"
# The jars may be shared by several local brokers (tests start a spare one).
KAFKA_LIBS="${SLUICE_LOCAL_KAFKA_LIBS:-$KAFKA_DIR/libs}"
PG_DIR="$LOCAL_DIR/postgres"
LOCAL_KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT"
LOCAL_DATABASE_URL="postgres://sluice:sluice@127.0.0.1:$PG_PORT/sluice"

log() { echo "[services] $*" >&2; }
fail() {
  echo "[services] error: $*" >&2
  echo "[services] to use services you already run instead, set KAFKA_BROKERS (host:port,...) and/or DATABASE_URL (postgres://...)." >&2
  exit 1
}

# ---------------------------------------------------------------- Kafka

require_java_and_maven() {
  command -v java >/dev/null || fail "Java 17 or newer is missing (Debian: apt-get install openjdk-17-jre-headless)."
  local major
  major="$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = \([0-9]*\).*/\1/p')"
  [[ -n "$major" && "$major" -ge 17 ]] || fail "Java 17 or newer is needed for Kafka 4.4; found specification version '${major:-unknown}'."
  command -v mvn >/dev/null || fail "Maven is missing; it resolves the Kafka jars (Debian: apt-get install maven)."
}

kafka_pid() {
  local pid
  pid="$(cat "$KAFKA_DIR/kafka.pid" 2>/dev/null || true)"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

# Resolves the jars once per version of the POM (a stamp records which one).
kafka_jars() {
  local stamp="$KAFKA_LIBS/.pom.sha256" want
  want="$(sha256sum "$HERE/pom.xml" | cut -d' ' -f1)"
  if [[ "$(cat "$stamp" 2>/dev/null || true)" == "$want" ]]; then return; fi
  log "resolving Kafka jars with Maven (first run only)"
  rm -rf "$KAFKA_LIBS"
  mvn -q -B -f "$HERE/pom.xml" \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$KAFKA_LIBS" >&2 ||
    fail "Maven could not resolve the Kafka jars (see the output above)."
  echo "$want" >"$stamp"
}

kafka_java() { java -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" "$@"; }

kafka_config() {
  mkdir -p "$KAFKA_DIR/data" "$KAFKA_DIR/logs"
  sed -e "s#@DATA_DIR@#$KAFKA_DIR/data#" \
    -e "s#@PORT@#$KAFKA_PORT#g" \
    -e "s#@CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#g" \
    "$HERE/server.properties" ${SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES:+"$SLUICE_LOCAL_KAFKA_EXTRA_PROPERTIES"} \
    >"$KAFKA_DIR/server.properties"
  if [[ ! -f "$KAFKA_DIR/data/meta.properties" ]]; then
    log "formatting Kafka storage"
    local scram=() line
    while IFS= read -r line; do
      [[ -n "$line" ]] && scram+=(--add-scram "$line")
    done <<<"${SLUICE_LOCAL_KAFKA_SCRAM:-}"
    kafka_java kafka.tools.StorageTool format --ignore-formatted \
      -t "${SLUICE_LOCAL_KAFKA_CLUSTER_ID:-$(kafka_java kafka.tools.StorageTool random-uuid)}" \
      -c "$KAFKA_DIR/server.properties" "${scram[@]}" >"$KAFKA_DIR/logs/format.log" 2>&1 ||
      fail "formatting Kafka storage failed; see $KAFKA_DIR/logs/format.log"
  fi
}

# A real protocol round trip: ClusterTool asks the broker for its cluster id.
kafka_answers() {
  timeout 20 java -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
    org.apache.kafka.tools.ClusterTool cluster-id --bootstrap-server "$LOCAL_KAFKA_BROKERS" \
    ${SLUICE_LOCAL_KAFKA_CLIENT_PROPERTIES:+--config "$SLUICE_LOCAL_KAFKA_CLIENT_PROPERTIES"} >/dev/null 2>&1
}

kafka_up() {
  if [[ -n "$(kafka_pid)" ]]; then log "Kafka already running at $LOCAL_KAFKA_BROKERS"; return; fi
  require_java_and_maven
  if (exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_PORT") 2>/dev/null; then
    fail "port $KAFKA_PORT is taken by another program; stop it, or set SLUICE_LOCAL_KAFKA_PORT."
  fi
  kafka_jars
  kafka_config
  local started=$SECONDS
  log "starting Kafka at $LOCAL_KAFKA_BROKERS (logs: $KAFKA_DIR/logs)"
  KAFKA_HEAP_OPTS="" nohup java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true \
    -cp "$KAFKA_LIBS/*" -Dlog4j2.configurationFile="$HERE/log4j2.properties" \
    -Dkafka.logs.dir="$KAFKA_DIR/logs" \
    kafka.Kafka "$KAFKA_DIR/server.properties" >"$KAFKA_DIR/logs/kafka.out" 2>&1 &
  echo $! >"$KAFKA_DIR/kafka.pid"
  until kafka_answers; do
    [[ -n "$(kafka_pid)" ]] || fail "Kafka exited during start-up; see $KAFKA_DIR/logs/kafka.out"
    ((SECONDS - started < KAFKA_READY_SECONDS)) || fail "Kafka did not answer within ${KAFKA_READY_SECONDS}s; see $KAFKA_DIR/logs/kafka.out"
    sleep 0.5
  done
  log "Kafka ready in $((SECONDS - started))s"
}

kafka_down() {
  local pid
  pid="$(kafka_pid)"
  if [[ -z "$pid" ]]; then log "Kafka not running"; return; fi
  log "stopping Kafka (pid $pid)"
  kill "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  rm -f "$KAFKA_DIR/kafka.pid"
}

# ---------------------------------------------------------------- PostgreSQL

pg_bin() {
  local dir="/usr/lib/postgresql/$PG_VERSION/bin"
  [[ -x "$dir/postgres" ]] || fail "PostgreSQL $PG_VERSION binaries are missing in $dir (Debian: apt-get install postgresql-$PG_VERSION)."
  echo "$dir"
}

pg_answers() { "$(pg_bin)/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; }

# Creates the sluice role (allowed to create databases, so tests can make their own) and database.
pg_create_role_and_db() {
  local psql=("$@")
  if [[ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'sluice'")" != "1" ]]; then
    "${psql[@]}" -qc "CREATE ROLE sluice LOGIN CREATEDB PASSWORD 'sluice'"
  fi
  if [[ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'sluice'")" != "1" ]]; then
    "${psql[@]}" -qc "CREATE DATABASE sluice OWNER sluice"
  fi
}

# As root, PostgreSQL runs as a Debian cluster (pg_ctlcluster). `up` uses the cluster of
# PG_VERSION that listens on PG_PORT, or creates one: `main` on the default port, `sluice_PORT`
# on another. It records the cluster it started or created in PG_CLUSTER_FILE, and `down` stops
# only that one: a cluster someone else started (another stack's, the system's) is left alone.
PG_CLUSTER_FILE="$PG_DIR/cluster"

pg_cluster_on_port() {
  pg_lsclusters -h | awk -v v="$PG_VERSION" -v p="$PG_PORT" '$1 == v && $3 == p { print $2; exit }'
}

pg_up_as_root() {
  command -v pg_ctlcluster >/dev/null || fail "pg_ctlcluster is missing (Debian: apt-get install postgresql-common postgresql-$PG_VERSION)."
  local name started=""
  name="$(pg_cluster_on_port)"
  if [[ -z "$name" ]]; then
    name="main"
    [[ "$PG_PORT" == "5432" ]] || name="sluice_$PG_PORT"
    if pg_lsclusters -h | awk -v v="$PG_VERSION" -v n="$name" '$1 == v && $2 == n' | grep -q .; then
      fail "cluster $PG_VERSION/$name exists on another port than $PG_PORT; set SLUICE_LOCAL_PG_PORT to its port."
    fi
    log "creating PostgreSQL cluster $PG_VERSION/$name on port $PG_PORT"
    pg_createcluster -p "$PG_PORT" "$PG_VERSION" "$name" >&2
    started=1
  fi
  if ! pg_answers; then
    log "starting PostgreSQL cluster $PG_VERSION/$name"
    pg_ctlcluster "$PG_VERSION" "$name" start
    started=1
  fi
  if [[ -n "$started" ]]; then mkdir -p "$PG_DIR" && echo "$PG_VERSION $name" >"$PG_CLUSTER_FILE"; fi
  pg_create_role_and_db runuser -u postgres -- psql -p "$PG_PORT" -X -d postgres
}

pg_down_as_root() {
  local version="" name=""
  if [[ -f "$PG_CLUSTER_FILE" ]]; then read -r version name <"$PG_CLUSTER_FILE" || true; fi
  if [[ -z "$name" ]]; then
    log "PostgreSQL was not started from $LOCAL_DIR; left alone"
    return
  fi
  log "stopping PostgreSQL cluster $version/$name"
  pg_ctlcluster "$version" "$name" stop 2>/dev/null || log "PostgreSQL not running"
  rm -f "$PG_CLUSTER_FILE"
}

pg_up_as_user() {
  local bin
  bin="$(pg_bin)"
  mkdir -p "$PG_DIR"
  if [[ ! -f "$PG_DIR/data/PG_VERSION" ]]; then
    log "initialising PostgreSQL in $PG_DIR/data"
    "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --no-locale >"$PG_DIR/initdb.log" 2>&1 ||
      fail "initdb failed; see $PG_DIR/initdb.log"
  fi
  if ! pg_answers; then
    log "starting PostgreSQL from $PG_DIR/data"
    "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/postgres.log" -w \
      -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1" start >&2 ||
      fail "PostgreSQL did not start; see $PG_DIR/postgres.log"
  fi
  pg_create_role_and_db "$bin/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -X -d postgres
}

pg_up() {
  if [[ "$(id -u)" == "0" ]]; then pg_up_as_root; else pg_up_as_user; fi
  log "PostgreSQL ready at 127.0.0.1:$PG_PORT"
}

pg_down() {
  if [[ "$(id -u)" == "0" ]]; then
    pg_down_as_root
  elif [[ -f "$PG_DIR/data/postmaster.pid" ]]; then
    "$(pg_bin)/pg_ctl" -D "$PG_DIR/data" -m fast stop >&2
  else
    log "PostgreSQL not running"
  fi
}

# ---------------------------------------------------------------- commands

# 32 random bytes, base64, kept in $LOCAL_DIR/NAME (readable by its owner only).
local_secret() {
  local file="$LOCAL_DIR/$1"
  if [[ ! -s "$file" ]]; then
    mkdir -p "$LOCAL_DIR"
    (umask 077 && head -c 32 /dev/urandom | base64 >"$file")
  fi
  cat "$file"
}

up() {
  if [[ -z "${KAFKA_BROKERS:-}" ]]; then kafka_up; fi
  if [[ -z "${DATABASE_URL:-}" ]]; then pg_up; fi
  echo "KAFKA_BROKERS=${KAFKA_BROKERS:-$LOCAL_KAFKA_BROKERS}"
  echo "DATABASE_URL=${DATABASE_URL:-$LOCAL_DATABASE_URL}"
}

case "${1:-}" in
  up) up ;;
  down)
    # Like `up`, a service given through its variable is not this script's to stop.
    if [[ -z "${KAFKA_BROKERS:-}" ]]; then kafka_down; fi
    if [[ -z "${DATABASE_URL:-}" ]]; then pg_down; fi
    ;;
  status)
    if [[ -n "$(kafka_pid)" ]]; then echo "kafka: running at $LOCAL_KAFKA_BROKERS"; else echo "kafka: stopped"; fi
    if pg_answers; then echo "postgres: running at 127.0.0.1:$PG_PORT"; else echo "postgres: stopped"; fi
    ;;
  run)
    shift
    [[ $# -gt 0 ]] || fail "usage: $0 run COMMAND [ARGS...]"
    up >/dev/null
    export KAFKA_BROKERS="${KAFKA_BROKERS:-$LOCAL_KAFKA_BROKERS}"
    export DATABASE_URL="${DATABASE_URL:-$LOCAL_DATABASE_URL}"
    # Local runs get an admin token and an encryption key of their own, made once.
    export ADMIN_TOKENS="${ADMIN_TOKENS:-$(local_secret admin-token)}"
    export SECRETS_ENCRYPTION_KEY="${SECRETS_ENCRYPTION_KEY:-$(local_secret secrets-key)}"
    exec "$@"
    ;;
  *) echo "usage: $0 up|down|status|run COMMAND..." >&2; exit 2 ;;
esac
