"""Local runner: pyspark's own spark-submit, the cached Hudi jars, small settings, a log file.

All jobs of one command run in one JVM (the streamer takes several flag groups), which on a
2-core machine saves a JVM start per table. On failure the one-line error carries the root cause
found in the job's output and the log path; nothing secret is put on the command line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Callable, List, Optional, Sequence

from .. import jars as jarcache
from ..config import Pipeline
from ..errors import DataError, EnvironmentProblem, JobError
from ..render import Job, local_argv, write_properties
from ..jobs import streamer

Progress = Callable[[str], None]


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError:
        raise EnvironmentProblem("pyspark is not installed (pip install 'pyspark==3.5.5')") from None
    return Path(pyspark.__file__).parent


def spark_submit() -> Path:
    path = spark_home() / "bin" / "spark-submit"
    if not path.exists():
        raise EnvironmentProblem(f"spark-submit not found in the pyspark package at {path}")
    return path


def find_java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    java = shutil.which("java")
    if not java:
        raise EnvironmentProblem("Java not found: install a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless) "
                                 "or set JAVA_HOME")
    return java


def job_script() -> str:
    return str(Path(streamer.__file__).resolve())


def work_dir(pipeline: Pipeline) -> Path:
    return Path(pipeline.base_dir) / ".hudi-cdc"


def registry_env(pipeline: Pipeline) -> dict:
    """Registry credentials travel to the job through its environment, never argv or files."""
    env = {}
    s = pipeline.source
    if s.registry_username_env and s.registry_password_env:
        user, pw = os.environ.get(s.registry_username_env), os.environ.get(s.registry_password_env)
        if user is None or pw is None:
            raise EnvironmentProblem(
                f"source.registry_username_env/registry_password_env name ${s.registry_username_env} and "
                f"${s.registry_password_env}, but they are not set in the environment")
        env["HUDI_CDC_REGISTRY_USERNAME"], env["HUDI_CDC_REGISTRY_PASSWORD"] = user, pw
    return env


_ROOT_CAUSE = re.compile(r"(Caused by: .*|\w+(?:\.\w+)*(?:Exception|Error): .*)")


def root_cause(lines: Sequence[str]) -> str:
    """The deepest 'Caused by' (or last exception line) of a Spark log."""
    caused = [l.strip() for l in lines if l.strip().startswith("Caused by:")]
    if caused:
        return caused[-1][len("Caused by:"):].strip()
    exc = [m.group(1) for l in lines for m in [_ROOT_CAUSE.search(l)] if m]
    return exc[-1] if exc else (lines[-1].strip() if lines else "no output")


class LocalRunner:
    def __init__(self, pipeline: Pipeline, progress: Progress = print, dry_run: bool = False):
        self.pipeline = pipeline
        self.progress = progress
        self.dry_run = dry_run

    def argv(self, jobs: Sequence[Job], props_dir: Path, jar_paths: Sequence[str]) -> List[str]:
        argv = local_argv(self.pipeline, jobs, props_dir, jar_paths, job_script(),
                          name=f"hudi-cdc-{self.pipeline.pipeline}")
        argv[0] = str(spark_submit()) if not self.dry_run else argv[0]
        return argv

    def preflight(self) -> None:
        """What must be there before a job may touch a table: Java, spark-submit, the jars."""
        find_java()
        spark_submit()
        jarcache.ensure_jars(self.pipeline.hudi.version, self.progress)

    def run(self, jobs: Sequence[Job], label: str) -> List[dict]:
        wd = work_dir(self.pipeline)
        props_dir = wd / "properties"
        if self.dry_run:
            jar_paths = [str(jarcache.cache_dir() / a.filename)
                         for a in jarcache.local_job_artifacts(self.pipeline.hudi.version)]
            argv = self.argv(jobs, props_dir, jar_paths)
            self.progress("dry run: would write properties into " + str(props_dir))
            self.progress("dry run: would run " + json.dumps(argv))
            return [{"dry_run": True, "argv": argv}]
        java = find_java()
        write_properties(self.pipeline, props_dir)
        jar_paths = [str(p) for p in jarcache.ensure_jars(self.pipeline.hudi.version, self.progress)]
        argv = self.argv(jobs, props_dir, jar_paths)
        logs = wd / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log_path = logs / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}.log"
        env = dict(os.environ)
        env.update(registry_env(self.pipeline))
        env["SPARK_HOME"] = str(spark_home())
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, never the machine's public address
        env["PYSPARK_PYTHON"] = sys.executable
        env["PYSPARK_DRIVER_PYTHON"] = sys.executable
        env["JAVA_HOME"] = env.get("JAVA_HOME") or str(Path(java).resolve().parent.parent)
        self.progress(f"{label}: spark-submit {len(jobs)} job(s) in one JVM; log {log_path}")
        started = time.time()
        results: Optional[list] = None
        error: Optional[dict] = None
        tail: List[str] = []
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
            if error and error.get("kind") == "input":
                raise DataError(f"{error['message']} (table left unchanged; log: {log_path})")
            cause = error["message"] if error else root_cause(tail)
            raise JobError(f"{label} failed: {cause} (log: {log_path})")
        self.progress(f"{label}: done in {elapsed:.0f}s")
        return results
