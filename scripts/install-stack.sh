#!/usr/bin/env bash
# Fetch what `hudi-cdc local up` needs, once, into the cache ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc):
#   - Apicurio Registry (io.apicurio:apicurio-registry-app:<v>:tar.gz:all) from Maven Central,
#     unpacked to $HUDI_CDC_HOME/apicurio/<v>/ (quarkus-run.jar);
#   - the Hudi Spark bundle, spark-avro and Hudi's Java write client jars ($HUDI_CDC_HOME/jars/);
#   - unless HUDI_CDC_SKIP_S3=1: s3proxy (org.gaul:s3proxy:<v>:jar:jar-with-dependencies, ~55 MB) for
#     `local up --s3` ($HUDI_CDC_HOME/s3proxy/), and hadoop-aws 3.3.4 + aws-java-sdk-bundle 1.12.262
#     (~280 MB) that local runs on s3:// roots put on the classpath ($HUDI_CDC_HOME/jars/).
#     Measured: ~50 s and 336 MB on a fresh cache (Maven also keeps a copy in ~/.m2).
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

# Apicurio and the jars through the same code `hudi-cdc local up` and the jobs use (hudi_cdc/toolchain/maven.py)
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$APICURIO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.stack.apicurio import ensure_distribution
print(f"apicurio {sys.argv[1]}: {ensure_distribution(sys.argv[1], progress=print)}")
PYEOF

# Hudi Spark bundle + spark-avro, through the same code the jobs use
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$HUDI_VERSION" <<'PYEOF'
import sys
from hudi_cdc.toolchain.jars import ensure_jars
for p in ensure_jars(sys.argv[1], progress=print):
    print(f"jar: {p}")
PYEOF

# The S3 endpoint and Hadoop's s3a, through the same code `local up --s3` and local S3 runs use
if [ "${HUDI_CDC_SKIP_S3:-0}" != "1" ]; then
HUDI_CDC_HOME="$HOME_DIR" "$PY" - <<'PYEOF'
from hudi_cdc.toolchain.jars import ensure, s3a_artifacts
from hudi_cdc.stack.s3proxy import ensure_jar
print(f"s3proxy: {ensure_jar(progress=print)}")
for a in s3a_artifacts():
    print(f"jar: {ensure(a, progress=print)}")
PYEOF
fi

# Java: Apicurio's classes say which Java they need; Spark 3.5 and Hive 2.3 need 17 (with javac
# for the metastore launcher).
HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$APICURIO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.stack.apicurio import install_dir, required_java
from hudi_cdc.toolchain.java_spark import find_java
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
