"""`hudi-cdc apply --engine iceberg`: the rendered Spark SQL (templates/sql/spark) run for real on local
Spark with Iceberg's Spark runtime from Maven Central and a Hadoop catalog under lake.root/iceberg.

One spark-submit per call (its own JVM: the Hudi session of other commands is not disturbed). The
high-water mark is the table's applied-files log (<table>__applied_files), written after the merges:
a crash in between re-applies those files, which changes nothing (stale and redelivered events are
no newer than the stored rows and tombstones).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from hudi_cdc.common.spark_conf import local_conf
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline, is_s3_uri
from hudi_cdc.core import lock
from hudi_cdc.errors import ConfigError, JobError
from hudi_cdc.sinks.base import Statement, render_sql
from hudi_cdc.spark import launch
from hudi_cdc.toolchain import jars as jarcache
from hudi_cdc.toolchain.java_spark import find_java, spark_home, spark_submit
from hudi_cdc.toolchain.maven import Artifact

ICEBERG_VERSION = "1.9.2"  # iceberg-spark-runtime-3.5_2.12 on Maven Central; runs on Java 17
CATALOG = "iceberg"
JOB_SCRIPT = Path(__file__).resolve().parent.parent / "jobs" / "iceberg_apply.py"
RESULT_MARK = launch.RESULT_MARK
ERROR_MARK = launch.ERROR_MARK

Progress = Callable[[str], None]


def runtime() -> Artifact:
    return Artifact("org.apache.iceberg", f"iceberg-spark-runtime-3.5_{jarcache.SCALA}", ICEBERG_VERSION)


def warehouse(pipeline: Pipeline) -> str:
    return f"{pipeline.lake_root}/iceberg"


def table_location(pipeline: Pipeline, table: str) -> str:
    """Where the Hadoop catalog keeps the table (for readers such as pyiceberg)."""
    return f"{warehouse(pipeline)}/{pipeline.lake.hive_database}/{table}"


def session_conf(pipeline: Pipeline) -> dict[str, str]:
    conf = {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{CATALOG}.warehouse": warehouse(pipeline),
        "spark.sql.session.timeZone": "UTC",
        **local_conf(pipeline.spark.shuffle_partitions),
        "spark.driver.memory": pipeline.spark.driver_memory,
    }
    conf.update(pipeline.spark.conf)
    return conf


def plan(pipeline: Pipeline, table: str, statements: list[Statement] | None = None) -> dict:
    sts = statements if statements is not None else render_sql(pipeline, "spark", table)
    ns = f"{CATALOG}.`{pipeline.lake.hive_database}`"
    shape = pipeline.shape(table)
    salt_env = shape.salt_env if shape.mask_in == "streamer" and shape.hashed else None
    return {"table": table, "statements": [{"name": s.name, "sql": s.sql} for s in sts],
            "report": {"stage": f"{ns}.`{table}__stage`", "target": f"{ns}.`{table}`"}, "salt_env": salt_env}


def argv(pipeline: Pipeline, plan_file: str, jar_paths: list[str]) -> list[str]:
    out = [str(spark_submit()), "--master", pipeline.spark.master, "--name", f"hudi-cdc-iceberg-{pipeline.pipeline}",
           "--jars", ",".join(jar_paths)]
    for k, v in session_conf(pipeline).items():
        out += ["--conf", f"{k}={v}"]
    return out + [str(JOB_SCRIPT), plan_file]


def _writer_lock(pipeline: Pipeline, table: str, progress: Progress):
    """One writer per Iceberg table (local lakes; the Hadoop catalog has no lock of its own)."""
    if is_s3_uri(pipeline.lake_root):
        return contextlib.nullcontext()
    return lock.table_lock(pipeline, table, lock.ICEBERG, "apply --engine iceberg", progress)


def _check_salt(pipeline: Pipeline, table: str) -> None:
    """A hash the job computes (mask_in: streamer) reads the salt through Spark's ${env:...} inside a SQL
    string literal (sinks/shaped.py): set, and holding no quote or backslash (a literal would end or
    unescape there, and the hash would silently differ from the streamer's)."""
    shape = pipeline.shape(table)
    if shape.mask_in != "streamer" or not shape.hashed:
        return
    salt = pipeline.mask_salt(table) or ""
    if "'" in salt or "\\" in salt:
        raise ConfigError(f"source.mask_salt_env: the salt in {shape.salt_env} holds a quote or backslash, which "
                          f"Spark SQL's string literal would not keep as is; table {table} hashes with it in SQL")


def apply(pipeline: Pipeline, table: str, progress: Progress = log_progress) -> dict:
    """Apply the landed files not applied yet to the Iceberg table; returns the job's counts."""
    _check_salt(pipeline, table)
    java = find_java(17, "Spark")
    jar_paths = [str(jarcache.ensure(a, progress)) for a in (runtime(), jarcache.spark_avro())]
    work = pipeline.work_dir
    logs = work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    label = f"iceberg-{table}"
    log_path = logs / f"{datetime.now().strftime('%Y%m%dT%H%M%S')}-{label}.log"
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=work, delete=False) as fh:
        json.dump(plan(pipeline, table), fh)
        plan_file = fh.name
    cmd = argv(pipeline, plan_file, jar_paths)
    env = launch.spark_env(spark_home=spark_home(), python=sys.executable,
                           java_home=os.environ.get("JAVA_HOME") or Path(java).resolve().parent.parent)
    progress(f"{label}: spark-submit (Iceberg {ICEBERG_VERSION}); log {log_path}")
    started = time.time()
    try:
        with _writer_lock(pipeline, table, progress):  # the JVM inherits it and dies with this process
            out = launch.Launcher().run(cmd, env=env, cwd=work, log_path=log_path, progress=progress)
    finally:
        Path(plan_file).unlink(missing_ok=True)
    result = out.result
    if not out.ok or result is None:
        raise JobError(f"{label} failed: {out.cause()} (log: {log_path})")
    result["seconds"] = round(time.time() - started, 1)
    progress(f"{label}: {result.get('staged_events', 0)} event(s) from {result.get('staged_files', 0)} file(s); "
             f"{result['target_rows']} row(s); done in {result['seconds']:.0f}s")
    return result
