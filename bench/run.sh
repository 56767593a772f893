#!/usr/bin/env bash
# `npm run bench:ingest` / `npm run bench:router` (bench/run.sh ingest|router): starts the
# local Kafka and PostgreSQL when KAFKA_BROKERS / DATABASE_URL are unset
# (docker/local/services.sh), builds, applies the migrations, and runs bench/<name>.mts.
# Settings are BENCH_* variables (bench/README.md, bench/ROUTER.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

NAME="${1:-}"
[[ "$NAME" == ingest || "$NAME" == router || "$NAME" == clients || "$NAME" == audience || "$NAME" == dispatcher || "$NAME" == ledger ]] || { echo "usage: $0 ingest|router|clients|audience|dispatcher|ledger" >&2; exit 2; }

if [[ -z "${KAFKA_BROKERS:-}" || -z "${DATABASE_URL:-}" ]]; then
  exec bash docker/local/services.sh run bash "${BASH_SOURCE[0]}" "$NAME"
fi

# Node 24 from the `node` devDependency: it runs the .mts files by stripping their types.
NODE="$ROOT/node_modules/.bin/node"
[[ -x "$NODE" ]] || { echo "[bench] $NODE is missing; run npm install" >&2; exit 1; }

LOCAL_DIR="${SLUICE_LOCAL_DIR:-$ROOT/.local}"
export BENCH_KAFKA_LIBS="${BENCH_KAFKA_LIBS:-$LOCAL_DIR/kafka/libs}"
export BENCH_KAFKA_LOG4J="$ROOT/docker/local/log4j2.properties"
# The broker's CPU is reported when it is the local one that services.sh started.
if [[ "$KAFKA_BROKERS" == "127.0.0.1:${SLUICE_LOCAL_KAFKA_PORT:-9092}" ]]; then
  BENCH_KAFKA_PID="$(cat "$LOCAL_DIR/kafka/kafka.pid" 2>/dev/null || true)"
  export BENCH_KAFKA_PID
fi

echo "[bench] building" >&2
npm run --silent build
"$NODE" dist/apps/admin/src/migrate.js >&2
exec "$NODE" --disable-warning=TimeoutNegativeWarning "bench/$NAME.mts"
