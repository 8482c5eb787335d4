"""History tables (`history: scd2`) written by real rounds of the streamer on Spark + Hudi 1.2.0, CoW and
MoR in one run: bootstrap, updates (one that changes nothing visible), a delete and a re-insert, a
partition move, a TRUNCATE, a crash between the history commit and the current-state commit (the round
run again), a redelivered file and a late event give exactly the versions the events went through, and
the current versions equal the current-state table."""

from __future__ import annotations

import json
import shutil

import pytest

from hudi_cdc.jobs.stream import history as h
from hudi_cdc.lake.status import pipeline_status
from hudi_cdc.query.consistent_sql import consistent_sql
from hudi_cdc.report import pipeline_report
from hudi_cdc.sources.comparison import _lake_table
from hudi_cdc.sources.scd2_verify import verify_whole
from tests.jobs.test_cdc_semantics import SCHEMA, Lake, ev

pytestmark = pytest.mark.spark
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def truncate_ev(lsn):
    row = ev(0, lsn, deleted=True)
    return {**row, "__op": "t"}


def cut(lake, n, lsn):
    """Capture's transaction cut after the newest landed file (jobs/stream/cuts.py)."""
    from hudi_cdc.jobs.stream import cuts

    newest = max(p.name for p in lake.dir.iterdir() if p.name.endswith(".avro"))
    folder = lake.root / cuts.CUTS_DIR
    folder.mkdir(exist_ok=True)
    (folder / cuts.cut_name(n)).write_text(json.dumps({"cut": n, "lsn": lsn, "ts_ms": lsn * 1000,
                                                       "topics": {"moma.public.artists": newest}}))


def versions(lake, tt):
    df = lake.spark.read.format("hudi").load(lake.pipeline.history_base_path("artists", tt))
    return sorted((r.artist_id, r.name, r.nationality, r[h.FROM_LSN], r[h.TO_LSN], r[h.CURRENT], r[h.OP])
                  for r in df.collect())


def history_commits(lake, tt):
    from tests.shared import timeline_files

    names = timeline_files(lake.pipeline.history_base_path("artists", tt))
    return [n for n in names if n.endswith((".commit", ".deltacommit"))]


def test_history_versions_through_every_kind_of_change(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=TYPES, history="scd2")
    lake.land([ev(i, 100, op="r") for i in range(1, 6)])
    cut(lake, 1, 100)
    res = lake.run("BULK_INSERT")
    assert all(r.history["versions"] == 5 and r.history["commit"] for r in res)
    # an update, an update that changes nothing visible, a delete, a partition move
    first = lake.land([ev(1, 200, name="one-v2"), ev(2, 210), ev(3, 220, deleted=True), ev(4, 230, nat="French")])
    cut(lake, 2, 230)
    lake.run("UPSERT")
    # the deleted key comes back, a TRUNCATE, a new key and later changes
    lake.land([ev(3, 300, op="c", name="three-again"), ev(1, 310, name="one-v3"), truncate_ev(320),
               ev(6, 330, op="c"), ev(1, 340, op="c", name="one-v4"), ev(6, 360, name="six-v2")])
    cut(lake, 3, 360)
    saved = {tt: tmp_path / f"saved-{tt}" for tt in TYPES}
    for tt in TYPES:  # the current-state tables as they were before the round
        shutil.copytree(lake.pipeline.base_path("artists", tt).removeprefix("file://"), saved[tt])
    lake.run("UPSERT")
    commits = {tt: history_commits(lake, tt) for tt in TYPES}
    # kill -9 after the history commit, before the current-state one: the round runs again
    for tt in TYPES:
        base = lake.pipeline.base_path("artists", tt).removeprefix("file://")
        shutil.rmtree(base)
        shutil.copytree(saved[tt], base)
    res = lake.run("UPSERT")
    assert all(r.history["versions"] == 0 and not r.history["commit"] for r in res)
    assert {tt: history_commits(lake, tt) for tt in TYPES} == commits
    # a redelivered file and a late update of key 6 (older than its current version)
    lake.land([*lake.events[5:9], ev(6, 345, name="six-late")])
    assert first.exists()
    cut(lake, 4, 360)
    lake.run("UPSERT")
    want = [
        (1, "artist 1", "American", 100, 200, False, "r"), (1, "one-v2", "American", 200, 310, False, "u"),
        (1, "one-v3", "American", 310, 320, False, "u"), (1, "one-v4", "American", 340, None, True, "c"),
        (2, "artist 2", "American", 100, 320, False, "r"),
        (3, "artist 3", "American", 100, 220, False, "r"), (3, "three-again", "American", 300, 320, False, "c"),
        (4, "artist 4", "American", 100, 230, False, "r"), (4, "artist 4", "French", 230, 320, False, "u"),
        (5, "artist 5", "American", 100, 320, False, "r"),
        (6, "artist 6", "American", 330, 345, False, "c"), (6, "six-late", "American", 345, 360, False, "u"),
        (6, "six-v2", "American", 360, None, True, "u"),
    ]
    for tt in TYPES:
        got = versions(lake, tt)
        assert got == want, tt
        current = {k: (v["name"], v["nationality"]) for k, v in lake.table(tt).items()}
        assert {r[0]: (r[1], r[2]) for r in got if r[5]} == current, tt
        # verify's reader (hudi-rs) on the history table's current versions
        now = _lake_table(lake.pipeline, "artists", tt, history=True).to_pylist()
        assert {r["artist_id"]: (r["name"], r["nationality"]) for r in now} == current, tt
        _consistent_points_agree(lake, tt)
    rows = {(s.table, s.table_type): s for s in pipeline_status(lake.pipeline)}
    for tt in TYPES:
        hist, table = rows[("artists_history", tt)], rows[("artists", tt)]
        assert hist.exists and hist.checkpoint == table.checkpoint and hist.commits >= 4, tt
        # the open versions, counted commit by commit: the current versions (keys 1..6, 2..5 truncated)
        assert hist.open_versions == len(current) == 2 and table.open_versions is None, (tt, hist.open_versions)
        assert hist.text_row()["table"] == "artists_history (2 open versions)"
    # `report`: each history table right after its table, its versions opened (inserted) per commit
    _, reports = pipeline_report(lake.pipeline, tmp_path / "report")
    labels = [r.label for r in reports]
    for tt, suffix in (("COPY_ON_WRITE", "cow"), ("MERGE_ON_READ", "mor")):
        hist = reports[labels.index(f"artists_{suffix}") + 1]
        assert hist.label == f"artists_history_{suffix}" and hist.error is None, (labels, hist.error)
        assert [c.inserted for c in hist.commits if not c.compaction][0] == 5, (tt, hist.commits)
    _interleaved_transactions(lake)
    for tt in TYPES:
        # verify --history --whole: the table equals the replay of every landed event (redelivery included)
        whole = verify_whole(lake.pipeline, "artists", tt)
        assert whole.equal and whole.db_rows == whole.lake_rows == len(want) + 2, (tt, whole.summary())
    _corrupt_one_version(lake, "MERGE_ON_READ")
    whole = verify_whole(lake.pipeline, "artists", "MERGE_ON_READ")
    assert not whole.equal and whole.different == 1, whole.summary()
    assert whole.details == ["version artist_id=1 from LSN 200: name: table one-v2!, replay one-v2; "
                             "__valid_to_lsn: table 311, replay 310"]
    lake.land([ev(2, 400, name="not streamed yet")])  # past the checkpoint: not in the replay
    assert verify_whole(lake.pipeline, "artists", "MERGE_ON_READ").details == whole.details


def _interleaved_transactions(lake):
    """T1 updates key 1 at LSN 390 and commits at 420; T2 updates key 6 at LSN 400 and commits at 410, so
    capture lands T2 first (commit order), cut 5 at 410, then T1, cut 6 at 420; the events carry Debezium's
    source.sequence (a column new to the table: the landed schema of an upgraded capture). At cut 5 the
    WHERE `query consistent` prints shows key 1 before T1 (its LSN range alone would show T1's change)."""
    from hudi_cdc.query.consistent_sql import validity_where

    schema = {**SCHEMA, "fields": [*SCHEMA["fields"], {"name": h.SEQUENCE, "type": ["null", "string"],
                                                        "default": None}]}
    lake.land([{**ev(6, 400, name="six-t2"), h.SEQUENCE: '["360","400"]'}], schema=schema)
    cut(lake, 5, 410)
    lake.land([{**ev(1, 390, name="one-t1"), h.SEQUENCE: '["410","390"]'}], schema=schema)
    cut(lake, 6, 420)
    lake.run("UPSERT")
    for tt in TYPES:
        df = lake.spark.read.format("hudi").load(lake.pipeline.history_base_path("artists", tt))
        for at, want in ((410, {1: "one-v4", 6: "six-t2"}), (420, {1: "one-t1", 6: "six-t2"})):
            assert {r.artist_id: r.name for r in df.where(validity_where(at)).collect()} == want, (tt, at)
        _consistent_points_agree(lake, tt, newest=6, cuts=(6,))


def _corrupt_one_version(lake, tt):
    """Key 1's version from LSN 200 rewritten in place (a Hudi upsert): its end and a value changed."""
    from pyspark.sql import functions as F

    path = lake.pipeline.history_base_path("artists", tt)
    df = lake.spark.read.format("hudi").load(path)
    row = df.where((F.col("artist_id") == 1) & (F.col(h.FROM_LSN) == 200))
    row = row.drop(*[c for c in df.columns if c.startswith("_hoodie") and c != h.DELETED])
    row = row.withColumn(h.TO_LSN, F.lit(311).cast("long")).withColumn("name", F.lit("one-v2!"))
    opts = {"hoodie.table.name": "artists_history", "hoodie.datasource.write.operation": "upsert",
            "hoodie.datasource.write.table.type": tt,
            "hoodie.datasource.write.recordkey.field": f"artist_id,{h.FROM_LSN}",
            "hoodie.datasource.write.partitionpath.field": "",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.index.type": "SIMPLE"}
    row.write.format("hudi").options(**opts).mode("append").save(path)


def _consistent_points_agree(lake, tt, newest=4, cuts=(1, 2, 4)):
    """At each cut, `query consistent`'s history SQL on Spark gives what read_consistent() reads from the
    current-state table at the same cut."""
    from hudi_cdc.query.consistent import read_consistent

    assert consistent_sql(lake.pipeline, tt).cut == newest
    view = f"history_{tt.lower()}"
    lake.spark.read.format("hudi").load(lake.pipeline.history_base_path("artists", tt)).createOrReplaceTempView(view)
    for n in cuts:  # the bootstrap, a round with a delete, the newest (after the late event)
        point = consistent_sql(lake.pipeline, tt, cut=n)
        hist = next(t for t in point.tables if t.kind == "history")
        sql = hist.sql["spark"].replace(f"`{hist.hive_table.split('.')[0]}`.`{hist.hive_table.split('.')[1]}`", view)
        got = {r.artist_id: (r.name, r.nationality) for r in lake.spark.sql(sql).collect()}
        _, rows = read_consistent(lake.pipeline, tt, cut=n, spark=lake.spark)
        want = {r["artist_id"]: (r["name"], r["nationality"]) for r in rows["artists"]}
        assert got == want and got, (tt, n, point.lsn)
