#!/usr/bin/env bash
# The test command (README "Run the tests"; .ci/run calls exactly this): install, then the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec "${PYTHON:-python3}" -m pytest -q -p no:cacheprovider "$@"
