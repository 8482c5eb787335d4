"""The streamer's driver: rounds over every target, the Spark session, and the lines the local
runner reads from the job's output (RESULT_MARK / ERROR_MARK + JSON)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait

from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.spark_conf import configure
from hudi_cdc.errors import ExitCode
from hudi_cdc.jobs.stream import compaction
from hudi_cdc.jobs.stream.argv import Target, parse_argv
from hudi_cdc.jobs.stream.compaction import Compactor
from hudi_cdc.jobs.stream.errors import (
    DiskFull,
    JobInputError,
    RegistryReadError,
    disk_full_in_round,
    is_disk_full,
)
from hudi_cdc.jobs.stream.loops import FAIR, AllGivenUp, AllTables, JvmGone, LoopSettings, target_key
from hudi_cdc.jobs.stream.props import target_properties
from hudi_cdc.jobs.stream.round import RoundResult, run_round, writer_options
from hudi_cdc.jobs.stream.typed import raise_if_conversion_failed

RESULT_MARK = "HUDI_CDC_RESULT "
ERROR_MARK = "HUDI_CDC_ERROR "


STOP_ENV = "HUDI_CDC_STOP_FILE"  # set by hudi-cdc's supervisor (hudi_cdc/runners/supervise.py)


def stop_requested() -> bool:
    """The supervisor asked the continuous job to stop once the round in flight has committed."""
    path = os.environ.get(STOP_ENV)
    return path is not None and path != "" and os.path.exists(path)


def _round(spark, t: Target, props: dict[str, str], log) -> RoundResult:
    """One round of one target, its failure turned into the job's own errors (exit codes)."""
    try:
        return run_round(spark, t, props, log)
    except Exception as exc:
        raise_if_conversion_failed(exc)  # a value the typed conversion refused: one line, exit 3
        if is_disk_full(exc) and not isinstance(exc, JobInputError):
            raise disk_full_in_round(t.target_table, t.target_base_path, exc, "free space and run again") from exc
        raise


def run_once_side_by_side(spark, targets: list[Target], props: dict[int, dict[str, str]], log=print
                          ) -> list[RoundResult]:
    """`stream --all --once`: one round per target, at most `max_parallel_rounds` at a time, each in its
    own FAIR pool (as the continuous loops run). Every table gets its round; a failed one does not stop
    the others, and the first failure (in the targets' order) is raised once all have ended."""
    width = max(1, min(len(targets), max(t.max_parallel_rounds for t in targets)))
    sc = getattr(spark, "sparkContext", None)

    def one(t: Target) -> RoundResult:
        if sc is not None:
            sc.setLocalProperty("spark.scheduler.pool", target_key(t))  # as the continuous loops name it
        return _round(spark, t, props[id(t)], log)

    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="hudi-cdc-once") as pool:
        futures = [pool.submit(one, t) for t in targets]
        wait(futures)
    errors = [e for e in (f.exception() for f in futures) if e is not None]
    for e in errors[1:]:
        log(f"round failed: {root_cause(e, 600)}")
    if errors:
        raise errors[0]
    return [f.result() for f in futures]


def run_targets(spark, targets: list[Target], log=print) -> list[RoundResult]:
    """One round per target; in continuous mode, round after round over every target in turn
    (never stuck on the first, as HoodieMultiTableStreamer's continuous mode is)."""
    props = {id(t): target_properties(t) for t in targets}
    continuous = any(t.continuous for t in targets)
    if not continuous and len(targets) > 1 and any(t.all_tables for t in targets):
        return run_once_side_by_side(spark, targets, props, log)
    compactor = Compactor(spark, log)
    try:
        return _rounds(spark, targets, props, compactor, continuous, log)
    finally:
        compactor.wait()


def _rounds(spark, targets: list[Target], props: dict[int, dict[str, str]], compactor: Compactor,
            continuous: bool, log) -> list[RoundResult]:
    out: list[RoundResult] = []
    interval = max((t.min_sync_interval_seconds for t in targets), default=0)
    max_rounds = min((t.max_rounds for t in targets if t.max_rounds is not None), default=None)
    rounds = 0
    while True:
        started = time.time()
        for t in targets:
            out.append(_round(spark, t, props[id(t)], log))
            compact_beside(compactor, t, props[id(t)])
        rounds += 1
        if not continuous or (max_rounds is not None and rounds >= max_rounds):
            return out
        if stop_requested():
            log("stop requested: exiting between rounds")
            return out
        while time.time() - started < interval:
            if stop_requested():
                log("stop requested: exiting between rounds")
                return out
            time.sleep(min(1.0, interval - (time.time() - started)))


def compact_beside(compactor: Compactor, t: Target, props: dict[str, str]) -> None:
    """After a round of a continuous MoR target: its scheduled compaction runs beside the next rounds."""
    if compaction.is_async(t.continuous, t.table_type, props):
        compactor.after_round(t.target_table, t.target_base_path, writer_options(props, t),
                              compaction.pool_of(target_key(t)))


def run_all_tables(spark, targets: list[Target], log=print) -> list[dict]:
    """`stream --all`: every target in a loop of its own in this one application (loops.py)."""
    first = next(t for t in targets if t.all_tables)
    status_dir = next((t.status_dir for t in targets if t.status_dir), None)
    settings = LoopSettings(backoff=first.retry_backoff_seconds, backoff_max=first.retry_backoff_max_seconds,
                            max_failures=first.max_failures, window=first.failure_window_seconds,
                            max_parallel=first.max_parallel_rounds, status_dir=_local_dir(status_dir))
    props = {id(t): target_properties(t) for t in targets}
    log(f"stream --all: {len(targets)} table(s) in one application, at most {settings.max_parallel} "
        "round(s) at a time (FAIR scheduler, one pool per table)")
    compactor = Compactor(spark, log)

    def round_then_compact(spark, t: Target, props: dict[str, str], log) -> RoundResult:
        result = run_round(spark, t, props, log)
        compact_beside(compactor, t, props)
        return result

    try:
        return AllTables(spark, targets, props, settings, round_then_compact, stop_requested, log).run()
    finally:
        compactor.wait()


def _local_dir(uri: str | None) -> str | None:
    return uri[len("file://"):] if uri and uri.startswith("file://") else uri


# the exit code of a job whose every table was given up, by the last failure's kind
_KIND_EXIT = {"input": ExitCode.DATA, "registry": ExitCode.REGISTRY, "registry_unavailable": ExitCode.REGISTRY,
              "disk": ExitCode.ENVIRONMENT}


def build_session(app_name: str = "hudi-cdc", fair: bool = False, round_pools: Sequence[str] = ()):
    """The job's session; FAIR for several tables' rounds, and with rounds ahead of the compactions
    beside them when `round_pools` (compaction.rounds_first)."""
    from pyspark.sql import SparkSession

    builder = configure(SparkSession.builder.appName(app_name))
    if not round_pools:
        return (configure(builder, FAIR) if fair else builder).getOrCreate()
    conf = compaction.rounds_first(round_pools)
    try:
        return configure(builder, conf).getOrCreate()  # Spark reads the pools file as its context starts
    finally:
        os.unlink(conf["spark.scheduler.allocation.file"])


def _mark(mark: str, payload) -> None:
    print(mark + json.dumps(payload), flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        targets = parse_argv(argv)
    except SystemExit:
        _mark(ERROR_MARK, {"message": "bad streamer arguments: " + shlex.join(argv)})
        return ExitCode.CONFIG
    all_tables = any(t.all_tables for t in targets)
    # FAIR pools: each table's rounds (stream --all), and any compaction beside them (compaction.py; the
    # properties are read in the rounds, where a bad file is reported: one pool of rounds is FIFO anyway)
    beside = any(t.continuous and t.table_type == "MERGE_ON_READ" for t in targets)
    spark = build_session(fair=all_tables, round_pools=[target_key(t) for t in targets] if beside else ())
    spark.sparkContext.setLogLevel("WARN")
    log = lambda m: print("hudi-cdc: " + m, flush=True)  # noqa: E731
    try:
        if all_tables and any(t.continuous for t in targets):
            _mark(RESULT_MARK, run_all_tables(spark, targets, log))
            spark.stop()
            return ExitCode.OK
        results = run_targets(spark, targets, log=log)
    except AllGivenUp as exc:
        _mark(ERROR_MARK, {"message": str(exc), "kind": exc.kind})
        return _KIND_EXIT.get(exc.kind, ExitCode.JOB)
    except JvmGone as exc:
        _mark(ERROR_MARK, {"message": str(exc), "kind": "job"})
        return ExitCode.JOB
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
