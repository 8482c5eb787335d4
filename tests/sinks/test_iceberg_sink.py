"""`hudi-cdc apply --engine iceberg` on real Spark + Iceberg 1.9.2 (its own spark-submit) equals the Hudi
CoW table (real Spark + Hudi 1.2.0, the shared session) on the same landed stream: same-millisecond
updates, key-only deletes, partition moves, stale events (updates and a delete), redelivered files, a
delete and a newer re-insert. The Iceberg table is read back with pyiceberg (no JVM), by key and every
data column, after every round; both also equal the state replayed from the events (sample.replay)."""

from __future__ import annotations

import glob
import json

import pytest

from hudi_cdc.sinks import iceberg
from tests.jobs.test_cdc_semantics import Lake
from tests.sinks.sink_stream import (
    ALL_COLS,
    ROUNDS,
    SHAPE,
    SHAPED_COLS,
    SHAPED_ROUNDS,
    check_round,
    check_shaped_round,
    shaped_expected,
)

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]


def iceberg_rows(pipeline, cols: list[str] = ALL_COLS) -> dict:
    from pyiceberg.table import StaticTable

    loc = iceberg.table_location(pipeline, "artists")[len("file://"):]
    versions = glob.glob(f"{loc}/metadata/v*.metadata.json")
    newest = max(versions, key=lambda p: int(p.rsplit("/v", 1)[1].split(".")[0]))
    rows = StaticTable.from_metadata("file://" + newest).scan().to_arrow().to_pylist()
    out = {r["artist_id"]: {c: r[c] for c in cols} for r in rows}
    assert len(out) == len(rows), "a key is in the Iceberg table twice"
    return out


def check(lake: Lake) -> dict:
    hudi = {k: {c: v[c] for c in ALL_COLS} for k, v in lake.table("COPY_ON_WRITE").items()}
    ice = iceberg_rows(lake.pipeline)
    assert ice == hudi, "the Iceberg table differs from the Hudi CoW table"
    lake.assert_matches()
    return ice


def test_iceberg_apply_equals_hudi_cow(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("COPY_ON_WRITE",))
    rows: dict = {}
    for i, events in enumerate(ROUNDS):
        lake.land(events)
        lake.run("BULK_INSERT" if i == 0 else "UPSERT")
        r = iceberg.apply(lake.pipeline, "artists", print)
        if i == 0:
            assert r["staged_events"] == len(events)
        assert r["staged_files"] == 1  # only the new file: the applied-files log is the high-water mark
        previous, rows = rows, check(lake)
        check_round(i, rows, previous)


def test_shaped_iceberg_apply_equals_hudi_cow(tmp_path, spark, monkeypatch):
    """A shaped table (tests/sinks/sink_stream.py's SHAPE, name hashed by the streamer with the salt from
    the environment, a derived partition): after each of two rounds (rows moving into and out of the
    filter, a delete of a row never held) the Iceberg table equals the Hudi CoW table and the shaped
    replayed state, value by value; the salt is in no statement the job ran."""
    from hudi_cdc.common.shaping import mask_hash

    salt = "iceberg-salt-41"
    monkeypatch.setenv("HUDI_CDC_TEST_SALT", salt)
    lake = Lake(tmp_path, spark, types=("COPY_ON_WRITE",), source_options={"mask_salt_env": "HUDI_CDC_TEST_SALT"},
                table_options={**SHAPE, "mask": {"name": "hash"}, "partition_field": "label"})
    for i, events in enumerate(SHAPED_ROUNDS[:2]):
        lake.land(events)
        lake.run("BULK_INSERT" if i == 0 else "UPSERT")
        r = iceberg.apply(lake.pipeline, "artists", print)
        assert r["staged_files"] == 1
        hudi = {k: {c: v[c] for c in SHAPED_COLS} for k, v in lake.table("COPY_ON_WRITE").items()}
        ice = iceberg_rows(lake.pipeline, SHAPED_COLS)
        assert ice == hudi, f"round {i}: the shaped Iceberg table differs from the Hudi CoW table"
        assert ice == shaped_expected(lake.events, lambda v: mask_hash(v, salt)), f"round {i}: not the shaped replay"
        check_shaped_round(i, ice)
    plan = iceberg.plan(lake.pipeline, "artists")
    assert "${env:HUDI_CDC_TEST_SALT}" in json.dumps(plan) and salt not in json.dumps(plan)
    logs = list((lake.pipeline.work_dir / "logs").glob("*iceberg*.log"))
    assert logs and not [p for p in logs if salt in p.read_text(errors="replace")], "the salt is in a job's log"


def test_an_unset_salt_stops_the_spark_statement(spark):
    """The rendered hash's salt reference (sinks/shaped.py's salt_sql) on real Spark: a variable the
    driver's environment does not hold stops the statement rather than hash with the reference's text."""
    from hudi_cdc.sinks.shaped import salt_sql

    with pytest.raises(Exception, match="HUDI_CDC_TEST_NEVER_SET .*is not set or empty"):
        spark.sql(f"SELECT sha2(concat({salt_sql('HUDI_CDC_TEST_NEVER_SET')}, 'x'), 256) AS h").collect()
    home = spark.sql(f"SELECT {salt_sql('HOME')} AS s").first().s  # set in the driver's environment: its value
    assert home and "${" not in home
