#!/usr/bin/env bash
# Static checks: ruff (lint + import order), mypy (types, config in pyproject.toml) and
# import-linter (no import cycles; library modules never import the CLI layer; config in .importlinter).
# Run from anywhere; the tools come from `pip install -e .[test]`. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # check this tree's hudi_cdc, not another installed copy
echo "== ruff check hudi_cdc tests benchmarks scripts"
"$PY" -m ruff check hudi_cdc tests benchmarks scripts
echo "== mypy hudi_cdc"
"$PY" -m mypy hudi_cdc
echo "== lint-imports (.importlinter)"
lint-imports --no-cache --no-logo
