#!/usr/bin/env bash
# Fetch Trino for `hudi-cdc local up --trino` and the `trino` tests, once, into the cache
# ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc): io.trino:trino-server:<v>:tar.gz from Maven Central
# (~820 MB; Maven does the download when it is on PATH, so it keeps a copy in ~/.m2 too), unpacked to
# $HUDI_CDC_HOME/trino/<v>/. Then it checks for a Java 24+ (Trino 476's classes need it; Java 17 will
# not do). Idempotent: an unpacked server is kept. Not run by scripts/setup.sh: the tests that need
# Trino (tests/plugins/trino.py) and `local up --trino` fetch it on demand through the same code.
#
#   scripts/install-trino.sh [TRINO_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."

TRINO_VERSION="${1:-${HUDI_CDC_TRINO_VERSION:-476}}"
HOME_DIR="${HUDI_CDC_HOME:-$HOME/.cache/hudi-cdc}"
PY="${PYTHON:-python3}"

HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$TRINO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.toolchain.java_spark import find_java
from hudi_cdc.stack.trino import JAVA_MAJOR, ensure_distribution
try:
    print(f"trino {sys.argv[1]}: {ensure_distribution(sys.argv[1], progress=print)}")
    print(f"java {JAVA_MAJOR}+ for Trino: {find_java(JAVA_MAJOR, f'Trino {sys.argv[1]}')}")
except HudiCdcError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(exc.exit_code)
PYEOF
