"""Fixtures for tests/inspect/test_inspect*.py: the real Hudi fixture tables, unzipped, and small tables
written here by Spark + the Hudi 1.2.0 bundle (table version 9) with updates, deletes and compaction."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tests.shared import SHARED, missing

FIXTURE_ZIPS = SHARED / "fixtures" / "hudi-tables"


def fixture_zips() -> list[Path]:
    return sorted(FIXTURE_ZIPS.rglob("*.zip"))


def unzip_table(zip_path: Path, dest: Path) -> Path:
    """Unpack one fixture zip (skipping macOS junk); returns the table base path."""
    with zipfile.ZipFile(zip_path) as zf:
        members = [m for m in zf.namelist()
                   if not m.startswith("__MACOSX/") and not m.endswith(".DS_Store")]
        zf.extractall(dest, members)
    return dest / zip_path.stem


@pytest.fixture(scope="session")
def hudi_fixture_tables(tmp_path_factory) -> dict[str, Path]:
    """Every zip in shared/fixtures/hudi-tables unpacked: {"sample_table/cow/v6_empty": base path}."""
    if not FIXTURE_ZIPS.is_dir():
        missing(f"fixture tables not found at {FIXTURE_ZIPS}")
    root = tmp_path_factory.mktemp("hudi-fixtures")
    tables = {}
    for z in fixture_zips():
        rel = z.relative_to(FIXTURE_ZIPS).with_suffix("").as_posix()
        dest = root / rel.replace("/", "__")
        dest.mkdir(parents=True)
        tables[rel] = unzip_table(z, dest)
    return tables


# ---- tables written by Spark + Hudi 1.2.0 --------------------------------------------------------

ARTIST_SCHEMA = "artist_id long, name string, nationality string, __lsn long, __deleted string"
BATCH_1 = [  # bootstrap: 6 artists
    (1, "Robert Arneson", "American", 100, "false"),
    (2, "Doroteo Arnaiz", "Spanish", 101, "false"),
    (3, "Bill Arnold", "American", 102, "false"),
    (4, "Charles Arnoldi", "American", 103, "false"),
    (5, "Per Arnoldi", "Danish", 104, "false"),
    (6, "Danilo Aroldi", "Italian", 105, "false"),
]
BATCH_2 = [  # 2 updates and 1 insert
    (1, "Robert Arneson (updated)", "American", 200, "false"),
    (5, "Per Arnoldi (updated)", "Danish", 201, "false"),
    (7, "Bill Aron", "American", 202, "false"),
]
BATCH_3_DELETES = [(3, None, "American", 300, "true")]  # delete artist 3
BATCH_4 = [(2, "Doroteo Arnaiz (updated)", "Spanish", 400, "false")]
BATCH_5 = [(6, "Danilo Aroldi (updated)", "Italian", 500, "false")]


def jvm_procedure(spark, procedure: str, path: str, limit: int = 1000) -> list:
    """Rows (as dicts) of a Hudi Spark SQL procedure over the table at `path`: Hudi's own JVM reading
    of the timeline. show_commits and stats_wa take only a catalog table, so the table is registered
    (CREATE TABLE ... USING hudi LOCATION) under a name derived from its path."""
    import re

    name = "t_" + re.sub(r"[^A-Za-z0-9]", "_", str(path))[-80:]
    spark.sql(f"CREATE TABLE IF NOT EXISTS {name} USING hudi LOCATION '{path}'")
    target = f"path => '{path}'" if procedure in ("show_compaction", "show_timeline") else f"table => '{name}'"
    return [r.asDict() for r in spark.sql(f"CALL {procedure}({target}, limit => {limit})").collect()]


def _options(name: str, table_type: str) -> dict[str, str]:
    return {
        "hoodie.table.name": name,
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.datasource.write.recordkey.field": "artist_id",
        "hoodie.datasource.write.partitionpath.field": "nationality",
        "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.table.ordering.fields": "__lsn",
        "hoodie.datasource.write.precombine.field": "__lsn",
        "hoodie.upsert.shuffle.parallelism": "2",
        "hoodie.insert.shuffle.parallelism": "2",
        "hoodie.bulkinsert.shuffle.parallelism": "2",
        "hoodie.delete.shuffle.parallelism": "2",
        "hoodie.clean.automatic": "false",
        "hoodie.metadata.enable": "true",
    }


def write_cdc_tables(spark, root: Path) -> dict[str, Path]:
    """A CoW and a MoR artists table the way the pipeline writes them: bulk insert, then upserts and
    a delete; the MoR table is compacted inline once and then has one more compaction scheduled but
    not run (pending)."""
    out = {}
    for table_type, suffix in (("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")):
        name = f"artists_{suffix}"
        path = root / name
        base = _options(name, table_type)

        def write(rows, operation, mode="append", extra=None, base=base, path=path):
            df = spark.createDataFrame(rows, ARTIST_SCHEMA)
            opts = dict(base, **{"hoodie.datasource.write.operation": operation}, **(extra or {}))
            df.write.format("hudi").options(**opts).mode(mode).save(str(path))

        write(BATCH_1, "bulk_insert", mode="overwrite")
        write(BATCH_2, "upsert")
        write(BATCH_3_DELETES, "delete")
        if table_type == "MERGE_ON_READ":
            # compact inline after this deltacommit (3 delta commits since the base files)
            write(BATCH_4, "upsert", extra={"hoodie.compact.inline": "true",
                                            "hoodie.compact.inline.max.delta.commits": "3"})
            # schedule one more compaction without running it: a pending compaction
            write(BATCH_5, "upsert", extra={"hoodie.compact.inline": "false",
                                            "hoodie.compact.schedule.inline": "true",
                                            "hoodie.compact.inline.max.delta.commits": "1"})
        else:
            write(BATCH_4, "upsert")
            write(BATCH_5, "upsert")
        out[suffix] = path
    return out


@pytest.fixture(scope="session")
def spark_written_tables(spark, tmp_path_factory) -> dict[str, Path]:
    """{"cow": path, "mor": path}: v9 tables written by Spark + Hudi 1.2.0 in this test session."""
    return write_cdc_tables(spark, tmp_path_factory.mktemp("spark-written"))
