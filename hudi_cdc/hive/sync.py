"""Re-sync a table to the Hive metastore without writing data: Hudi's own HiveSyncTool, hms mode.

``org.apache.hudi.hive.HiveSyncTool`` (in the Hudi Spark bundle) has a command-line main; it needs
no Spark session, only Hadoop/Hive classes, which the pyspark wheel's jars provide. Every target is
synced in ONE JVM (sync_jvm.py: ``HiveSyncTool.main`` called with ``--base-path P --database DB --table
T --sync-mode hms --metastore-uris thrift://...`` for each, the Hudi bundle and Spark's jars on its
classpath). It creates the database, the table (CoW: ``<t>``; MoR: ``<t>_ro`` and ``<t>_rt``) and the
partitions, or brings them up to date with the latest commit. One target's failure does not stop the
others: the command ends naming each failed target (TablesFailed).
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hudi_cdc.config import history_name
from hudi_cdc.errors import ConfigError, HudiCdcError, TablesFailed, TableStateError
from hudi_cdc.hive.sync_jvm import SyncJvm

MULTI_PART_EXTRACTOR = "org.apache.hudi.hive.MultiPartKeysValueExtractor"
# what spark-submit adds for Java 17 (org.apache.spark.launcher.JavaModuleOptions)
JAVA17_OPTIONS = ["-XX:+IgnoreUnrecognizedVMOptions", "-Djdk.reflect.useDirectMethodHandle=false"] + [
    f"--add-opens=java.base/{p}=ALL-UNNAMED" for p in (
        "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
        "sun.security.action", "sun.util.calendar")]


JVM_OPTIONS = ["-Xmx512m", *JAVA17_OPTIONS]


def sync_args(pipeline, table: str, table_type: str, metastore_uri: str, history: bool = False) -> list[str]:
    """HiveSyncTool's arguments for a table, or (history) for its history table: `<t>_history`, no partitions."""
    t = pipeline.table(table)
    base = pipeline.history_base_path(table, table_type) if history else pipeline.base_path(table, table_type)
    argv = ["--base-path", base,
            "--database", pipeline.hive_db(table_type),
            "--table", history_name(table) if history else table,
            "--sync-mode", "hms",
            "--metastore-uris", metastore_uri,
            "--auto-create-database",
            "--support-timestamp"]  # typed timestamps as TIMESTAMP, not BIGINT (the properties' support_timestamp)
    if t.partition_field and not history:
        argv += ["--partitioned-by", t.partition_field, "--partition-value-extractor", MULTI_PART_EXTRACTOR]
    # else: Hudi infers partition fields and extractor from the table's hoodie.properties
    return argv


def _classpath(pipeline, conf_dir: Path, progress=None) -> str:
    """The Hudi bundle and Spark's jars; on s3:// lakes also s3a and a core-site.xml (conf_dir) with
    the endpoint settings (no keys: s3a finds them through the AWS default chain)."""
    from hudi_cdc.toolchain.jars import ensure_jars
    from hudi_cdc.toolchain.java_spark import spark_jars

    jars = ensure_jars(pipeline.hudi.version, progress, s3=pipeline.uses_s3)
    bundle = [str(p) for p in jars if "hudi-spark" in p.name or p.name.startswith(("hadoop-aws", "aws-java-sdk"))]
    head: list[str] = []
    if pipeline.uses_s3:
        from hudi_cdc.common.s3 import hadoop_conf
        from hudi_cdc.stack.metastore import hive_site

        (conf_dir / "core-site.xml").write_text(hive_site(hadoop_conf(pipeline.s3_endpoint(), prefix="")))
        head = [str(conf_dir)]
    return os.pathsep.join(head + bundle + [f"{spark_jars()}/*"])


def _java() -> str:
    from hudi_cdc.toolchain.java_spark import find_java

    return str(find_java(11, "Hive sync"))


def sync(pipeline, table: str | None = None, table_type: str | None = None,
         metastore_uri: str | None = None, progress: Callable[[str], None] | None = None,
         timeout: float = 600.0) -> list[dict[str, object]]:
    """Run HiveSyncTool for each target of table (all tables by default); one row per target."""
    uri = metastore_uri or pipeline.lake.hive_metastore
    if not uri:
        raise ConfigError(f"lake.hive_metastore: not set ({pipeline.source_file}); e.g. thrift://127.0.0.1:9083 "
                          "(hudi-cdc local up), or pass --metastore")
    targets = [(n, tt) for n, tt in pipeline.targets(table) if table_type is None or tt == table_type]
    if not targets:
        raise ConfigError(f"table {table!r} has no {table_type} target in {pipeline.source_file}")
    with tempfile.TemporaryDirectory(prefix="hudi-cdc-hive-sync-") as conf_dir:
        cp = _classpath(pipeline, Path(conf_dir), progress)
        return _sync_each(pipeline, targets, uri, cp, progress, timeout)


def _sync_each(pipeline, targets, uri: str, cp: str, progress, timeout: float) -> list[dict[str, object]]:
    """Every target synced in one JVM, one after the other; one target's failure does not stop the others
    (TablesFailed names each failed one at the end)."""
    env = None
    if pipeline.uses_s3:
        from hudi_cdc.common.s3 import endpoint_env

        env = {**os.environ, **endpoint_env(pipeline.s3_endpoint())}
    # each table, then its history table (history: scd2)
    every = [(n, tt, False) for n, tt in targets] + [(n, tt, True) for n, tt in targets if pipeline.table(n).history]
    rows: list[dict[str, object]] = []
    failed: list[tuple[str, str, HudiCdcError]] = []
    with tempfile.TemporaryDirectory(prefix="hudi-cdc-hive-sync-log-") as logs, \
            SyncJvm(_java(), JVM_OPTIONS, cp, env, Path(logs) / "hive-sync.log") as jvm:
        for name, tt, history in every:
            try:
                rows.append(_sync_one(pipeline, name, tt, history, uri, jvm, progress, timeout))
            except HudiCdcError as exc:
                failed.append((history_name(name) if history else name, tt, exc))
    if failed:
        raise TablesFailed("hive sync", failed, rows, len(every))
    return rows


def _sync_one(pipeline, name: str, tt: str, history: bool, uri: str, jvm: SyncJvm, progress,
              timeout: float) -> dict[str, object]:
    from hudi_cdc.common import storage

    base = pipeline.history_base_path(name, tt) if history else pipeline.base_path(name, tt)
    if not storage.is_dir(storage.join(base, ".hoodie")):
        raise TableStateError(f"{base} is not a Hudi table yet (no .hoodie); run hudi-cdc bootstrap first")
    label = history_name(name) if history else name
    if progress:
        progress(f"syncing {base} -> {pipeline.hive_db(tt)}.{label} ({uri})")
    t0 = time.monotonic()
    jvm.call(sync_args(pipeline, name, tt, uri, history), f"{label} ({tt}) to {uri}", timeout)
    suffixes = [""] if tt == "COPY_ON_WRITE" else ["_ro", "_rt"]
    return {"table": label, "type": tt, "base_path": base,
            "hive_tables": ", ".join(f"{pipeline.hive_db(tt)}.{label}{s}" for s in suffixes),
            "seconds": round(time.monotonic() - t0, 1)}
