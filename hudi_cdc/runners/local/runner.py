"""Local runner: pyspark's own spark-submit, the cached Hudi jars, small settings, a log file.

All jobs of one command run in one JVM (the streamer takes several flag groups), which on a
2-core machine saves a JVM start per table. On failure the one-line error carries the root cause
found in the job's output and the log path; nothing secret is put on the command line. A failed
table/type job does not stop the others (issue 36): the job reports every target, and the runner raises
TablesFailed naming each failed one and carrying the others' results.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from hudi_cdc.common.s3 import endpoint_env as s3_endpoint_env
from hudi_cdc.common.storage import check_roots
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.core.profiles import HOODIESTREAMER, engine_for
from hudi_cdc.core.render import Job, write_properties
from hudi_cdc.errors import DataError, EnvironmentProblem, HudiCdcError, JobError, RegistryError, TablesFailed
from hudi_cdc.jobs.stream.errors import DISK_FULL
from hudi_cdc.lake.status import failures_dir, record_failure
from hudi_cdc.registry.credentials import registry_env
from hudi_cdc.registry.errors import RegistryUnavailable
from hudi_cdc.runners.base import NotSupported
from hudi_cdc.runners.deltastreamer.engine import DeltaStreamerEngine
from hudi_cdc.runners.local import plan
from hudi_cdc.spark import launch
from hudi_cdc.toolchain import jars as jarcache
from hudi_cdc.toolchain.java_spark import find_java, spark_home, spark_submit

Progress = Callable[[str], None]


def _error_class(kind: str | None) -> type[HudiCdcError]:
    return {"input": DataError, "registry": RegistryError, "registry_unavailable": RegistryUnavailable,
            "disk": EnvironmentProblem}.get(kind or "job", JobError)


def _job_error(error: dict | None, label: str, cause: str, tail: list[str], log_path: Path) -> HudiCdcError:
    """hudi-cdc's error (and exit code) for the kind of failure the job reported."""
    kind = (error or {}).get("kind")
    if kind in (None, "job") and any(DISK_FULL in line for line in tail):  # the JVM died of it, unreported
        kind = "disk"
    if kind == "input":
        return DataError(f"{error['message']} (table left unchanged; log: {log_path})")  # type: ignore[index]
    if kind in ("registry", "registry_unavailable"):
        return _error_class(kind)(f"{cause} (table left unchanged; log: {log_path})")
    if kind == "disk":
        return EnvironmentProblem(f"{label} failed: {cause if error else DISK_FULL} (log: {log_path})")
    return JobError(f"{label} failed: {cause} (log: {log_path})")


def tables_failed(pipeline: Pipeline, jobs: Sequence[Job], targets: list[dict], label: str,
                  log_path: Path) -> TablesFailed:
    """A job of several targets some of which failed (every target ran, jobs/stream/main.py): the failed
    ones recorded for `status`, the others' results kept (their commits stand)."""
    failed: list[tuple[str, str, HudiCdcError]] = []
    results: list[dict] = []
    for job, target in zip(jobs, targets, strict=True):
        error = target.get("error")
        if error is None:
            results.append(target["result"])
            continue
        record_failure(pipeline, job.table, job.table_type, label, error["message"])
        failed.append((job.table, job.table_type, _error_class(error.get("kind"))(error["message"])))
    return TablesFailed(label, failed, results, len(jobs), f"log: {log_path}")


class LocalRunner:
    target = "local"

    def __init__(self, pipeline: Pipeline, progress: Progress = log_progress, dry_run: bool = False):
        self.pipeline = pipeline
        self.progress = progress
        self.dry_run = dry_run
        # hudi-cdc's streamer runs below; the real HoodieDeltaStreamer (0.14.0) is delegated to
        self.engine = engine_for(pipeline.hudi.version, "local", pipeline.hudi.engine)
        # one launcher for every spark-submit of this runner, the 0.14 engine's included (terminate)
        self.launcher = launch.Launcher()
        self.delegate = (DeltaStreamerEngine(pipeline, progress, self.launcher)
                         if self.engine == HOODIESTREAMER else None)
        self.stop_file: Path | None = None  # set by supervise.Stopper: the job stops after its round

    def preflight(self) -> None:
        """What must be there before a job may touch a table: Java, spark-submit, the jars."""
        if self.delegate:
            return self.delegate.preflight()
        find_java(17, "Spark")
        spark_submit()
        jarcache.ensure_jars(self.pipeline.hudi.version, self.progress, self.pipeline.uses_s3)
        check_roots(self.pipeline)

    def plan(self, jobs: Sequence[Job], label: str = "") -> list[dict]:
        """Say what run would write and run; touch nothing."""
        if self.delegate:
            return self.delegate.plan(jobs, label)
        argv = plan.argv(self.pipeline, jobs, plan.cached_jar_paths(self.pipeline))
        self.progress("dry run: would write properties into " + str(plan.props_dir(self.pipeline)))
        self.progress("dry run: would run " + json.dumps(argv))
        return [{"dry_run": True, "argv": argv}]

    def run(self, jobs: Sequence[Job], label: str) -> list[dict]:
        if self.dry_run:
            return self.plan(jobs, label)
        if self.delegate:
            return self.delegate.run(jobs, label)
        wd = plan.work_dir(self.pipeline)
        java = find_java(17, "Spark")
        write_properties(self.pipeline, plan.props_dir(self.pipeline))
        jar_paths = [str(p) for p in jarcache.ensure_jars(self.pipeline.hudi.version, self.progress,
                                                          self.pipeline.uses_s3)]
        argv = plan.argv(self.pipeline, jobs, jar_paths)
        argv[0] = str(spark_submit())
        if any(job.all_tables and job.continuous for job in jobs):  # each table's failures, for `status`
            argv += ["--status-dir", str(failures_dir(self.pipeline))]
        logs = wd / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}.log"
        extra = dict(registry_env(self.pipeline))
        if self.pipeline.uses_s3:  # the endpoint (never a key) for the driver's own S3 calls
            extra.update(s3_endpoint_env(self.pipeline.s3_endpoint()))
        if self.stop_file is not None:
            extra["HUDI_CDC_STOP_FILE"] = str(self.stop_file)
        env = launch.spark_env(spark_home=spark_home(), python=sys.executable, extra=extra,
                               java_home=os.environ.get("JAVA_HOME") or Path(java).resolve().parent.parent)
        self.progress(f"{label}: spark-submit {len(jobs)} job(s) in one JVM; log {log_path}")
        out = self.launcher.run(argv, env=env, cwd=wd, log_path=log_path, progress=self.progress)
        targets = (out.error or {}).get("targets") or []
        if not out.ok and len(jobs) > 1 and len(targets) == len(jobs):  # every job ran, some failed
            failure = tables_failed(self.pipeline, jobs, targets, label, log_path)
            self.progress(f"{label}: {len(jobs) - len(failure.failed)} of {len(jobs)} job(s) done, "
                          f"{len(failure.failed)} failed, in {out.seconds:.0f}s")
            raise failure
        if not out.ok or out.result is None:
            cause = out.cause()
            for job in jobs:  # `hudi-cdc status` shows it until a later round commits
                record_failure(self.pipeline, job.table, job.table_type, label, cause)
            raise _job_error(out.error, label, cause, out.tail, log_path)
        self.progress(f"{label}: done in {out.seconds:.0f}s")
        return out.result

    @property
    def child(self):
        """The running spark-submit (None between jobs)."""
        return self.launcher.child

    def terminate(self, grace: float = 30.0) -> None:
        """Stop the running job now: SIGTERM to its process group (the JVM's shutdown hooks run),
        SIGKILL after ``grace`` seconds."""
        self.launcher.terminate(grace)

    # a local run is a child process of the command that started it: nothing to look up later
    def status(self, run_id: str | None = None) -> list[dict]:
        raise NotSupported("status is for runs on emr or emr-serverless; a local run reports in its own command")

    def logs(self, run_id: str, kind: str = "stderr", lines: int = 200) -> str:
        raise NotSupported("logs are for runs on emr or emr-serverless; a local run's log file is "
                           f"under {plan.work_dir(self.pipeline) / 'logs'}")

    def cancel(self, run_id: str) -> str:
        raise NotSupported("cancel is for runs on emr or emr-serverless; stop a local run with Ctrl-C")
