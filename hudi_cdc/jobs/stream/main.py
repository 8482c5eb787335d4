"""The streamer's driver: rounds over every target, the Spark session, and the lines the local
runner reads from the job's output (RESULT_MARK / ERROR_MARK + JSON)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Sequence

from hudi_cdc.causes import root_cause
from hudi_cdc.errors import ExitCode
from hudi_cdc.spark_conf import configure

from .argv import Target, parse_argv
from .errors import DISK_FULL, DiskFull, JobInputError, RegistryReadError, is_disk_full
from .props import target_properties
from .round import RoundResult, run_round
from .typed import raise_if_conversion_failed

RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "


STOP_ENV = "HUDI_CDC_STOP_FILE"  # set by hudi-cdc's supervisor (hudi_cdc/supervise.py)


def stop_requested() -> bool:
    """The supervisor asked the continuous job to stop once the round in flight has committed."""
    path = os.environ.get(STOP_ENV)
    return path is not None and path != "" and os.path.exists(path)


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
            try:
                out.append(run_round(spark, t, props[id(t)], log))
            except Exception as exc:
                raise_if_conversion_failed(exc)  # a value the typed conversion refused: one line, exit 3
                if is_disk_full(exc) and not isinstance(exc, JobInputError):
                    raise DiskFull(f"{t.target_table} ({t.target_base_path}): {DISK_FULL} while writing the round "
                                   f"({root_cause(exc, 300)}); nothing was committed, free space and run again"
                                   ) from exc
                raise
        rounds += 1
        if not continuous or (max_rounds is not None and rounds >= max_rounds) or stop_requested():
            return out
        while time.time() - started < interval:
            if stop_requested():
                log("stop requested: exiting between rounds")
                return out
            time.sleep(min(1.0, interval - (time.time() - started)))


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
        return ExitCode.CONFIG
    spark = build_session()
    spark.sparkContext.setLogLevel("WARN")
    try:
        results = run_targets(spark, targets, log=lambda m: print("hudi-cdc: " + m, flush=True))
    except JobInputError as exc:
        _mark(ERROR_MARK, {"message": str(exc), "kind": exc.kind})
        return ExitCode.REGISTRY if isinstance(exc, RegistryReadError) else ExitCode.DATA
    except DiskFull as exc:
        _mark(ERROR_MARK, {"message": str(exc), "kind": exc.kind})
        return ExitCode.ENVIRONMENT
    except Exception as exc:
        _mark(ERROR_MARK, {"message": root_cause(exc), "kind": "job"})
        raise
    _mark(RESULT_MARK, [r.as_dict() for r in results])
    spark.stop()
    return ExitCode.OK
