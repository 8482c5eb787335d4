"""The SCD type 2 version logic (jobs/stream/history.py) on small local DataFrames: which events open
a version, where ranges end, and that recomputing with the stored versions is idempotent (a redelivery
changes nothing) and puts a late event at its place. The real rounds: tests/jobs/test_history.py."""

from __future__ import annotations

import pytest

from hudi_cdc.jobs.stream import history as h

pytestmark = pytest.mark.spark

SCHEMA = "id INT, name STRING, __op STRING, __lsn BIGINT, __source_ts_ms BIGINT, _hoodie_is_deleted BOOLEAN"


def _events(spark, rows):
    """(id, name, op, lsn) -> the round's events as the streamer reads them."""
    data = [(i, n, op, lsn, lsn * 1000, op == "d") for i, n, op, lsn in rows]
    return h.round_events(spark.createDataFrame(data, SCHEMA), ["id"], "__lsn", "__source_ts_ms")


def _ranges(df):
    return sorted((r["id"], r["name"], r[h.FROM_LSN], r[h.TO_LSN], r[h.CURRENT], r[h.OP])
                  for r in df.collect())


def test_versions_open_close_and_ignore_unchanged(spark):
    ev = _events(spark, [(1, "a", "c", 10), (1, "b", "u", 20), (1, "b", "u", 25),  # 25 changes nothing visible
                         (1, None, "d", 30), (1, "c", "c", 40), (2, "x", "r", 5), (3, None, "d", 7)])
    v = h.versions(ev, ["id"])
    assert _ranges(v) == [(1, "a", 10, 20, False, "c"), (1, "b", 20, 30, False, "u"), (1, "c", 40, None, True, "c"),
                          (2, "x", 5, None, True, "r")]
    first = v.where("id = 1 AND __valid_from_lsn = 10").first()
    assert str(first[h.FROM_TS]) == "1970-01-01 00:00:10" and str(first[h.TO_TS]) == "1970-01-01 00:00:20"
    assert h.value_columns(v.columns, ["id"]) == ["id", "name"]


def test_recompute_is_idempotent_and_places_late_events(spark):
    stored = h.versions(_events(spark, [(1, "a", "c", 10), (1, "b", "u", 20), (1, None, "d", 30)]), ["id"])
    stored = spark.createDataFrame(stored.collect(), stored.schema)  # as read back from the table
    # a redelivery of every event: nothing to write
    again = _events(spark, [(1, "a", "c", 10), (1, "b", "u", 20), (1, None, "d", 30)])
    redo = h.versions(again.unionByName(h.stored_events(stored, ["id"]), allowMissingColumns=True), ["id"])
    assert h.changes(redo, stored, ["id"]).count() == 0
    # a late update at 15 re-cuts [10,20); one at 25 equal to the version then open opens nothing
    late = _events(spark, [(1, "a2", "u", 15), (1, "b", "u", 25)])
    redo = h.versions(late.unionByName(h.stored_events(stored, ["id"]), allowMissingColumns=True), ["id"])
    assert _ranges(redo) == [(1, "a", 10, 15, False, "c"), (1, "a2", 15, 20, False, "u"),
                             (1, "b", 20, 30, False, "u")]
    diff = {(r["name"], r[h.FROM_LSN], r[h.TO_LSN], r[h.DELETED]) for r in h.changes(redo, stored, ["id"]).collect()}
    assert diff == {("a", 10, 15, False), ("a2", 15, 20, False)}
    # a late update equal to the next version makes that one redundant: removed
    late = _events(spark, [(1, "b", "u", 15)])
    redo = h.versions(late.unionByName(h.stored_events(stored, ["id"]), allowMissingColumns=True), ["id"])
    diff = {(r[h.FROM_LSN], r[h.TO_LSN], r[h.DELETED]) for r in h.changes(redo, stored, ["id"]).collect()}
    assert diff == {(10, 15, False), (15, 30, False), (20, None, True)}


def test_truncate_ends_every_open_version(spark):
    stored = h.versions(_events(spark, [(1, "a", "c", 10), (2, "b", "c", 12), (3, "c", "c", 14), (3, None, "d", 16)]),
                        ["id"])
    keys = stored.where(h.open_at(stored, 20)).select("id")
    ends = h.truncate_events(keys, ["id"], [(20, None)])
    ev = _events(spark, [(2, "b2", "u", 25)])
    redo = h.versions(ev.unionByName(h.stored_events(stored, ["id"]), allowMissingColumns=True)
                      .unionByName(ends, allowMissingColumns=True), ["id"])
    assert _ranges(redo) == [(1, "a", 10, 20, False, "c"), (2, "b", 12, 20, False, "c"),
                             (2, "b2", 25, None, True, "u"), (3, "c", 14, 16, False, "c")]


def test_versions_carry_the_commit_before_their_transaction(spark):
    """Two interleaved transactions (T1: id 1 at LSN 200, commits at 400; T2: id 2 at LSN 300, commits at
    350), streamed in commit order with Debezium's source.sequence: at T2's cut (350) the WHERE `query
    consistent` prints keeps id 1's old version; recomputed from the stored versions, nothing changes."""
    from hudi_cdc.query.consistent_sql import validity_where

    schema = SCHEMA + ", __sequence STRING"
    rows = [(1, "a", "r", 100, 100000, False, None), (2, "b", "r", 100, 100000, False, None),
            (2, "b2", "u", 300, 300000, False, '["100","300"]'), (1, "a2", "u", 200, 200000, False, '["350","200"]')]
    v = h.versions(h.round_events(spark.createDataFrame(rows, schema), ["id"], "__lsn", "__source_ts_ms"), ["id"])
    prev = sorted((r["id"], r[h.FROM_LSN], r[h.FROM_PREV], r[h.TO_PREV]) for r in v.collect())
    assert prev == [(1, 100, 99, 350), (1, 200, 350, None), (2, 100, 99, 100), (2, 300, 100, None)]
    for cut, want in ((100, {1: "a", 2: "b"}), (350, {1: "a", 2: "b2"}), (400, {1: "a2", 2: "b2"})):
        assert {r["id"]: r["name"] for r in v.where(validity_where(cut)).collect()} == want, cut
    stored = spark.createDataFrame(v.collect(), v.schema)
    redo = h.versions(h.stored_events(stored, ["id"]), ["id"])
    assert h.changes(redo, stored, ["id"]).count() == 0
