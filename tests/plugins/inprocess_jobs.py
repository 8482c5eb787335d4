"""The `inprocess_jobs` fixture: the local runner's streamer jobs run on the test session's shared SparkSession
instead of in a spark-submit of their own. Opt-in, for tests whose subject is what the job writes, not how it
is launched: a spark-submit costs a JVM start, its class loading and a cold JIT (20-30 CPU s on this 2-core
machine), the shared session is warm.

What runs is the job's own code from its parsed argv (hudi_cdc.jobs.stream.main.run_job, which the job's
`main` calls after building its session): the same rounds, the same RESULT / ERROR / progress lines, written to
the same log file and read into the same `launch.Outcome` the runner judges. A job runs in a spark-submit as
before when the shared session cannot stand in for its JVM: not the streamer (HoodieDeltaStreamer 0.14, the
Iceberg apply), a continuous job (stop files, signals, supervision), a master other than local, a jar the
session does not have (S3's), or a Spark setting other than the ones every local job gets
(hudi_cdc/common/spark_conf.py: the session has them). The launch itself (argv, environment, class-data
sharing, locks held by the child, kill -9, one-line errors from a dead JVM) is proven by the tests that keep
spark-submit: tests/core/test_launch.py, tests/faults/, tests/pipeline/test_e2e.py, tests/runners/."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
import traceback
from pathlib import Path

import pytest

from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, local_conf
from hudi_cdc.jobs.stream.argv import parse_argv
from hudi_cdc.jobs.stream.main import run_job
from hudi_cdc.runners.local import plan
from hudi_cdc.spark import launch

_RUNTIME_CONF = ("spark.sql.shuffle.partitions",)  # set on the session for the job's run, then set back
_IGNORED_CONF = {*local_conf(), "spark.driver.extraJavaOptions",  # the JVM's own: the session has its own
                 # a static setting sized for the pipeline's tables (common/spark_conf.codegen_cache_conf): how much
                 # generated code the JVM keeps, not what a job writes
                 "spark.sql.codegen.cache.maxEntries",
                 # a pipeline with a metastore: the job's session catalog is Hive's. The job's writes do not use
                 # it (Hudi's Hive sync reaches the metastore from the table's properties, hms mode), so the
                 # shared session (in-memory catalog) stands in; readers of the synced tables prove the sync
                 "spark.hadoop.hive.metastore.uris", "spark.sql.catalogImplementation"}


def _split(argv: list[str], script: str):
    """(spark-submit options as (flag, value) pairs, the job's argv) or None when argv is not the streamer's."""
    try:
        at = next(i for i, a in enumerate(argv) if Path(a).resolve() == Path(script))
    except StopIteration:
        return None
    opts, args = [], argv[1:at]
    for i in range(0, len(args) - 1, 2):
        opts.append((args[i], args[i + 1]))
    return opts, argv[at + 1:]


def _stand_in(spark, opts) -> dict[str, str] | None:
    """The runtime settings the job needs on the shared session, or None when it cannot stand in for the JVM."""
    jars = {Path(j).name for j in (spark.conf.get("spark.jars", "") or "").split(",") if j}
    runtime: dict[str, str] = {}
    for flag, value in opts:
        if flag == "--master" and not value.startswith("local"):
            return None
        if flag == "--jars" and not {Path(j).name for j in value.split(",") if j} <= jars:
            return None
        if flag == "--conf":
            key, _, v = value.partition("=")
            if key in _RUNTIME_CONF:
                runtime[key] = v
            elif key not in _IGNORED_CONF and HUDI_SESSION_CONF.get(key) != v:
                return None
    return runtime


def _targets(job_argv: list[str]):
    try:
        return parse_argv(job_argv)
    except SystemExit:  # the job's own "bad streamer arguments" line: the spark-submit gives it
        return None


@contextlib.contextmanager
def _settings(spark, runtime: dict[str, str], env: dict[str, str]):
    """The job's runtime Spark settings and environment (registry credentials, ...) for its run."""
    conf_before = {k: spark.conf.get(k, None) for k in runtime}
    env_before = {k: os.environ.get(k) for k in env if os.environ.get(k) != env[k]}
    for k, v in runtime.items():
        spark.conf.set(k, v)
    os.environ.update({k: env[k] for k in env_before})
    try:
        yield
    finally:
        for k, v in conf_before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
        for k, v in env_before.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)


def _outcome(spark, targets, runtime, env, argv, log_path: Path, progress) -> launch.Outcome:
    started = time.time()
    out = io.StringIO()
    code: int | None
    with _settings(spark, runtime, env), contextlib.redirect_stdout(out):
        try:
            code = int(run_job(spark, targets))
        except Exception:  # a bug in the job: its traceback, as the JVM's output would have it
            traceback.print_exc(file=out)
            code = 1
    lines = out.getvalue().splitlines()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text("argv: " + json.dumps(list(argv)) + "\n" + "".join(line + "\n" for line in lines))
    result, error = None, None
    for line in lines:
        if line.startswith(launch.RESULT_MARK):
            result = json.loads(line[len(launch.RESULT_MARK):])
        elif line.startswith(launch.ERROR_MARK):
            error = json.loads(line[len(launch.ERROR_MARK):])
        elif line.startswith(launch.PROGRESS_PREFIX) and progress is not None:
            progress("  " + line[len(launch.PROGRESS_PREFIX):])
    return launch.Outcome(code=code, result=result, error=error, tail=lines[-launch.TAIL_LINES:],
                          seconds=time.time() - started, log_path=log_path)


@contextlib.contextmanager
def jobs_on(spark):
    """The local runner's streamer jobs on `spark` inside the block (see the module's docstring); the others
    launch. Yields the list of how each launch ran ("session" or "spark-submit"), for tests to check."""
    spawn = launch.Launcher.run
    script = str(Path(plan.job_script()).resolve())
    ran: list[str] = []

    def run(self, argv, *, env, cwd, log_path, progress=None, timeout=None):
        split = _split(list(argv), script)
        targets = _targets(split[1]) if split is not None else None
        runtime = _stand_in(spark, split[0]) if split is not None else None
        if targets is None or runtime is None or any(t.continuous for t in targets):
            ran.append("spark-submit")
            return spawn(self, argv, env=env, cwd=cwd, log_path=log_path, progress=progress, timeout=timeout)
        ran.append("session")
        return _outcome(spark, targets, runtime, dict(env), argv, Path(log_path), progress)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(launch.Launcher, "run", run)
        yield ran


@pytest.fixture
def inprocess_jobs(spark):
    """A test's local runner jobs on the shared session (jobs_on)."""
    with jobs_on(spark) as ran:
        yield ran
