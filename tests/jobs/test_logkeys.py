"""A MoR round's key lookup from the base files plus the keys hudi-cdc's own delta commits logged
(hudi_cdc/jobs/stream/logkeys.py): after every round of updates, deletes, partition moves, re-inserts,
redeliveries and inline compactions, its view of the stored keys is Hudi's merged snapshot read, and
the table equals the replayed events; a delta commit without a key file sends the lookup back to the
snapshot read, never to a wrong answer."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream import driver_lookup, logkeys
from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake, ev

pytestmark = pytest.mark.spark

COLS = ["_hoodie_record_key", "_hoodie_file_name", "_hoodie_partition_path", "artist_id", "nationality", "__lsn"]
NATS = ["American", "French", "German"]


def _keys(rows):
    """Comparable lookup rows: the file group id instead of the file name."""
    return sorted((r["_hoodie_record_key"], r["_hoodie_file_name"].lstrip(".").split("_")[0],
                   r["_hoodie_partition_path"], r["artist_id"], r["nationality"], r["__lsn"]) for r in rows)


def _snapshot(spark, base):
    return _keys(spark.read.format("hudi").load(base).select(*COLS).collect())


def _run(lake, logs):
    return streamer.run_targets(lake.spark, lake.targets("UPSERT"), log=logs.append)


def _driver_read(spark, base, keys):
    """driver_lookup.py's stored rows for `keys` (hudi-rs and the key files, no Spark read of the table)."""
    events = spark.createDataFrame([(k, "x", 0) for k in keys], "artist_id bigint, nationality string, __lsn bigint")
    meta = ("_hoodie_record_key", "_hoodie_file_name", "_hoodie_partition_path")
    stored = driver_lookup.stored_rows(spark, events, base, ["artist_id"], ["artist_id", "nationality", "__lsn"],
                                       meta, ["__lsn"])
    assert stored is not None, "a small round's keys are read in the driver"
    return _keys([{c: r[f"__s{c}" if c.startswith("_hoodie") else f"__s_{c}"] for c in COLS} for r in stored.collect()])


def _random_round(rng, lsn, keys):
    out = []
    for k in rng.sample(range(1, 45), 12):
        lsn += 1
        kind = rng.random()
        if kind < 0.2:
            out.append(ev(k, lsn, deleted=True))
        elif kind < 0.3:
            out.append(ev(k, lsn - 500, name="stale"))  # older than what is stored
        else:
            out.append(ev(k, lsn, nat=rng.choice(NATS), name=f"v{lsn}", op="u" if k in keys else "c"))
        keys.add(k)
    return out, lsn


def test_view_equals_the_snapshot_read_round_after_round(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    rng, lsn, keys, logs, from_driver = random.Random(7), 1000, set(range(1, 31)), [], 0
    for n in range(7):  # compaction after every 3 delta commits (Lake's pipeline): two of them
        events, lsn = _random_round(rng, lsn, keys)
        if n == 2:
            events += events[:3]  # a redelivery inside the round
        lake.land(events)
        logs.clear()
        _run(lake, logs)
        from_driver += any("made in the driver" in m for m in logs)  # its key file from the committed rows
        lake.assert_matches()
        pairs, why = logkeys.current_logs(spark, base)
        assert pairs is not None, why
        view = logkeys.stored_view(spark, base, COLS, ["__lsn"])
        assert view is not None and _keys(view.collect()) == _snapshot(spark, base), f"round {n}"
        assert _driver_read(spark, base, range(1, 45)) == _snapshot(spark, base), f"round {n}: the driver's read"
        if n > 0:
            assert not [m for m in logs if "merged snapshot" in m or "no key file" in m], logs
            assert any("read in the driver (hudi-rs)" in m for m in logs), "the round's own lookup read in the driver"
    assert from_driver >= 4, "the rounds that do not compact commit from the driver (driver_write.py)"
    kept = {p.name for p in (Path(base[len("file://"):]) / ".hoodie" / ".aux" / "hudi-cdc-logkeys").iterdir()}
    assert kept == {f"{d}.parquet" for _, d in pairs}, "key files of compacted delta commits are removed"
    assert any(m.endswith(".deltacommit") for m in lake.commits("MERGE_ON_READ"))
    assert len([c for c in lake.commits("MERGE_ON_READ") if c.endswith(".commit")]) >= 3  # bootstrap + 2 compactions


def test_a_delta_commit_without_its_key_file_takes_the_snapshot_read(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    lake.land([ev(1, 200, nat="German", name="moved"), ev(2, 201, name="in place"), ev(3, 202, deleted=True)])
    logs: list[str] = []
    _run(lake, logs)
    pairs, _ = logkeys.current_logs(spark, base)
    assert pairs, "the round logged keys"
    # as if another writer (or a crash between the commit and the key file) made the delta commit
    for d in {d for _, d in pairs}:
        shutil.rmtree(Path(base[len("file://"):]) / ".hoodie" / ".aux" / "hudi-cdc-logkeys" / f"{d}.parquet")
    assert logkeys.current_logs(spark, base)[0] is None
    assert "has no key file" in logkeys.current_logs(spark, base)[1]
    lake.land([ev(2, 300, name="again"), ev(1, 301, nat="French", name="moved back"), ev(3, 150, name="late")])
    logs.clear()
    _run(lake, logs)
    assert any("merged snapshot read" in m and "has no key file" in m for m in logs), logs
    lake.assert_matches()


@pytest.mark.unit
def test_lookup_prop():
    assert logkeys.enabled({}) and logkeys.enabled({logkeys.LOOKUP_PROP: "log-keys"})
    assert not logkeys.enabled({logkeys.LOOKUP_PROP: "snapshot"})


def _slice(fid, logs, base=True):
    return SimpleNamespace(file_id=fid, base_file_name=f"{fid}_1-2-3_100.parquet" if base else "",
                           log_file_names=logs)


@pytest.mark.unit
def test_which_log_files_count():
    """Logs of completed delta commits count, a failed or in-flight one's are skipped as readers skip them;
    a log named by any other instant (table version 6 names logs by their base instant, and an upgraded
    table keeps them until a compaction) or a file group without a base file sends the round to the
    snapshot read."""
    done, deltas = {"20260101000000001"}, {"20260101000000001", "20260101000000002"}
    ok = [_slice("fg-1", [".fg-1_20260101000000001.log.1_0-1-2", ".fg-1_20260101000000002.log.1_0-1-2"]),
          _slice("fg-2", [])]
    assert logkeys.log_pairs(ok, done, deltas) == ({("fg-1", "20260101000000001")}, "")
    v6 = [_slice("fg-1", [".fg-1_20260101000000000.log.1_0-1-2"])]
    pairs, why = logkeys.log_pairs(v6, done, deltas)
    assert pairs is None and "20260101000000000" in why and "no delta commit" in why
    pairs, why = logkeys.log_pairs([_slice("fg-3", [], base=False)], done, deltas)
    assert pairs is None and "fg-3 has no base file" in why
