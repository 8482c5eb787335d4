"""The streamer's driver: rounds over every target, the Spark session, and the lines the local
runner reads from the job's output (RESULT_MARK / ERROR_MARK + JSON)."""

from __future__ import annotations

import json
import shlex
import sys
import time
from collections.abc import Sequence

from hudi_cdc.causes import root_cause
from hudi_cdc.spark_conf import configure

from .argv import Target, parse_argv
from .errors import JobInputError
from .props import target_properties
from .round import RoundResult, run_round

RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "


def run_targets(spark, targets: list[Target], log=print) -> list[RoundResult]:
    """One round per target; in continuous mode, round after round over every target in turn
    (never stuck on the first, as HoodieMultiTableStreamer's continuous mode is)."""
    props = {id(t): target_properties(t) for t in targets}
    out: list[RoundResult] = []
    continuous = any(t.continuous for t in targets)
    interval = max((t.min_sync_interval_seconds for t in targets), default=0)
    max_rounds = min((t.max_rounds for t in targets if t.max_rounds is not None), default=None)
    rounds = 0
    while True:
        started = time.time()
        for t in targets:
            out.append(run_round(spark, t, props[id(t)], log))
        rounds += 1
        if not continuous or (max_rounds is not None and rounds >= max_rounds):
            return out
        wait = interval - (time.time() - started)
        if wait > 0:
            time.sleep(wait)


def build_session(app_name: str = "hudi-cdc"):
    from pyspark.sql import SparkSession

    return configure(SparkSession.builder.appName(app_name)).getOrCreate()


def _mark(mark: str, payload) -> None:
    print(mark + json.dumps(payload), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        targets = parse_argv(argv)
    except SystemExit:
        _mark(ERROR_MARK, {"message": "bad streamer arguments: " + shlex.join(argv)})
        return 2
    spark = build_session()
    spark.sparkContext.setLogLevel("WARN")
    try:
        results = run_targets(spark, targets, log=lambda m: print("hudi-cdc: " + m, flush=True))
    except JobInputError as exc:
        _mark(ERROR_MARK, {"message": str(exc), "kind": "input"})
        return 3
    except Exception as exc:
        _mark(ERROR_MARK, {"message": root_cause(exc), "kind": "job"})
        raise
    _mark(RESULT_MARK, [r.as_dict() for r in results])
    spark.stop()
    return 0
