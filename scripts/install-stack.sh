#!/usr/bin/env bash
# Fetch what `hudi-cdc local up` needs, once, into the cache ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc):
#   - Apicurio Registry (io.apicurio:apicurio-registry-app:<v>:tar.gz:all) from Maven Central,
#     unpacked to $HUDI_CDC_HOME/apicurio/<v>/ (quarkus-run.jar);
#   - the Hudi Spark bundle and spark-avro jars ($HUDI_CDC_HOME/jars/).
# Idempotent: anything already in the cache is kept. Maven (`mvn dependency:copy`) does the
# download when it is on PATH (its proxies/mirrors apply), else curl from Maven Central.
# Then it checks the Java runtimes: Apicurio 3.3 needs Java 21+, Spark/Hive run on Java 17.
#
#   scripts/install-stack.sh [APICURIO_VERSION] [HUDI_VERSION]
set -euo pipefail

APICURIO_VERSION="${1:-${HUDI_CDC_APICURIO_VERSION:-3.3.3}}"
HUDI_VERSION="${2:-${HUDI_CDC_HUDI_VERSION:-1.2.0}}"
HOME_DIR="${HUDI_CDC_HOME:-$HOME/.cache/hudi-cdc}"
CENTRAL="https://repo.maven.apache.org/maven2"
PY="${PYTHON:-python3}"

app_dir="$HOME_DIR/apicurio/$APICURIO_VERSION"
tgz="$HOME_DIR/apicurio/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz"
mkdir -p "$HOME_DIR/apicurio"

if [[ -f "$app_dir/quarkus-run.jar" ]]; then
  echo "apicurio $APICURIO_VERSION: cached in $app_dir"
else
  if [[ ! -s "$tgz" ]]; then
    echo "apicurio $APICURIO_VERSION: fetching from Maven Central ..."
    if command -v mvn >/dev/null 2>&1; then
      (cd "${TMPDIR:-/tmp}" && mvn -q -B dependency:copy \
        "-Dartifact=io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all" \
        "-DoutputDirectory=$HOME_DIR/apicurio" -Dtransitive=false) || true
    fi
    if [[ ! -s "$tgz" ]]; then
      curl -fsSL --retry 3 -o "$tgz.part" \
        "$CENTRAL/io/apicurio/apicurio-registry-app/$APICURIO_VERSION/apicurio-registry-app-$APICURIO_VERSION-all.tar.gz"
      mv "$tgz.part" "$tgz"
    fi
  fi
  tmp="$(mktemp -d "$HOME_DIR/apicurio/unpack.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  tar -xzf "$tgz" -C "$tmp"
  run_jar="$(find "$tmp" -name quarkus-run.jar -print -quit)"
  [[ -n "$run_jar" ]] || { echo "error: $tgz has no quarkus-run.jar; delete it and retry" >&2; exit 1; }
  rm -rf "$app_dir"
  mv "$(dirname "$run_jar")" "$app_dir"
  echo "apicurio $APICURIO_VERSION: unpacked to $app_dir"
fi

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
from hudi_cdc.stack.java import find_java
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
