#!/usr/bin/env bash
# Fetch what the local Kafka + Kafka Connect worker needs (hudi_cdc/stack/kafka_connect.py; the tests
# marked `kafka`), once, into the cache ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc/kafka/):
#   - Kafka 4.3.0 (org.apache.kafka:kafka_2.13), Kafka Connect (connect-runtime, -json, -transforms),
#     kafka-tools (ConsoleConsumer) and a Log4j 2 binding, with their dependency closure resolved by
#     Maven (`mvn dependency:copy-dependencies` on a generated pom; needs `mvn`, Debian's `maven`);
#   - Debezium's PostgreSQL connector plugin 3.6.3.Final (io.debezium:debezium-connector-postgres:
#     <v>:tar.gz:plugin), unpacked to kafka/plugins/ (the worker's plugin.path).
# Measured: ~35 s and ~65 MB on a fresh cache; about a second when everything is there.
# Nothing is started; Java 17 runs both (scripts/install-postgres.sh installs it when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

if ! command -v mvn >/dev/null 2>&1; then
  echo "install-kafka-connect: apt-get install maven (resolves Kafka's dependency closure)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven
fi

"$PY" - <<'PYEOF'
from hudi_cdc.stack.kafka_connect import install
for what, where in install(progress=print).items():
    print(f"install-kafka-connect: {what}: {where}")
PYEOF
