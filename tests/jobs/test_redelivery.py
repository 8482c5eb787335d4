"""Redelivery without phantom versions (issue 11), on real Spark + Hudi 1.2.0, CoW and MoR.

Kafka Connect and Debezium deliver at least once: the same event (same key, same LSN, same values)
can land again in a later file. It must change nothing: no new version of the row, no change of its
commit time, nothing in `hudi-cdc query history` or `query changes`. The round still consumes the
file (the checkpoint moves past it), so the next round does not read it again.
"""

from __future__ import annotations

import pytest

from hudi_cdc.query import changes, history
from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake, ev

pytestmark = pytest.mark.spark

TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def _path(lake, tt):
    return lake.pipeline.base_path("artists", tt)


def _changes(states):
    return [(s["change"], s["instant"]) for s in states]


def test_redelivered_events_change_nothing(tmp_path, spark):
    lake = Lake(tmp_path, spark)
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")

    first = [ev(1, 200, name="one-v2"), ev(2, 210, nat="German", name="two-moved")]
    lake.land(first)
    res = lake.run("UPSERT")
    c1 = {r.base_path: r.commit for r in res}
    before = {tt: lake.table(tt) for tt in TYPES}
    hist_before = {tt: _changes(history(_path(lake, tt), "1").states) for tt in TYPES}

    # the same two events again in a later file, plus a stale update of key 3 (older than its row)
    n_commits = {tt: len(lake.commits(tt)) for tt in TYPES}
    again = lake.land(first + [ev(3, 50, name="stale")])
    res = lake.run("UPSERT")
    lake.assert_matches()
    for tt in TYPES:
        path = _path(lake, tt)
        after = lake.table(tt)
        assert after == before[tt], f"{tt}: a redelivered file changed the table (meta columns included)"
        for key in ("1", "2"):
            states = history(path, key).states
            assert [s["change"] for s in states] == ["insert", "update"], f"{tt} key {key}: {states}"
            assert states[-1]["instant"] == c1[path]
        assert _changes(history(path, "1").states) == hist_before[tt]
        assert _changes(history(path, "3").states)[-1][0] == "insert"  # the stale update left no version
        ch = changes(path, since=c1[path])
        assert ch.rows == [], f"{tt}: changes returned {ch.rows}"
        assert ch.totals == {"inserts": 0, "updates": 0, "deletes": 0}
        # one empty commit, carrying the checkpoint (as HoodieStreamer's "perform empty commit")
        assert len(lake.commits(tt)) == n_commits[tt] + 1 and len(ch.commits) == 1

    for r in res:
        assert r.unchanged_ignored == 3 and r.records_written == 0
        assert r.checkpoint == str(again.stat().st_mtime_ns // 1_000_000)
    # the file is consumed (the round committed its checkpoint): nothing is read again
    assert all(r.skipped for r in lake.run("UPSERT"))

    # a redelivery next to a real change: only the real change is written and seen
    last = {tt: lake.commits(tt)[-1] for tt in TYPES}
    lake.land([ev(1, 200, name="one-v2"), ev(4, 300, name="four-v2")])
    res = lake.run("UPSERT")
    assert all(r.unchanged_ignored == 1 and r.records_written == 1 for r in res)
    lake.assert_matches()
    for tt in TYPES:
        path = _path(lake, tt)
        since = last[tt].split(".")[0].split("_")[0]  # v6: <instant>.commit, v9: <requested>_<completed>.commit
        ch = changes(path, since=since)
        assert [(r["artist_id"], r["name"]) for r in ch.rows] == [(4, "four-v2")]
        assert [s["change"] for s in history(path, "1").states] == ["insert", "update"]


def test_redelivery_is_dropped_through_spark_engine_too(tmp_path, spark):
    """The same through Hudi's own reader (Spark), so the result does not depend on hudi-rs."""
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    lake.land(SNAPSHOT[:6])
    lake.run("BULK_INSERT")
    lake.land([ev(5, 200, name="five-v2")])
    c1 = lake.run("UPSERT")[0].commit
    lake.land([ev(5, 200, name="five-v2")])
    lake.run("UPSERT")
    path = _path(lake, "MERGE_ON_READ")
    assert [s["change"] for s in history(path, "5", spark=spark).states] == ["insert", "update"]
    assert changes(path, since=c1, spark=spark).rows == []
