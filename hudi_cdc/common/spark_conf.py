"""The Spark settings every Hudi session needs: Kryo with Hudi's registrator, Hudi's SQL extension
and catalog. One place for the local job, the query engine, the thrift server and rendered argv.

Standard library only: the local streamer job (hudi_cdc/jobs/) imports it in the Spark driver.
"""

from __future__ import annotations

from collections.abc import Mapping

# What the typed lake (hudi_cdc/common/lake_types.py, docs/types.md) needs of every session that writes or
# reads it: arrays holding NULL elements written in Parquet's 3-level list form (the old 2-level form
# refuses them: "Array contains a null element"); pre-1582 and BC dates and timestamps written and read
# as they are (proleptic Gregorian, as PostgreSQL has them), never rebased or refused; UTC as the
# session time zone, so what Spark shows of a timestamp is the wall clock / UTC instant stored.
TYPED_LAKE_CONF: dict[str, str] = {
    "spark.hadoop.parquet.avro.write-old-list-structure": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.parquet.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.datetimeRebaseModeInRead": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInWrite": "CORRECTED",
    "spark.sql.parquet.int96RebaseModeInRead": "CORRECTED",
    "spark.sql.avro.datetimeRebaseModeInWrite": "CORRECTED",
    "spark.sql.avro.datetimeRebaseModeInRead": "CORRECTED",
}
# Kryo with Hudi's registrator and Hudi's SQL extension, and the typed lake's settings (what the EMR
# steps pass)
HUDI_EXTENSION_CONF: dict[str, str] = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    **TYPED_LAKE_CONF,
}
# ... and Hudi's catalog as the session catalog (local jobs, queries, the thrift server)
HUDI_SESSION_CONF: dict[str, str] = {
    **HUDI_EXTENSION_CONF,
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}


def local_conf(parallelism: int = 2, host: str = "127.0.0.1") -> dict[str, str]:
    """A local (or driver-side) session's defaults: small shuffles for a small machine, no adaptive execution
    (a pipeline's `spark.conf` may turn it back on, e.g. with many shuffle partitions on a cluster), no UI, the
    driver bound to one address. One place for the local job, the query engine, the Iceberg apply, the thrift
    server and the tests' shared session."""
    return {
        "spark.sql.shuffle.partitions": str(parallelism),
        "spark.default.parallelism": str(parallelism),
        # adaptive execution plans a query stage by stage, each stage its own Spark job: a small MoR round ran
        # 43-55 jobs with it, 31-40 without, and 5-10% less CPU (docs/measurements.md, session 41); with a
        # handful of shuffle partitions it has nothing to coalesce or split
        "spark.sql.adaptive.enabled": "false",
        "spark.ui.enabled": "false",
        "spark.driver.host": host,
        "spark.driver.bindAddress": host,
    }


# Spark keeps the classes it generates for queries in a cache of 100 (`spark.sql.codegen.cache.maxEntries`, a
# static setting, read when the application starts). A table's rounds generate 25-40 classes of their own
# (their code follows the table's column types), so one application streaming more than a few tables of
# different columns compiled ~29 classes again every round: 10 such tables, 3.11 CPU s a round and 29.4 classes
# compiled, against 2.42 s and none with room for all (`python -m benchmarks.codegen_cache`, docs/measurements.md).
# Evicted classes held as much metaspace until unloaded as the kept ones did.
CODEGEN_CLASSES_PER_TABLE = 40


def codegen_cache_conf(table_jobs: int) -> dict[str, str]:
    """Room in Spark's generated-code cache for the classes of `table_jobs` tables' rounds (one per table and
    table type the application may write); nothing where Spark's own 100 is room enough."""
    entries = CODEGEN_CLASSES_PER_TABLE * table_jobs
    return {"spark.sql.codegen.cache.maxEntries": str(entries)} if entries > 100 else {}


def as_pairs(conf: Mapping[str, str]) -> list[str]:
    """key=value strings, as spark-submit's --conf takes them."""
    return [f"{k}={v}" for k, v in conf.items()]


def configure(builder, conf: Mapping[str, str] = HUDI_SESSION_CONF):
    """A SparkSession builder with every setting of conf."""
    for k, v in conf.items():
        builder = builder.config(k, v)
    return builder
