"""The Spark engine: Hudi's Spark datasource on a SparkSession (yours in a notebook, or one the
CLI starts with the Hudi bundle). `as_of_df` and `incremental_df` give DataFrames; the engine
methods collect them to lists of dicts, the shape the native engine returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_cdc.common import py4j_lookups
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.spark_conf import HUDI_SESSION_CONF, as_pairs, local_conf
from hudi_cdc.errors import JobError
from hudi_cdc.query.errors import BadKeyError
from hudi_cdc.query.filters import Condition
from hudi_cdc.query.timeline import BEGINNING, QueryTable

QUERY_TYPE = "hoodie.datasource.query.type"


def _load(spark, path: str, options: dict[str, str]):
    reader = spark.read.format("hudi")
    for k, v in options.items():
        reader = reader.option(k, v)
    try:
        return reader.load(path)
    except Exception as exc:  # AnalysisException, Py4JJavaError: one line with the cause
        raise JobError(f"Spark cannot read {path}: {first_line(exc, 300)}") from None


def _filtered(df, conditions: Sequence[Condition], where: str | None):
    from pyspark.sql import functions as F

    for col, op, value in conditions:
        c = F.col(col)
        if value is None:
            df = df.where(c.isNull() if op == "=" else c.isNotNull())
        else:
            df = df.where({"=": c == value, "!=": c != value, "<>": c != value, "<": c < value,
                           "<=": c <= value, ">": c > value, ">=": c >= value}[op])
    if where:
        try:
            df = df.where(where)
        except Exception as exc:
            raise BadKeyError(f"--where {where!r}: {first_line(exc, 300)}") from None
    return df


def as_of_df(spark, path: str, instant: str, *, read_optimized: bool = False,
             conditions: Sequence[Condition] = (), where: str | None = None):
    """The table as of `instant` (a commit's requested time, as Hudi's as.of.instant compares)."""
    options = {"as.of.instant": instant}
    if read_optimized:
        options[QUERY_TYPE] = "read_optimized"
    return _filtered(_load(spark, path, options), conditions, where)


def incremental_df(spark, path: str, begin: str, end: str, *, conditions: Sequence[Condition] = (),
                   where: str | None = None):
    """Records upserted by the commits that completed in (begin, end] (completion times on v8+)."""
    options = {QUERY_TYPE: "incremental", "hoodie.datasource.read.begin.instanttime": begin or BEGINNING,
               "hoodie.datasource.read.end.instanttime": end}
    return _filtered(_load(spark, path, options), conditions, where)


def collect(df) -> list[dict[str, Any]]:
    try:
        return [r.asDict(recursive=True) for r in df.collect()]
    except Exception as exc:
        raise JobError(f"Spark read failed: {first_line(exc, 300)}") from None


class SparkEngine:
    name = "spark"

    def __init__(self, spark):
        self.spark = spark

    def as_of(self, qt: QueryTable, instant: str, *, conditions: Sequence[Condition] = (),
              where: str | None = None, read_optimized: bool = False) -> list[dict[str, Any]]:
        return collect(as_of_df(self.spark, qt.read_uri, instant, read_optimized=read_optimized,
                                conditions=conditions, where=where))

    def incremental(self, qt: QueryTable, begin: str, end: str, *, conditions: Sequence[Condition] = (),
                    where: str | None = None) -> list[dict[str, Any]]:
        return collect(incremental_df(self.spark, qt.read_uri, begin, end, conditions=conditions, where=where))


def start_session(pipeline=None, app_name: str = "hudi-cdc-query"):
    """A local SparkSession with the Hudi bundle, for the CLI (a notebook passes its own)."""
    import os

    from pyspark.sql import SparkSession

    from hudi_cdc.common import s3
    from hudi_cdc.config.settings import CURRENT_HUDI
    from hudi_cdc.core import render
    from hudi_cdc.toolchain import jars

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    version = pipeline.hudi.version if pipeline is not None else CURRENT_HUDI
    # s3a for s3:// tables: a pipeline on S3, or (no pipeline, --path) an endpoint in the environment
    use_s3 = pipeline.uses_s3 if pipeline is not None else bool(s3.endpoint().url)
    builder = (SparkSession.builder.master(pipeline.spark.master if pipeline is not None else "local[2]")
               .appName(app_name)
               .config("spark.jars", ",".join(str(p) for p in jars.ensure_jars(version, s3=use_s3)))
               .config("spark.driver.memory", pipeline.spark.driver_memory if pipeline is not None else "2g")
               .config("spark.ui.showConsoleProgress", "false"))
    confs = render.spark_confs_local(pipeline) if pipeline is not None else [
        *as_pairs(local_conf()), *as_pairs(HUDI_SESSION_CONF),
        *(as_pairs(s3.hadoop_conf(s3.endpoint())) if use_s3 else []),
    ]
    for kv in confs:
        k, _, v = kv.partition("=")
        builder = builder.config(k, v)
    spark = py4j_lookups.install_for(builder.getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark
