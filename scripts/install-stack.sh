#!/usr/bin/env bash
# Fetch what `hudi-cdc local up` needs, once, into the cache ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc):
#   - Apicurio Registry (io.apicurio:apicurio-registry-app:<v>:tar.gz:all) from Maven Central,
#     unpacked to $HUDI_CDC_HOME/apicurio/<v>/ (quarkus-run.jar);
#   - the Hudi Spark bundle and spark-avro jars ($HUDI_CDC_HOME/jars/).
# Idempotent: anything already in the cache is kept. Maven (`mvn dependency:copy`) does the
# download when it is on PATH (its proxies/mirrors apply), else HTTPS from Maven Central.
# Then it checks the Java runtimes: Apicurio 3.3 needs Java 21+, Spark/Hive run on Java 17.
#
#   scripts/install-stack.sh [APICURIO_VERSION] [HUDI_VERSION]
set -euo pipefail

APICURIO_VERSION="${1:-${HUDI_CDC_APICURIO_VERSION:-3.3.3}}"
HUDI_VERSION="${2:-${HUDI_CDC_HUDI_VERSION:-1.2.0}}"
HOME_DIR="${HUDI_CDC_HOME:-$HOME/.cache/hudi-cdc}"
PY="${PYTHON:-python3}"

# Apicurio and the jars through the same code `hudi-cdc local up` and the jobs use (hudi_cdc/maven.py)
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$APICURIO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.stack.apicurio import ensure_distribution
print(f"apicurio {sys.argv[1]}: {ensure_distribution(sys.argv[1], progress=print)}")
PYEOF

# Hudi Spark bundle + spark-avro, through the same code the jobs use
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$HUDI_VERSION" <<'PYEOF'
import sys
from hudi_cdc.jars import ensure_jars
for p in ensure_jars(sys.argv[1], progress=print):
    print(f"jar: {p}")
PYEOF

# Java: Apicurio's classes say which Java they need; Spark 3.5 and Hive 2.3 need 17 (with javac
# for the metastore launcher).
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$APICURIO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.stack.apicurio import install_dir, required_java
from hudi_cdc.java_spark import find_java
need = required_java(install_dir(sys.argv[1]))
problems = 0
for major, purpose in ((need, f"Apicurio Registry {sys.argv[1]}"), (17, "the Hive metastore / Spark")):
    try:
        print(f"java {major}+ for {purpose}: {find_java(major, purpose)}")
    except HudiCdcError as exc:
        print(f"warning: {exc}", file=sys.stderr)
        problems += 1
sys.exit(1 if problems else 0)
PYEOF
echo "stack dependencies ready in $HOME_DIR"
