"""bootstrap and stream: plan the jobs of a command, check the tables' state, hand them to a runner."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable

from hudi_cdc.common import storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline, is_s3_uri, uri_to_path
from hudi_cdc.core.lock import table_locks
from hudi_cdc.core.profiles import HUDI_CDC, engine_for
from hudi_cdc.core.render import Job
from hudi_cdc.errors import DataError, TablesFailed, TableStateError
from hudi_cdc.jobs.streamer import has_completed_commit
from hudi_cdc.lake.empty import DATA, EMPTY, MISSING, clear_empty, is_empty_bootstrapped, landing_state, mark_empty
from hudi_cdc.lake.status import BOOTSTRAP_LABEL, bootstrap_failure
from hudi_cdc.lake.version import check_version
from hudi_cdc.registry.preflight import check_subjects
from hudi_cdc.runners import Runner, make_runner
from hudi_cdc.runners.local.plan import work_dir
from hudi_cdc.runners.supervise import JOB_DIED, Stopper, stop_file_for, supervise

Progress = Callable[[str], None]


def _is_local(uri: str) -> bool:
    return uri.startswith("file://")


def _readable(pipeline: Pipeline, target: str, uri: str) -> bool:
    """Can this process look at uri? Local paths always; s3:// when the run is local (the endpoint and
    credentials of the local run are this process's); other targets check on their own side."""
    return _is_local(uri) or (is_s3_uri(uri) and target == "local")


def table_exists(pipeline: Pipeline, table: str, table_type: str, target: str = "local") -> bool:
    base = pipeline.base_path(table, table_type)
    return _readable(pipeline, target, base) and has_completed_commit(base)


def check_landing(pipeline: Pipeline, table: str, target: str = "local") -> None:
    d = pipeline.topic_dir(table)
    if not _readable(pipeline, target, d):
        return
    if pipeline.table(table).route is not None:  # several shards' folders (docs/shaping.md#routing)
        if not pipeline.landing_dirs(table):
            raise DataError(f"table {table}: no source table of its route has a landing folder under "
                            f"{pipeline.source_root} yet (capture first)")
        return
    if is_s3_uri(d):
        storage.check_roots(pipeline)  # a missing bucket or an endpoint that is down: one line
        missing = not storage.is_dir(d)
    else:
        missing = not uri_to_path(d).is_dir()
    if missing:
        shown = d if is_s3_uri(d) else uri_to_path(d)
        raise DataError(f"table {table}: landing directory {shown} does not exist "
                        f"(topic {pipeline.table(table).topic}; land data first, e.g. `hudi-cdc sample moma`)")


def _landing(pipeline: Pipeline, table: str, target: str) -> str | None:
    """What the table's landing holds (lake/empty.py), None when this process cannot look."""
    d = pipeline.topic_dir(table)
    if not _readable(pipeline, target, d):
        return None
    if is_s3_uri(d):
        storage.check_roots(pipeline)  # a missing bucket or an endpoint that is down: one line
    return landing_state(pipeline, table)


def _anything_landed(pipeline: Pipeline, states: dict[str, str | None]) -> bool:
    """Has any table of the pipeline a landing folder (checked only as far as needed)?"""
    if any(s in (EMPTY, DATA) for s in states.values()):
        return True
    return any(landing_state(pipeline, name) != MISSING for name in pipeline.tables if name not in states)


def bootstrap_plan(pipeline: Pipeline, table: str | None = None, force: bool = False,
                   target: str = "local", progress: Progress | None = None
                   ) -> tuple[list[Job], list[tuple[str, str]]]:
    """The bootstrap jobs, and the (table, type) pairs with nothing landed that are recorded as
    bootstrapped empty instead (a table empty at the source lands nothing). A landing folder missing
    while no table of the pipeline has one is refused (nothing was landed at all). Without --force, the
    tables that exist already are skipped with a note (a bootstrap that failed for some tables is run
    again for the missing ones); when every one asked for exists, the command is refused."""
    targets = pipeline.targets(table)
    states = {name: _landing(pipeline, name, target) for name, _ in targets}
    jobs, empty, existing = [], [], []
    for name, tt in targets:
        exists = table_exists(pipeline, name, tt, target)
        if states[name] == MISSING and (exists or not _anything_landed(pipeline, states)):
            check_landing(pipeline, name, target)
        if exists and not force:
            existing.append((name, tt))
        elif states[name] in (MISSING, EMPTY) and not exists:
            empty.append((name, tt))
        else:
            jobs.append(Job(name, tt, "BULK_INSERT"))
    if existing and len(existing) == len(targets):
        name, tt = existing[0]
        raise TableStateError(
            f"table {name} ({tt}) already exists at {pipeline.base_path(name, tt)}; "
            "bootstrap refuses to overwrite it (use --force to rebuild it from the landed files)")
    for name, tt in existing:
        (progress or log_progress)(f"{name} ({tt}) exists already: skipped (`bootstrap --table {name} --force` "
                                   "rebuilds it)")
    return jobs, empty


def plan_bootstrap(pipeline: Pipeline, table: str | None = None, force: bool = False,
                   target: str = "local") -> list[Job]:
    return bootstrap_plan(pipeline, table, force, target)[0]


def _record_empty(pipeline: Pipeline, empty: list[tuple[str, str]], progress: Progress,
                  dry_run: bool = False) -> list[dict]:
    """Bootstrapped empty: recorded, and one result row each (no commit)."""
    rows = []
    for name, tt in empty:
        if dry_run:
            progress(f"dry run: {name} ({tt}): nothing landed, would be recorded as bootstrapped empty")
            continue
        mark_empty(pipeline, name, tt)
        progress(f"{name} ({tt}): nothing landed (an empty table?): bootstrapped empty; its stream waits "
                 "and creates the table from the first files that land")
        rows.append({"table": f"{pipeline.hive_db(tt)}.{name}", "base_path": pipeline.base_path(name, tt),
                     "operation": "BULK_INSERT", "files": [], "records_in": 0, "records_written": 0,
                     "commit": None, "skipped": True, "empty": True})
    return rows


def _set_aside(pipeline: Pipeline, jobs: list[Job], progress: Progress) -> list[tuple]:
    """Move what a forced re-bootstrap replaces (or what a failed first bootstrap left: a table
    folder without a completed commit holds no data) out of the way, to restore on failure:
    (table, type, path, aside) of each table moved."""
    moved = []  # tables on S3 (the AWS runners' preflight insists on it) are not set aside
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for job in jobs:
        base = pipeline.base_path(job.table, job.table_type)
        path = uri_to_path(base) if _is_local(base) else None
        if path is not None and path.exists():
            aside = path.with_name(f".{path.name}.replaced-{stamp}")
            progress(f"setting {path} aside until the new bootstrap commits")
            path.rename(aside)
            moved.append((job.table, job.table_type, path, aside))
    return moved


def _restore(moved: list[tuple], progress: Progress) -> None:
    for _, _, path, aside in moved:
        if path.exists():
            shutil.rmtree(path)
        aside.rename(path)
        progress(f"restored {path}")


def _drop_aside(moved: list[tuple]) -> None:
    for _, _, _, aside in moved:
        shutil.rmtree(aside, ignore_errors=True)


def _check_registry(pipeline: Pipeline, jobs: list[Job], target: str) -> None:
    """A local job's registry subjects, before Spark starts (an AWS job reaches the registry from
    the cluster, which this machine may not)."""
    if target == "local":  # not a table bootstrapped empty: nothing landed, maybe nothing registered yet
        check_subjects(pipeline, [job.table for job in jobs if job.op != "UPSERT"
                                  or not waits_for_files(pipeline, job.table, job.table_type, target)])


def bootstrap(pipeline: Pipeline, table: str | None = None, *, force: bool = False, target: str = "local",
              dry_run: bool = False, progress: Progress = log_progress, runner: Runner | None = None,
              show: Progress | None = None) -> list[dict]:
    if dry_run:
        jobs, empty = bootstrap_plan(pipeline, table, force, target, progress)
        _record_empty(pipeline, empty, progress, dry_run=True)
        if not jobs:
            return []
        return (runner or make_runner(pipeline, target, progress, dry_run, show)).plan(jobs, "bootstrap")
    # one writer per table: refused while another bootstrap/stream writes one of the tables
    with table_locks(pipeline, _local_targets(pipeline, target, pipeline.targets(table)), "bootstrap", progress):
        jobs, empty = bootstrap_plan(pipeline, table, force, target, progress)
        try:
            results = _run_bootstrap(pipeline, jobs, target, progress, runner, show) if jobs else []
        except TablesFailed as exc:  # the others bootstrapped: they stay (issue 36)
            for job in jobs:
                if (job.table, job.table_type) not in exc.names:
                    clear_empty(pipeline, job.table, job.table_type)
            exc.results += _record_empty(pipeline, empty, progress)
            raise
        for job in jobs:
            clear_empty(pipeline, job.table, job.table_type)  # the table exists now
        return results + _record_empty(pipeline, empty, progress)


def _run_bootstrap(pipeline: Pipeline, jobs: list[Job], target: str, progress: Progress, runner: Runner | None,
                   show: Progress | None) -> list[dict]:
    runner = runner or make_runner(pipeline, target, progress, False, show)
    runner.preflight()  # Java, jars, settings, credentials: fail before anything is touched
    _check_registry(pipeline, jobs, target)
    moved = _set_aside(pipeline, jobs, progress)
    try:
        results = runner.run(jobs, BOOTSTRAP_LABEL)
    except TablesFailed as exc:  # only the failed tables get their set-aside copy back
        _restore([m for m in moved if (m[0], m[1]) in exc.names], progress)
        _drop_aside([m for m in moved if (m[0], m[1]) not in exc.names])
        raise
    except BaseException:
        _restore(moved, progress)
        raise
    _drop_aside(moved)
    return results


def _local_targets(pipeline: Pipeline, target: str, targets: list[tuple]) -> list[tuple]:
    """The (table, type) pairs whose writer lock this command takes: local runs of local tables."""
    if target != "local":
        return []
    return [(t, tt) for t, tt in targets if _is_local(pipeline.base_path(t, tt))]


NEVER_BOOTSTRAPPED = "never bootstrapped"  # plan_stream's `taken_up` reason for a table with no bootstrap at all


def waits_for_files(pipeline: Pipeline, table: str, table_type: str, target: str = "local") -> bool:
    """Bootstrapped empty and not created yet: its stream waits for files, then creates the table."""
    return (_readable(pipeline, target, pipeline.base_path(table, table_type))
            and is_empty_bootstrapped(pipeline, table, table_type)
            and not table_exists(pipeline, table, table_type, target))


def plan_stream(pipeline: Pipeline, table: str, once: bool, table_type: str | None = None,
                target: str = "local", taken_up: list[tuple[str, str, str]] | None = None) -> list[Job]:
    """The stream jobs of a table's types. `taken_up` (stream --all, run): a table whose bootstrap failed is
    streamed, not refused: its first round creates it from the whole landing by UPSERT, as a table bootstrapped
    empty (its failure, if it repeats, is then the table's alone); appended to the list as (table, type, error)."""
    types = [tt for tt in pipeline.table(table).table_types if not table_type or tt == table_type]
    waiting = [tt for tt in types if waits_for_files(pipeline, table, tt, target)]
    hudi_cdc_streams = engine_for(pipeline.hudi.version, target, pipeline.hudi.engine) == HUDI_CDC
    if len(waiting) < len(types):
        try:
            check_landing(pipeline, table, target)
        except DataError:  # stream --all / run: a table not captured nor bootstrapped yet waits for its files
            if taken_up is None or not hudi_cdc_streams or any(table_exists(pipeline, table, tt, target)
                                                               for tt in types):
                raise
    jobs = []
    for tt in types:
        base = pipeline.base_path(table, tt)
        if tt in waiting:
            if not hudi_cdc_streams:
                raise TableStateError(
                    f"table {table} ({tt}) was bootstrapped empty and does not exist yet; hudi.version "
                    f"{pipeline.hudi.version} streams existing tables only: `hudi-cdc bootstrap --table {table}` "
                    "once rows landed")
        elif _readable(pipeline, target, base) and not table_exists(pipeline, table, tt, target):
            failed = None
            if taken_up is not None and hudi_cdc_streams:  # failed, or never bootstrapped (added to a running pipeline)
                failed = bootstrap_failure(pipeline, table, tt) or NEVER_BOOTSTRAPPED
            if failed is None:
                raise TableStateError(f"table {table} ({tt}) does not exist at {base}; run `hudi-cdc bootstrap` "
                                      "first")
            taken_up.append((table, tt, failed))  # type: ignore[union-attr]
        elif _readable(pipeline, target, base):
            check_version(pipeline, table, tt)
        jobs.append(Job(table, tt, "UPSERT", continuous=not once))
    return jobs


def stream(pipeline: Pipeline, table: str, *, once: bool = False, table_type: str | None = None,
           target: str = "local", dry_run: bool = False, progress: Progress = log_progress,
           runner: Runner | None = None, show: Progress | None = None) -> list[dict]:
    label = f"stream-{table}"
    if dry_run:
        jobs = plan_stream(pipeline, table, once, table_type, target)
        return (runner or make_runner(pipeline, target, progress, dry_run, show)).plan(jobs, label)
    wanted = [(table, tt) for tt in pipeline.table(table).table_types if not table_type or tt == table_type]
    with table_locks(pipeline, _local_targets(pipeline, target, wanted), "stream", progress):
        jobs = plan_stream(pipeline, table, once, table_type, target)
        runner = runner or make_runner(pipeline, target, progress, dry_run, show)
        runner.preflight()
        _check_registry(pipeline, jobs, target)
        if once or target != "local" or getattr(runner, "delegate", None) is not None:
            return runner.run(jobs, label)  # the real HoodieDeltaStreamer (engines/) runs unsupervised
        # continuous on hudi-cdc's streamer: restarted when it crashes, stopped cleanly by SIGTERM/Ctrl-C
        settings = pipeline.stream
        with Stopper(runner, stop_file_for(work_dir(pipeline), label), settings.stop_timeout_seconds,
                     progress) as stopper:
            return supervise(lambda: runner.run(jobs, label), settings, label, progress, stopper)


ALL_LABEL = "stream-all"


def plan_stream_all(pipeline: Pipeline, once: bool, target: str = "local",
                    progress: Progress | None = None) -> list[Job]:
    """Every table and type of the pipeline: bootstrapped, or taken up (plan_stream's `taken_up`: one line each to
    `progress`): its bootstrap failed, or it was never bootstrapped (added to a running pipeline) while others were."""
    jobs = []
    side_by_side = not once or target == "local"  # local --once: the rounds side by side in the one JVM
    taken_up: list[tuple[str, str, str]] = []
    for name in pipeline.tables:
        jobs += [Job(j.table, j.table_type, j.op, j.continuous, all_tables=side_by_side)
                 for j in plan_stream(pipeline, name, once, None, target, taken_up)]
    never = [(t, tt) for t, tt, error in taken_up if error == NEVER_BOOTSTRAPPED]
    if never and len(never) == len(jobs):  # nothing bootstrapped at all: refused as `stream --table` is
        t, tt = never[0]
        raise TableStateError(f"table {t} ({tt}) does not exist at {pipeline.base_path(t, tt)}, nor does any other "
                              "table of the pipeline; run `hudi-cdc bootstrap` first")
    say = progress or (lambda _: None)
    for table, tt, error in taken_up:
        why = "not bootstrapped" if error == NEVER_BOOTSTRAPPED else f"its bootstrap failed ({first_line(error, 200)})"
        say(f"{table} ({tt}): {why}; its stream creates it from the landed files by upsert, the other tables go on")
    return jobs


def stream_all(pipeline: Pipeline, *, once: bool = False, target: str = "local", dry_run: bool = False,
               progress: Progress = log_progress, runner: Runner | None = None,
               stopper_hook: Callable[[Stopper], None] | None = None,
               show: Callable[[str], None] | None = None) -> list[dict]:
    """`stream --all`: every table and type in ONE Spark application (jobs/stream/loops.py): rounds of
    different tables run side by side, a failing table backs off and is reported while the others go on.
    Continuous runs are supervised as `stream`'s are: the application is restarted when its JVM dies
    (not for a table's own failures: the job retries those per table), and SIGTERM/Ctrl-C stop it after
    the rounds in flight. ``stopper_hook``: called with the Stopper (`run` shares its stop with capture)."""
    if target == "emr" and not once:  # ONE step runs every table (runners/emr/runner.py)
        emr = runner or make_runner(pipeline, target, progress, dry_run, show)
        return [emr.run_all_tables().to_dict()]  # type: ignore[attr-defined]
    if dry_run:
        jobs = plan_stream_all(pipeline, once, target)
        return (runner or make_runner(pipeline, target, progress, dry_run)).plan(jobs, ALL_LABEL)
    if target != "local" and not once:
        from hudi_cdc.errors import ConfigError

        raise ConfigError(f"stream --all on {target}: one EMR Serverless job run per table (stream each --table), "
                          "or run it on an EMR cluster (--target emr); docs/stream-all.md")
    with table_locks(pipeline, _local_targets(pipeline, target, pipeline.targets()), "stream --all", progress):
        jobs = plan_stream_all(pipeline, once, target, progress)
        runner = runner or make_runner(pipeline, target, progress, dry_run)
        if not once and getattr(runner, "delegate", None) is not None:
            from hudi_cdc.errors import ConfigError

            raise ConfigError(f"stream --all runs on hudi-cdc's streamer; hudi.version {pipeline.hudi.version} "
                              "runs the real HoodieDeltaStreamer, one JVM per table: stream each --table")
        runner.preflight()
        _check_registry(pipeline, jobs, target)
        if once:
            return runner.run(jobs, ALL_LABEL)
        settings = pipeline.stream
        with Stopper(runner, stop_file_for(work_dir(pipeline), ALL_LABEL), settings.stop_timeout_seconds,
                     progress) as stopper:
            if stopper_hook is not None:
                stopper_hook(stopper)
            return supervise(lambda: runner.run(jobs, ALL_LABEL), settings, ALL_LABEL, progress, stopper,
                             restartable=JOB_DIED)
