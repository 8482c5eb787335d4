"""`hudi-cdc table downgrade`: convert the pipeline's tables written at a newer table version (9: the
default before hudi.table_version, or 8) to the version the pipeline file says, with Hudi's own
downgrade (spark/downgrade.py), under each table's writer lock. Idempotent (a table already at the
version is left alone), a dry run says what it would do, and an upgrade is refused: writers never
change a table's version (lake/version.py), and this command only goes down."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.config.settings import CURRENT_HUDI
from hudi_cdc.core.lock import table_locks
from hudi_cdc.errors import ConfigError, HudiCdcError, JobError, TablesFailed, TableStateError
from hudi_cdc.lake.version import version_on_disk

Progress = Callable[[str], None]
# what happens to one table: converted (or would be, on a dry run), already there, or not a table yet
CONVERT, AT_VERSION, MISSING = "convert", "at version", "missing"


@dataclass
class Conversion:
    table: str
    table_type: str
    base_path: str
    found: int | None  # hoodie.table.version on disk (None: no table)
    wanted: int
    action: str
    done: bool = False
    seconds: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def plan(pipeline: Pipeline, table: str | None = None, table_type: str | None = None) -> list[Conversion]:
    wanted = pipeline.hudi.writes_table_version
    out = []
    for name, tt in pipeline.targets(table):
        if table_type and tt != table_type:
            continue
        base = pipeline.base_path(name, tt)
        found = version_on_disk(base)
        if found is not None and found < wanted:
            raise TableStateError(f"table {name} ({tt}) at {base} is Hudi table version {found}, older than "
                                  f"hudi.table_version {wanted}: `table downgrade` converts down only "
                                  f"(set hudi.table_version: {found} to keep it)")
        action = MISSING if found is None else AT_VERSION if found == wanted else CONVERT
        out.append(Conversion(name, tt, base, found, wanted, action))
    return out


def downgrade(pipeline: Pipeline, table: str | None = None, table_type: str | None = None, *,
              dry_run: bool = False, spark=None, progress: Progress = log_progress) -> list[Conversion]:
    """Convert every table (or one) of the pipeline to hudi.table_version; the plan when dry_run.
    ``spark``: a SparkSession with the Hudi bundle (default: a local one, started only if needed)."""
    import time

    if dry_run:
        return plan(pipeline, table, table_type)
    if pipeline.hudi.version != CURRENT_HUDI and any(c.action == CONVERT for c in plan(pipeline, table, table_type)):
        raise ConfigError(f"table downgrade runs Hudi {CURRENT_HUDI}'s own downgrade: run it with hudi.version "
                          f"\"{CURRENT_HUDI}\" (this pipeline file: {pipeline.hudi.version})")
    targets = [(c.table, c.table_type) for c in plan(pipeline, table, table_type)]
    with table_locks(pipeline, targets, "table downgrade", progress):
        todo = plan(pipeline, table, table_type)  # again, under the locks: a writer may have finished
        failed: list[tuple[str, str, HudiCdcError]] = []
        for c in todo:
            if c.action != CONVERT:
                continue
            if spark is None:
                from hudi_cdc.query.spark_engine import start_session

                spark = start_session(pipeline, "hudi-cdc-table-downgrade")
            progress(f"{c.table} ({c.table_type}): Hudi table version {c.found} -> {c.wanted} ...")
            start = time.monotonic()
            try:
                convert_one(spark, pipeline, c)
            except HudiCdcError as exc:  # one table's failure does not stop the others
                failed.append((c.table, c.table_type, exc))
                continue
            except Exception as exc:  # noqa: BLE001 - Hudi's / Spark's error, named with its table at the end
                failed.append((c.table, c.table_type, JobError(root_cause(exc))))
                continue
            c.seconds = round(time.monotonic() - start, 1)
            progress(f"{c.table} ({c.table_type}): now table version {c.wanted} ({c.seconds} s)")
    if failed:
        raise TablesFailed("table downgrade", failed, [c.as_dict() for c in todo if c.done], len(
            [c for c in todo if c.action == CONVERT]))
    return todo


def convert_one(spark, pipeline: Pipeline, c: Conversion) -> None:
    from hudi_cdc.spark.downgrade import convert

    convert(spark, hadoop_path(c.base_path), c.table, c.wanted, ",".join(pipeline.table(c.table).ordering_fields))
    after = version_on_disk(c.base_path)
    if after != c.wanted:
        raise TableStateError(f"table {c.table} ({c.table_type}): Hudi's downgrade ended, but the table says "
                              f"version {after}, not {c.wanted}")
    c.done = True


def hadoop_path(uri: str) -> str:
    """What Hadoop's file systems open: file:/... for local tables, s3a:// for S3 (the session's s3a conf)."""
    if uri.startswith("s3://"):
        return "s3a://" + uri[len("s3://"):]
    return uri
