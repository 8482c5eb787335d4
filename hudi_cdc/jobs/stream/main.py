"""The streamer's driver: rounds over every target, the Spark session, and the lines the local
runner reads from the job's output (RESULT_MARK / ERROR_MARK + JSON). A run that is not continuous gives
every target its round whatever the others' (issue 36); its error line then carries every target's result
or error ("targets", hudi_cdc/spark/launch.py)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from functools import partial

from hudi_cdc.common import py4j_lookups
from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.routing import ROUTE_KEY
from hudi_cdc.common.spark_conf import configure
from hudi_cdc.errors import ExitCode
from hudi_cdc.jobs.stream import compaction, cuts
from hudi_cdc.jobs.stream.aligned import Generations
from hudi_cdc.jobs.stream.argv import Target, parse_argv
from hudi_cdc.jobs.stream.compaction import Compactor
from hudi_cdc.jobs.stream.errors import (
    DiskFull,
    JobInputError,
    RegistryReadError,
    disk_full_in_round,
    is_disk_full,
)
from hudi_cdc.jobs.stream.loops import FAIR, AllGivenUp, AllTables, JvmGone, LoopSettings, Quiet, target_key
from hudi_cdc.jobs.stream.props import streamer_prop, target_properties
from hudi_cdc.jobs.stream.round import RoundResult, run_round, writer_options
from hudi_cdc.jobs.stream.schedule import Landing, parallel_rounds
from hudi_cdc.jobs.stream.table import has_completed_commit, read_checkpoint
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
                          ) -> list[RoundResult | BaseException]:
    """`stream --all --once`: one round per target, at most `max_parallel_rounds` at a time, each in its
    own FAIR pool (as the continuous loops run). Every table gets its round; a failed one does not stop
    the others: each target's result or error, in the targets' order."""
    sc = getattr(spark, "sparkContext", None)
    cores = driver_cores(spark)
    width = max(1, min(len(targets), parallel_rounds(max(t.max_parallel_rounds for t in targets), cores)))

    def one(t: Target) -> RoundResult:
        if sc is not None:
            sc.setLocalProperty("spark.scheduler.pool", target_key(t))  # as the continuous loops name it
        return _round(spark, t, props[id(t)], log)

    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="hudi-cdc-once") as pool:
        futures = [pool.submit(one, t) for t in targets]
        wait(futures)
    return [f.exception() or f.result() for f in futures]


def driver_cores(spark) -> int | None:
    """The cores the rounds share: N of a local[N] master (local[*]: the machine's), else Spark's default
    parallelism (a cluster's executor cores; not locally, where hudi-cdc sets it from the shuffle partitions)."""
    sc = getattr(spark, "sparkContext", None)
    master = str(getattr(sc, "master", "") or "")
    if master.startswith("local"):
        inside = master.partition("[")[2].partition("]")[0].partition(",")[0]
        return int(inside) if inside.isdigit() else os.cpu_count() if inside == "*" else 1
    return getattr(sc, "defaultParallelism", None)


def _pin_cut(targets: list[Target], props: dict[int, dict[str, str]]) -> None:
    """Every target's round ends on the newest transaction cut of its landing as this run starts (cuts.py),
    not on whichever cut is newest when its own round starts: tables whose rounds run one after the other, or
    two at a time, then end on the same cut, and the run leaves a consistent point (query/consistent.py)."""
    newest: dict[str, int | None] = {}
    for t in targets:
        root = streamer_prop(props[id(t)], "source.dfs.root")
        if root is not None and root not in newest:
            newest[root] = cuts.newest_number(root)
        t.cut_ceiling = newest.get(root) if root is not None else None


def run_each(spark, targets: list[Target], log=print) -> list[RoundResult | BaseException]:
    """One round per target (not continuous), every target's round run even when another's failed (issue
    36): each target's result or error, in the targets' order. `stream --all --once` runs them side by
    side, the others (bootstrap, `stream --table T --once`) one after the other."""
    props = {id(t): target_properties(t) for t in targets}
    _pin_cut(targets, props)
    if len(targets) > 1 and any(t.all_tables for t in targets):
        out = run_once_side_by_side(spark, targets, props, log)
    else:
        out = []
        for t in targets:
            try:
                out.append(_round(spark, t, props[id(t)], log))
            except Exception as exc:  # noqa: BLE001 - reported per target by the caller
                out.append(exc)
    for t, o in zip(targets, out, strict=True):
        if isinstance(o, BaseException):
            log(f"{t.target_table} ({t.table_type}): round failed: {root_cause(o, 600)}")
    return out


def run_targets(spark, targets: list[Target], log=print) -> list[RoundResult]:
    """One round per target; in continuous mode, round after round over every target in turn
    (never stuck on the first, as HoodieMultiTableStreamer's continuous mode is). Not continuous, every
    target gets its round and the first failure (in the targets' order) is raised once all have ended."""
    if not any(t.continuous for t in targets):
        outcomes = run_each(spark, targets, log)
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        if errors:
            raise errors[0]
        return outcomes  # type: ignore[return-value]
    props = {id(t): target_properties(t) for t in targets}
    compactor = Compactor(spark, log)
    try:
        return _rounds(spark, targets, props, compactor, True, log)
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
    """`stream --all`: every target in this one application, rounds picked by the scheduler (loops.py, schedule.py)."""
    first = next(t for t in targets if t.all_tables)
    status_dir = next((t.status_dir for t in targets if t.status_dir), None)
    cores = driver_cores(spark)
    settings = LoopSettings(backoff=first.retry_backoff_seconds, backoff_max=first.retry_backoff_max_seconds,
                            max_failures=first.max_failures, window=first.failure_window_seconds,
                            max_parallel=parallel_rounds(first.max_parallel_rounds, cores),
                            status_dir=_local_dir(status_dir))
    props = {id(t): target_properties(t) for t in targets}
    log(f"stream --all: {len(targets)} table(s) in one application, at most {settings.max_parallel} "
        "round(s) at a time, the longest waiting table with landed files first (FAIR scheduler, one pool "
        "per table)")

    def landing(t: Target) -> Landing | None:
        root = streamer_prop(props[id(t)], "source.dfs.root")
        if not root or ROUTE_KEY in props[id(t)]:  # a routed table's shards: a round per interval lists them
            return None
        return Landing(root, relist_seconds=max(1.0, t.min_sync_interval_seconds), cuts=cuts.folder_of_root(root))

    compactor = Compactor(spark, log)

    def round_then_compact(spark, t: Target, props: dict[str, str], log) -> RoundResult:
        result = run_round(spark, t, props, log)
        compact_beside(compactor, t, props)
        return result

    quiet = {}
    for t in targets:
        every = compaction.look_every(t.table_type, props[id(t)])
        if every is not None:
            quiet[target_key(t)] = Quiet(every, partial(_overdue, t, props[id(t)]))
    generations = None
    if first.align_cuts:
        root = {id(t): streamer_prop(props[id(t)], "source.dfs.root") for t in targets}
        generations = Generations({target_key(t): None if ROUTE_KEY in props[id(t)]  # routed: not aligned
                                   else cuts.folder_of_root(root[id(t)]) for t in targets})
    try:
        return AllTables(spark, targets, props, settings, round_then_compact, stop_requested, log,
                         landing=landing, checkpoint=stored_checkpoint, quiet=quiet, generations=generations).run()
    finally:
        compactor.wait()


def _overdue(t: Target, props: dict[str, str]) -> bool:
    """A quiet MoR table's compaction is overdue (its round compacts: compaction.after_empty_round)."""
    return has_completed_commit(t.target_base_path) and compaction.overdue(t.target_base_path, props) is not None


def stored_checkpoint(t: Target) -> str | None:
    """A table's checkpoint without a round (None: no commit yet, its first round starts the landing)."""
    return read_checkpoint(t.target_base_path) if has_completed_commit(t.target_base_path) else None


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
        return py4j_lookups.install_for((configure(builder, FAIR) if fair else builder).getOrCreate())
    conf = compaction.rounds_first(round_pools)
    try:  # Spark reads the pools file as its context starts
        return py4j_lookups.install_for(configure(builder, conf).getOrCreate())
    finally:
        os.unlink(conf["spark.scheduler.allocation.file"])


def _mark(mark: str, payload) -> None:
    print(mark + json.dumps(payload), flush=True)


# the job's own failures: reported with their kind and exit code (any other exception is a bug: traceback)
_KNOWN = (AllGivenUp, JvmGone, JobInputError, DiskFull)


def _failure(exc: BaseException) -> tuple[dict, int]:
    """The error line's payload ({"message", "kind"}) and the exit code of a failure."""
    if isinstance(exc, AllGivenUp):
        return {"message": str(exc), "kind": exc.kind}, _KIND_EXIT.get(exc.kind, ExitCode.JOB)
    if isinstance(exc, JobInputError):
        return ({"message": str(exc), "kind": exc.kind},
                ExitCode.REGISTRY if isinstance(exc, RegistryReadError) else ExitCode.DATA)
    if isinstance(exc, DiskFull):
        return {"message": str(exc), "kind": exc.kind}, ExitCode.ENVIRONMENT
    if isinstance(exc, JvmGone):
        return {"message": str(exc), "kind": "job"}, ExitCode.JOB
    return {"message": root_cause(exc), "kind": "job"}, ExitCode.JOB


def _report(targets: list[Target], outcomes: list[RoundResult | BaseException]) -> int:
    """The job's result line, or (some target failed) ONE error line: the first failure's message and kind
    (what a runner of one target reads) and under "targets" every target's result or error, in order."""
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    if not failed:
        _mark(RESULT_MARK, [o.as_dict() for o in outcomes])  # type: ignore[union-attr]
        return ExitCode.OK
    per_target = []
    for t, o in zip(targets, outcomes, strict=True):
        row: dict = {"table": t.target_table, "table_type": t.table_type, "base_path": t.target_base_path}
        if isinstance(o, BaseException):
            if not isinstance(o, _KNOWN):  # a bug, not the input: its traceback goes to the log
                traceback.print_exception(o, file=sys.stdout)
            row["error"], row["code"] = _failure(o)
        else:
            row["result"] = o.as_dict()
        per_target.append(row)
    payload, code = _failure(failed[0])
    _mark(ERROR_MARK, {**payload, "targets": per_target})
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """spark-submit's entry: the job's own session, its run (run_job), the session stopped."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        targets = parse_argv(argv)
    except SystemExit:
        _mark(ERROR_MARK, {"message": "bad streamer arguments: " + shlex.join(argv)})
        return ExitCode.CONFIG
    # FAIR pools: each table's rounds (stream --all), and any compaction beside them (compaction.py; the
    # properties are read in the rounds, where a bad file is reported: one pool of rounds is FIFO anyway)
    beside = any(t.continuous and t.table_type == "MERGE_ON_READ" for t in targets)
    spark = build_session(fair=any(t.all_tables for t in targets),
                          round_pools=[target_key(t) for t in targets] if beside else ())
    spark.sparkContext.setLogLevel("WARN")
    code = run_job(spark, targets)
    if code == ExitCode.OK:
        spark.stop()
    return code


def run_job(spark, targets: list[Target]) -> int:
    """The job on a session: every target's round(s), reported as RESULT_MARK / ERROR_MARK lines on stdout
    and progress lines `hudi-cdc: ...`; returns the exit code. An exception that is not the job's own (a bug)
    is raised after its error line."""
    all_tables = any(t.all_tables for t in targets)
    continuous = any(t.continuous for t in targets)
    log = lambda m: print("hudi-cdc: " + m, flush=True)  # noqa: E731
    try:
        if all_tables and continuous:
            _mark(RESULT_MARK, run_all_tables(spark, targets, log))
        elif continuous:
            _mark(RESULT_MARK, [r.as_dict() for r in run_targets(spark, targets, log=log)])
        else:  # every target's round, whatever the others' (issue 36)
            return _report(targets, run_each(spark, targets, log))
    except Exception as exc:
        payload, code = _failure(exc)
        _mark(ERROR_MARK, payload)
        if not isinstance(exc, _KNOWN):
            raise
        return code
    return ExitCode.OK
