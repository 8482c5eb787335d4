"""`hudi-cdc apply --engine iceberg` on real Spark + Iceberg 1.9.2 (its own spark-submit) equals the Hudi
CoW table (real Spark + Hudi 1.2.0, the shared session) on the same landed stream: same-millisecond
updates, key-only deletes, partition moves, stale events (updates and a delete), redelivered files, a
delete and a newer re-insert. The Iceberg table is read back with pyiceberg (no JVM), by key and every
data column, after every round; both also equal the state replayed from the events (sample.replay)."""

from __future__ import annotations

import glob

import pytest

from hudi_cdc.sinks import iceberg
from tests.test_cdc_semantics import DATA_COLS, SNAPSHOT, Lake, ev

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]
ALL_COLS = DATA_COLS + ["__db", "__table", "__schema", "__source_ts_ms"]


def same_ms(aid, lsn, ts, **kw):
    e = ev(aid, lsn, **kw)
    e["__source_ts_ms"] = ts
    return e


def iceberg_rows(pipeline) -> dict:
    from pyiceberg.table import StaticTable

    loc = iceberg.table_location(pipeline, "artists")[len("file://"):]
    versions = glob.glob(f"{loc}/metadata/v*.metadata.json")
    newest = max(versions, key=lambda p: int(p.rsplit("/v", 1)[1].split(".")[0]))
    rows = StaticTable.from_metadata("file://" + newest).scan().to_arrow().to_pylist()
    out = {r["artist_id"]: {c: r[c] for c in ALL_COLS} for r in rows}
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
    progress = print

    # round 0: snapshot plus two updates of key 2 in the same millisecond (the LSN decides)
    lake.land(SNAPSHOT[:12] + [same_ms(2, 151, 5000, name="two-late"), same_ms(2, 150, 5000, name="two-early")])
    lake.run("BULK_INSERT")
    r = iceberg.apply(lake.pipeline, "artists", progress)
    assert r["staged_events"] == 14 and r["staged_files"] == 1
    rows = check(lake)
    assert rows[2]["name"] == "two-late"

    # round 1: partition move, key-only delete (null partition), stale update, same-ms pair in
    # reversed file order, and a delete + newer insert of one key in one file
    round1 = [ev(1, 200, nat="German", name="moved"), ev(3, 210, deleted=True), ev(4, 50, name="stale"),
              same_ms(5, 221, 7000, name="five-b"), same_ms(5, 220, 7000, name="five-a"),
              ev(7, 230, deleted=True), ev(7, 240, name="seven-back")]
    lake.land(round1)
    lake.run("UPSERT")
    r = iceberg.apply(lake.pipeline, "artists", progress)
    assert r["staged_files"] == 1  # only the new file: the applied-files log is the high-water mark
    rows = check(lake)
    assert rows[1]["nationality"] == "German" and 3 not in rows and rows[4]["name"] == "artist 4"
    assert rows[5]["name"] == "five-b" and rows[7]["name"] == "seven-back"

    # round 2: the whole round-1 file redelivered, an update of key 3 older than its delete, and a
    # stale delete of key 6 (older than its row): nothing changes
    lake.land(round1 + [ev(3, 205, name="older than the delete"), ev(6, 90, deleted=True)])
    lake.run("UPSERT")
    iceberg.apply(lake.pipeline, "artists", progress)
    assert check(lake) == rows

    # round 3: key 3 comes back with a newer change; a key deleted before it was ever seen stays absent
    lake.land([ev(3, 400, nat="French", name="three-back"), ev(8, 410, deleted=True)])
    lake.run("UPSERT")
    iceberg.apply(lake.pipeline, "artists", progress)
    rows = check(lake)
    assert rows[3]["name"] == "three-back" and 8 not in rows
