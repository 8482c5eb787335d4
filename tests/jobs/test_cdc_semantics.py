"""CDC semantics on real Spark + Hudi 1.2.0, read back with hudi-rs and compared with the state
computed independently from the events (hudi_cdc.sample.replay).

Each test writes Kafka Connect S3-sink style Avro files, bootstraps, streams, and checks the
whole table for both table types. The pipeline's own rendered properties are used, and the
streamer runs in-process on one shared SparkSession (the CLI path through spark-submit is
covered by tests/pipeline/test_e2e.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import fastavro
import pytest

from hudi_cdc import sample
from hudi_cdc.config import parse_pipeline
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream import history as h
from hudi_cdc.lake.reader import read_table, rows_by_key

pytestmark = pytest.mark.spark

SCHEMA = sample.schema("artists")
TOPIC = "moma.public.artists"
DATA_COLS = ["artist_id", "name", "nationality", "gender", "birth_year", "death_year", "__op", "__lsn", "__deleted"]


class Lake:
    """A landing folder, a pipeline over it, and helpers to land files and run rounds."""

    def __init__(self, tmp: Path, spark, deletes="hard", types=("COPY_ON_WRITE", "MERGE_ON_READ"), hudi_options=None,
                 table_version: int | None = None, table_options: dict | None = None,
                 history: str | None = None, source_options: dict | None = None):
        self.tmp, self.spark = tmp, spark
        self.root = tmp / "landing"
        self.dir = self.root / TOPIC / "partition=0"
        self.dir.mkdir(parents=True)
        self.pipeline = parse_pipeline({
            "pipeline": "t",
            **({"hudi": {"table_version": table_version}} if table_version else {}),
            "source": {"root": str(self.root), **(source_options or {})},
            "lake": {"root": str(tmp / "lake"), "hive_database": "t"},
            "spark": {"shuffle_partitions": 2},
            "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id", "ordering_field": "__lsn",
                                   "partition_field": "nationality", "table_types": list(types),
                                   "deletes": deletes, "compaction_delta_commits": 3,
                                   "hudi_options": hudi_options or {}, **(table_options or {}),
                                   **({"history": history} if history else {})}},
        }, "test.yaml", str(tmp))
        self.props_dir = tmp / "props"
        render.write_properties(self.pipeline, self.props_dir)
        self.events = []
        self.offset = 0
        self.mtime_ns = 1_700_000_000_000 * 1_000_000

    def land(self, records, mtime_ms=None, schema=None):
        path = self.dir / sample.file_name(TOPIC, self.offset)
        with open(path, "wb") as fh:
            fastavro.writer(fh, schema or SCHEMA, records)
        self.mtime_ns = (mtime_ms * 1_000_000) if mtime_ms else self.mtime_ns + 1_000_000_000
        os.utime(path, ns=(self.mtime_ns, self.mtime_ns))
        self.offset += len(records)
        self.events.extend(records)
        return path

    def targets(self, op):
        out = []
        for tt in self.pipeline.table("artists").table_types:
            props = self.props_dir / render.props_filename(self.pipeline, "artists", tt)
            flags = render.streamer_flags(self.pipeline, render.Job("artists", tt, op), f"file://{props}")
            for kv in render.LOCAL_HOODIE_CONF:
                flags += ["--hoodie-conf", kv]
            out.append(streamer.parse_argv(flags)[0])
        return out

    def run(self, op, log=None):
        return streamer.run_targets(self.spark, self.targets(op), log=log or (lambda m: None))

    def table(self, tt, **kw):
        return rows_by_key(read_table(self.pipeline.base_path("artists", tt), **kw), "artist_id", drop_meta=False)

    def expected(self):
        return {k: {c: v[c] for c in DATA_COLS} for k, v in sample.replay(self.events, "artist_id").items()}

    def assert_matches(self):
        want = self.expected()
        for tt in self.pipeline.table("artists").table_types:
            got = {k: {c: v[c] for c in DATA_COLS} for k, v in self.table(tt).items()}
            assert got == want, f"{tt}: table differs from the state replayed from the events"

    def commits(self, tt):
        from tests.shared import timeline_files

        names = timeline_files(self.pipeline.base_path("artists", tt))
        return [n for n in names if n.endswith((".commit", ".deltacommit"))]


def ev(aid, lsn, nat="American", name=None, by=1900, op="u", deleted=False):
    if deleted:
        return {"artist_id": aid, "name": None, "nationality": None, "gender": None, "birth_year": None,
                "death_year": None, "__op": "d", "__db": "moma", "__table": "artists", "__schema": "public",
                "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "true"}
    return {"artist_id": aid, "name": name or f"artist {aid}", "nationality": nat, "gender": "Male",
            "birth_year": by, "death_year": None, "__op": op, "__db": "moma", "__table": "artists",
            "__schema": "public", "__lsn": lsn, "__source_ts_ms": lsn, "__deleted": "false"}


SNAPSHOT = [ev(i, 100, nat=["American", "French", "German"][i % 3], op="r") for i in range(1, 31)]


@pytest.fixture
def lake(tmp_path, spark):
    return Lake(tmp_path, spark)


def test_cdc_semantics_bootstrap_then_stream(lake):
    """Ordering, stale events, hard deletes with a null partition, partition moves, duplicates
    inside a batch and redelivered files, over bootstrap -> several stream rounds."""
    lake.land(SNAPSHOT[:15])
    # a key updated twice before bootstrap: the later LSN must win, inside one batch
    lake.land(SNAPSHOT[15:] + [ev(2, 150, nat="French", name="two-v2")])
    res = lake.run("BULK_INSERT")
    assert all(r.records_written == 30 for r in res)
    lake.assert_matches()

    # round 1: partition move (American -> German), delete whose partition is null, stale update
    lake.land([ev(1, 200, nat="German", name="moved"), ev(3, 210, deleted=True), ev(4, 50, name="stale")])
    lake.run("UPSERT")
    lake.assert_matches()
    cow = lake.table("COPY_ON_WRITE")
    assert cow[1]["nationality"] == "German" and cow[1]["_hoodie_partition_path"] == "nationality=German"
    assert 3 not in cow and cow[4]["name"] == "artist 4"
    assert sum(1 for k in cow if k == 1) == 1  # never duplicated across partitions

    # round 2: the same events again as a redelivered file (Kafka Connect is at-least-once), plus
    # an update of key 3 older than its delete: a hard-deleted row must not come back
    before = {tt: lake.table(tt) for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}
    lake.land([ev(1, 200, nat="German", name="moved"), ev(4, 50, name="stale"), ev(5, 100, nat="German", op="r"),
               ev(3, 205, name="older than the delete")])
    res = lake.run("UPSERT")
    assert all(r.stale_ignored == 1 for r in res)
    lake.assert_matches()

    def strip(rows):
        return {k: {c: v[c] for c in DATA_COLS} for k, v in rows.items()}

    for tt in before:
        after = lake.table(tt)
        assert strip(after) == strip(before[tt]), f"{tt}: a redelivered file changed the table"

    # round 3: several changes of one key in one file, the delete first in file order but not in LSN order
    lake.land([ev(6, 320, nat="French", name="six-final"), ev(6, 300, deleted=True), ev(7, 310, deleted=True),
               ev(31, 330, nat="Spanish", op="c")])
    lake.run("UPSERT")
    lake.assert_matches()
    cow = lake.table("COPY_ON_WRITE")
    assert cow[6]["name"] == "six-final" and 7 not in cow and cow[31]["nationality"] == "Spanish"


def test_handover_without_gap_or_overlap(lake):
    """Files landed after bootstrap are consumed exactly once by the stream; an empty round
    commits nothing; the checkpoint is the newest modification time consumed."""
    lake.land(SNAPSHOT[:10])
    lake.run("BULK_INSERT")
    n0 = {tt: len(lake.commits(tt)) for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}
    late = lake.land([ev(1, 200, name="late")])
    res = lake.run("UPSERT")
    assert [r.files for r in res] == [[str(late)], [str(late)]]
    assert all(r.checkpoint == str(late.stat().st_mtime_ns // 1_000_000) for r in res)
    res = lake.run("UPSERT")  # nothing new: no commit, same checkpoint
    assert all(r.skipped for r in res)
    for tt in n0:
        assert len(lake.commits(tt)) == n0[tt] + 1
    lake.assert_matches()


def test_bootstrap_of_landed_files_with_deletes_then_a_stale_event(tmp_path, spark):
    """A new table bootstrapped from files that already hold deletes (add-table, bootstrap --force):
    the deleted keys are absent, and their tombstones (kept after the first commit, since Hudi refuses
    a .hoodie folder it did not create) stop an older event from bringing a row back."""
    lake = Lake(tmp_path, spark, types=("COPY_ON_WRITE",))
    lake.land(SNAPSHOT[:6])
    lake.land([ev(2, 200, deleted=True), ev(3, 210, nat="German", name="moved")])
    assert [r.records_written for r in lake.run("BULK_INSERT")] == [5]
    lake.assert_matches()
    lake.land([ev(2, 150, name="older than the delete")])
    assert [r.stale_ignored for r in lake.run("UPSERT")] == [1]
    lake.assert_matches()
    assert 2 not in lake.table("COPY_ON_WRITE")


def test_soft_deletes_keep_the_row(tmp_path, spark):
    lake = Lake(tmp_path, spark, deletes="soft", types=("COPY_ON_WRITE",))
    lake.land(SNAPSHOT[:5])
    lake.run("BULK_INSERT")
    lake.land([ev(2, 200, deleted=True)])
    lake.run("UPSERT")
    row = lake.table("COPY_ON_WRITE")[2]
    assert row["__deleted"] == "true" and row["__op"] == "d" and row["name"] is None


def test_bad_input_leaves_table_unchanged(lake):
    """A corrupt file and a file without the record key fail the round by name; no commit."""
    lake.land(SNAPSHOT[:5])
    lake.run("BULK_INSERT")
    commits = {tt: lake.commits(tt) for tt in ("COPY_ON_WRITE", "MERGE_ON_READ")}
    good = lake.land([ev(1, 200, name="after")])
    bad = lake.dir / sample.file_name(TOPIC, 999)
    bad.write_bytes(good.read_bytes()[:-40])  # truncated mid-block
    os.utime(bad, ns=(lake.mtime_ns + 1, lake.mtime_ns + 1))
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*\+0000000999\.avro"):
        lake.run("UPSERT")
    assert {tt: lake.commits(tt) for tt in commits} == commits
    bad.unlink()

    no_key = lake.dir / sample.file_name(TOPIC, 1000)
    sch = json.loads(json.dumps(SCHEMA))
    sch["fields"] = [f for f in sch["fields"] if f["name"] != "artist_id"]
    with open(no_key, "wb") as fh:
        fastavro.writer(fh, sch, [{k: v for k, v in ev(9, 300).items() if k != "artist_id"}])
    os.utime(no_key, ns=(lake.mtime_ns + 2, lake.mtime_ns + 2))
    missing = r"field 'artist_id' .* missing from the schema of .*0000001000\.avro"
    with pytest.raises(streamer.JobInputError, match=missing):
        lake.run("UPSERT")
    assert {tt: lake.commits(tt) for tt in commits} == commits
    no_key.unlink()
    lake.run("UPSERT")  # once the bad files are gone, the good one goes in
    assert lake.table("COPY_ON_WRITE")[1]["name"] == "after"


def test_a_corrupt_table_fails_alone(tmp_path, spark):
    """Two tables in one run (bootstrap's one JVM, issue 36): the first's landing holds a truncated file, the
    second's is good. The second still runs and commits; the error raised once both ran names the bad file,
    and the first table was not created."""
    bad, good = (Lake(tmp_path / name, spark, types=("COPY_ON_WRITE",)) for name in ("bad", "good"))
    kept = bad.land(SNAPSHOT[:5])
    kept.write_bytes(kept.read_bytes()[:-40])  # truncated mid-block
    good.land(SNAPSHOT[:5])
    with pytest.raises(streamer.JobInputError, match=r"corrupt or truncated Avro file .*bad/landing/.*\.avro"):
        streamer.run_targets(spark, bad.targets("BULK_INSERT") + good.targets("BULK_INSERT"), log=lambda m: None)
    assert len(good.commits("COPY_ON_WRITE")) == 1
    good.assert_matches()
    assert not Path(bad.pipeline.base_path("artists", "COPY_ON_WRITE")[len("file://"):]).exists()


def test_continuous_mode_serves_every_table_in_turn(lake):
    """--continuous round-robins all targets of one JVM (never stuck on the first, as
    HoodieMultiTableStreamer's continuous mode is), and picks up files landed between rounds."""
    lake.land(SNAPSHOT[:5])
    lake.run("BULK_INSERT")
    late = lake.land([ev(2, 400, name="landed while streaming")])
    targets = lake.targets("UPSERT")
    for t in targets:
        t.continuous, t.max_rounds, t.min_sync_interval_seconds = True, 2, 0
    res = streamer.run_targets(lake.spark, targets, log=lambda m: None)
    assert [(r.table, r.skipped) for r in res] == [
        ("t_cow.artists", False), ("t_mor.artists", False), ("t_cow.artists", True), ("t_mor.artists", True)]
    assert res[0].files == [str(late)]
    lake.assert_matches()


def test_a_composite_key_with_an_empty_or_null_part_in_an_unpartitioned_table(tmp_path, spark):
    """A record key of several fields without a partition field, one part '' or NULL: Hudi 1.2.0's bulk insert row
    path (the Nonpartitioned key generator's) refuses it, so such a bootstrap goes without the row writer and stores
    `__empty__` / `__null__` as the upserts' Avro path does: an update finds its row, in the table and in its history
    table (whose key, the table's plus the version's LSN, is always composite), and a delete of the row with a NULL
    part (a key a user chose) finds it too (keyjoin.py)."""
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",), history="scd2",
                table_options={"record_key": ["artist_id", "gender"], "partition_field": None})
    lake.land([{**ev(i, 100, op="r"), "gender": g} for i, g in [(1, ""), (2, None), (3, "Male")]])
    lake.run("BULK_INSERT")
    lake.land([{**ev(1, 200, name="one"), "gender": ""}, {**ev(2, 200, name="two"), "gender": None},
               {**ev(3, 200, deleted=True), "gender": "Male"}])
    lake.run("UPSERT")
    lake.assert_matches()
    rows = lake.table("MERGE_ON_READ")
    assert sorted((r["_hoodie_record_key"], r["name"]) for r in rows.values()) == [
        ("artist_id:1,gender:__empty__", "one"), ("artist_id:2,gender:__null__", "two")]
    hist = lake.spark.read.format("hudi").load(lake.pipeline.history_base_path("artists", "MERGE_ON_READ"))
    got = sorted((r.artist_id, r.name, r[h.CURRENT]) for r in hist.collect())
    assert got == [(1, "artist 1", False), (1, "one", True), (2, "artist 2", False), (2, "two", True),
                   (3, "artist 3", False)], got
    # a delete of the row whose key has a NULL part (a key a user chose) finds it: the lookup matches NULL parts
    lake.land([{**ev(2, 300, deleted=True), "gender": None}])
    lake.run("UPSERT")
    lake.assert_matches()
    assert [r["_hoodie_record_key"] for r in lake.table("MERGE_ON_READ").values()] == ["artist_id:1,gender:__empty__"]


def test_a_table_whose_bootstrap_failed_is_created_by_its_first_upsert_round(tmp_path, spark, monkeypatch):
    """What `run` and `stream --all` do with a table whose bootstrap failed (pipeline.plan_stream's taken_up): the
    failed bulk insert's leftovers in the table folder do not stop the UPSERT round that creates the table from the
    whole landing, and later rounds stream it."""
    from hudi_cdc.jobs.stream import keytext

    lake = Lake(tmp_path, spark, types=("COPY_ON_WRITE",),
                table_options={"record_key": ["artist_id", "gender"], "partition_field": None})
    lake.land([{**ev(i, 100, op="r"), "gender": g} for i, g in [(1, ""), (2, "Male")]])
    monkeypatch.setattr(keytext, "row_writer_options", lambda *a: {})  # the row writer: refuses the '' part
    with pytest.raises(RuntimeError, match="Record key has to be non-null"):
        lake.run("BULK_INSERT")
    assert (tmp_path / "lake" / "artists_cow" / ".hoodie").is_dir() and not lake.commits("COPY_ON_WRITE")
    monkeypatch.undo()
    lake.land([{**ev(1, 200, name="one"), "gender": ""}])
    lake.run("UPSERT")
    lake.land([{**ev(2, 300, deleted=True), "gender": "Male"}])
    lake.run("UPSERT")
    lake.assert_matches()
    assert len(lake.commits("COPY_ON_WRITE")) == 2
