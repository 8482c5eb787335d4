#!/usr/bin/env bash
# The test command (README "On a fresh machine"). With CI=true a missing component fails (tests/shared.py).
#   bash scripts/test.sh          install (scripts/setup-tests.sh), static checks (scripts/lint.sh), then the whole
#                                 suite; .ci/run calls exactly this
#   bash scripts/test.sh --extended   the same, for the extended tier only (tests/conftest.py EXTENDED: costlier
#                                 second proofs kept out of the default run); --all runs both tiers
#   bash scripts/test.sh --fast   the unit tier only (pytest -m unit: no JVM, no services), no install
#                                 beyond `pip install -e .[test]` when hudi_cdc is not importable; each test
#                                 gets 60 s (setup.cfg's 1800 s is for the tiers that start JVMs and services;
#                                 the slowest unit test took 12 s on a loaded 2-core machine)
# Further arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [[ "${1:-}" == "--fast" ]]; then
    shift
    if ! "$PY" -c 'import hudi_cdc' 2>/dev/null; then
        "$PY" -m pip install -q -e '.[test]'
    fi
    exec "$PY" -m pytest -q -p no:cacheprovider -m unit --timeout=60 "$@"
fi
# the tiers of real-component tests (tests/conftest.py EXTENDED): the default run (CI's) leaves the extended tier out
TIER=(-m "not extended")
case "${1:-}" in
    --extended) shift; TIER=(-m extended) ;;
    --all) shift; TIER=() ;;
esac
bash scripts/setup-tests.sh
bash scripts/lint.sh
# four workers (pytest-xdist) on two cores: the tests wait on databases, capture and JVM starts about half the
# time (two workers kept the cores ~54% busy); one file per unit, the files of a costly service (stack, Kafka,
# MariaDB) on one worker (tests/conftest.py), handed out in tests/conftest.py's order (longest first:
# --no-loadscope-reorder, else pytest-xdist puts the groups with most tests first and the costliest single-test
# files ran last); HUDI_CDC_TEST_WORKERS overrides; the 25 slowest are printed
exec "$PY" -m pytest -q -p no:cacheprovider -n "${HUDI_CDC_TEST_WORKERS:-4}" --dist loadgroup --no-loadscope-reorder \
    --durations=25 ${TIER[@]+"${TIER[@]}"} "$@"
