#!/usr/bin/env bash
# Install what the README's main command needs on a fresh machine (idempotent), nothing more:
#   - Java 17 (Debian's openjdk-17-jdk-headless) if no `java` is on PATH;
#   - the hudi-cdc package (pyspark 3.5.5, the `hudi` reader, pyhive, ...), without the test extras;
#   - from Maven Central, into ~/.cache/hudi-cdc: the Hudi 1.2.0 Spark bundle, spark-avro, and Apicurio
#     Registry for the local stack (scripts/install-stack.sh; the S3 extras only when HUDI_CDC_SKIP_S3=0).
# What only the tests and the other sources use is scripts/setup-tests.sh (the test command runs it):
#   capture from PostgreSQL alone is `bash scripts/install-postgres.sh` (README, docs/capture.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if ! command -v java >/dev/null 2>&1; then
  echo "setup: installing Java 17 (Debian package openjdk-17-jdk-headless)"
  apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless
fi

echo "setup: pip install -e ."
"$PY" -m pip install -q --disable-pip-version-check -e .

HUDI_CDC_SKIP_S3="${HUDI_CDC_SKIP_S3:-1}" PYTHON="$PY" bash scripts/install-stack.sh
echo "setup: done"
