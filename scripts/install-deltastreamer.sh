#!/usr/bin/env bash
# Prepare the real HoodieDeltaStreamer 0.14.0 runtime once (pyspark 3.4.3 venv + Hudi jars from
# Maven Central) under ${HUDI_CDC_HOME:-~/.cache/hudi-cdc}/deltastreamer-0.14.0. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python}" -m hudi_cdc.runners.deltastreamer.runtime "$@"
