#!/usr/bin/env bash
# Fetch Trino for `hudi-cdc local up --trino` and the `trino` tests, once, into the cache
# ($HUDI_CDC_HOME, default ~/.cache/hudi-cdc), to $HUDI_CDC_HOME/trino/<v>/: up to 476 the server tarball
# io.trino:trino-server:<v>:tar.gz (~820 MB); later releases (the default, 483) are not served as a
# tarball and are assembled from their module jars by Maven (hudi_cdc/stack/trino_modules.py; mvn and a
# JDK 25 needed). Then it checks for the Java the release needs (24 for 476, 25 from 477; Java 17 will
# not do). Idempotent: an installed server is kept. Not run by scripts/setup.sh: the tests that need
# Trino (tests/plugins/trino.py) and `local up --trino` fetch it on demand through the same code.
#
#   scripts/install-trino.sh [TRINO_VERSION]
set -euo pipefail
cd "$(dirname "$0")/.."

TRINO_VERSION="${1:-${HUDI_CDC_TRINO_VERSION:-483}}"
HOME_DIR="${HUDI_CDC_HOME:-$HOME/.cache/hudi-cdc}"
PY="${PYTHON:-python3}"

HUDI_CDC_HOME="$HOME_DIR" "$PY" - "$TRINO_VERSION" <<'PYEOF'
import sys
from hudi_cdc.errors import HudiCdcError
from hudi_cdc.toolchain.java_spark import find_java
from hudi_cdc.stack.trino import ensure_distribution, java_major
try:
    print(f"trino {sys.argv[1]}: {ensure_distribution(sys.argv[1], progress=print)}")
    major = java_major(sys.argv[1])
    print(f"java {major}+ for Trino: {find_java(major, f'Trino {sys.argv[1]}')}")
except HudiCdcError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(exc.exit_code)
PYEOF
