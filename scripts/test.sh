#!/usr/bin/env bash
# The test command (README "Run the tests").
#   bash scripts/test.sh          install (scripts/setup.sh), static checks (scripts/lint.sh), then the whole
#                                 suite; .ci/run calls exactly this
#   bash scripts/test.sh --fast   the unit tier only (pytest -m unit: no JVM, no services), no install
#                                 beyond `pip install -e .[test]` when hudi_cdc is not importable
# Further arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [[ "${1:-}" == "--fast" ]]; then
    shift
    if ! "$PY" -c 'import hudi_cdc' 2>/dev/null; then
        "$PY" -m pip install -q -e '.[test]'
    fi
    exec "$PY" -m pytest -q -p no:cacheprovider -m unit "$@"
fi
bash scripts/setup.sh
bash scripts/lint.sh
exec "$PY" -m pytest -q -p no:cacheprovider "$@"
