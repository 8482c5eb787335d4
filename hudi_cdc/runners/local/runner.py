"""Local runner: pyspark's own spark-submit, the cached Hudi jars, small settings, a log file.

All jobs of one command run in one JVM (the streamer takes several flag groups), which on a
2-core machine saves a JVM start per table. On failure the one-line error carries the root cause
found in the job's output and the log path; nothing secret is put on the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from ... import jars as jarcache
from ...causes import root_cause
from ...config import Pipeline
from ...engines.deltastreamer.engine import DeltaStreamerEngine
from ...errors import DataError, JobError
from ...java_spark import find_java, spark_home, spark_submit
from ...jobs import streamer
from ...profiles import HOODIESTREAMER, engine_for
from ...registry.credentials import registry_env
from ...render import Job, write_properties
from ...s3 import endpoint_env as s3_endpoint_env
from ...status import record_failure
from ...storage import check_roots
from ..base import NotSupported
from . import plan

Progress = Callable[[str], None]


class LocalRunner:
    target = "local"

    def __init__(self, pipeline: Pipeline, progress: Progress = print, dry_run: bool = False):
        self.pipeline = pipeline
        self.progress = progress
        self.dry_run = dry_run
        # hudi-cdc's streamer runs below; the real HoodieDeltaStreamer (0.14.0) is delegated to
        self.engine = engine_for(pipeline.hudi.version, "local", pipeline.hudi.engine)
        self.delegate = DeltaStreamerEngine(pipeline, progress) if self.engine == HOODIESTREAMER else None

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
        logs = wd / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}.log"
        env = dict(os.environ)
        env.update(registry_env(self.pipeline))
        if self.pipeline.uses_s3:  # the endpoint (never a key) for the driver's own S3 calls
            env.update(s3_endpoint_env(self.pipeline.s3_endpoint()))
        env["SPARK_HOME"] = str(spark_home())
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, never the machine's public address
        env["PYSPARK_PYTHON"] = sys.executable
        env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        env["JAVA_HOME"] = env.get("JAVA_HOME") or str(Path(java).resolve().parent.parent)
        self.progress(f"{label}: spark-submit {len(jobs)} job(s) in one JVM; log {log_path}")
        started = time.time()
        results: list | None = None
        error: dict | None = None
        tail: list[str] = []
        with open(log_path, "w") as log:
            log.write("argv: " + json.dumps(argv) + "\n")
            log.flush()
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    env=env, cwd=str(wd), bufsize=1)
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if line.startswith(streamer.RESULT_MARK):
                    results = json.loads(line[len(streamer.RESULT_MARK):])
                elif line.startswith(streamer.ERROR_MARK):
                    error = json.loads(line[len(streamer.ERROR_MARK):])
                elif line.startswith("hudi-cdc: "):
                    self.progress("  " + line[len("hudi-cdc: "):].rstrip())
                tail.append(line.rstrip("\n"))
                if len(tail) > 400:
                    del tail[:200]
            code = proc.wait()
        elapsed = time.time() - started
        if code != 0 or results is None:
            cause = error["message"] if error else root_cause(tail)
            for job in jobs:  # `hudi-cdc status` shows it until a later round commits
                record_failure(self.pipeline, job.table, job.table_type, label, cause)
            if error and error.get("kind") == "input":
                raise DataError(f"{error['message']} (table left unchanged; log: {log_path})")
            raise JobError(f"{label} failed: {cause} (log: {log_path})")
        self.progress(f"{label}: done in {elapsed:.0f}s")
        return results

    # a local run is a child process of the command that started it: nothing to look up later
    def status(self, run_id: str | None = None) -> list[dict]:
        raise NotSupported("status is for runs on emr or emr-serverless; a local run reports in its own command")

    def logs(self, run_id: str, kind: str = "stderr", lines: int = 200) -> str:
        raise NotSupported("logs are for runs on emr or emr-serverless; a local run's log file is "
                           f"under {plan.work_dir(self.pipeline) / 'logs'}")

    def cancel(self, run_id: str) -> str:
        raise NotSupported("cancel is for runs on emr or emr-serverless; stop a local run with Ctrl-C")
