"""Small located MoR rounds committed by Hudi's Java write client in the driver
(hudi_cdc/jobs/stream/driver_write.py): every round of updates, deletes, partition moves, inserts and stale
events is committed there and the table equals the replayed events, read by hudi-rs and by Hudi's Spark
datasource; a driver commit that fails after it started fails its round, and the next round rolls it back
and commits the same files; a round that compacts inline writes through Spark."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hudi_cdc.jobs.stream import driver_write, tombstones
from tests.jobs.test_cdc_semantics import DATA_COLS, SNAPSHOT, Lake
from tests.jobs.test_logkeys import _random_round

pytestmark = pytest.mark.spark


def _spark_rows(spark, base):
    return {r["artist_id"]: {c: r[c] for c in DATA_COLS}
            for r in spark.read.format("hudi").load(base).select(*DATA_COLS).collect()}


def _compactions(lake):
    return sum(1 for n in lake.commits("MERGE_ON_READ") if n.endswith(".commit"))


def test_small_rounds_commit_from_the_driver_and_survive_a_failed_commit(tmp_path, spark, monkeypatch):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    commits, real_commit = [], driver_write.commit
    monkeypatch.setattr(driver_write, "commit", lambda s, p: commits.append(real_commit(s, p)) or commits[-1])
    monkeypatch.setattr(tombstones, "FOLD_AT", 2)  # the rounds' tombstone files folded as they come (tombstones.py)
    rng, lsn, keys, ways = random.Random(11), 1000, set(range(1, 31)), []
    for _ in range(3):  # the pipeline compacts inline every 3 delta commits: the third round, through Spark
        events, lsn = _random_round(rng, lsn, keys)
        lake.land(events)
        before, compactions = len(commits), _compactions(lake)
        lake.run("UPSERT")
        ways.append(("compacted" if _compactions(lake) > compactions else "") + ("driver" * (len(commits) - before)))
        lake.assert_matches()
    assert ways == ["driver", "driver", "compacted"], ways
    assert _spark_rows(spark, base) == lake.expected(), "Hudi's Spark reader reads the driver's commits"

    def broken(s, prepared):  # the commit starts, then the write fails
        instant = prepared.client.startCommit()
        prepared.client.transitionInflight(instant)
        prepared.client.close()
        raise RuntimeError("injected: the driver's write failed")

    events, lsn = _random_round(rng, lsn, keys)
    lake.land(events)
    monkeypatch.setattr(driver_write, "commit", broken)
    with pytest.raises(RuntimeError, match="injected"):
        lake.run("UPSERT")
    monkeypatch.setattr(driver_write, "commit", lambda s, p: commits.append(real_commit(s, p)) or commits[-1])
    lake.run("UPSERT")  # the same files again: the failed instant rolled back, the round committed
    assert len(commits) == 3, "the round after the failed one committed from the driver"
    lake.assert_matches()
    assert _spark_rows(spark, base) == lake.expected()
    folder = Path(base[len("file://"):]) / ".hoodie" / ".aux" / "hudi-cdc-tombstones"
    assert len(list(folder.glob("cp-*.jsonl"))) <= 2, "the counted tombstone files were folded into one"


def test_a_round_made_in_the_driver_decides_as_sparks_round(tmp_path, spark):
    """The same rounds (updates, partition moves, deletes, inserts, stale events, a key twice in a round) made in
    the driver (jobs/stream/driver_round.py, no Spark job) and through Spark's path: each round's counts are equal
    and both tables hold the same rows under the same record keys and partition paths."""
    lakes = {way: Lake(tmp_path / way, spark, types=("MERGE_ON_READ",), hudi_options=options)
             for way, options in (("driver", {}), ("spark", {"hoodie.streamer.hudi_cdc.driver.round": "false"}))}
    counts = ("records_in", "records_written", "deletes", "stale_ignored", "unchanged_ignored", "moves",
              "ignored_deletes")
    for lake in lakes.values():
        lake.land(SNAPSHOT)
        lake.run("BULK_INSERT")
    rng, lsn, keys = random.Random(23), 1000, set(range(1, 31))
    for n in range(3):
        events, lsn = _random_round(rng, lsn, keys)
        events += [{**e, "__lsn": e["__lsn"] + 1000, "name": "again"} for e in events[:2]]  # a key twice, newer
        made = {}
        for way, lake in lakes.items():
            lake.land(events)
            [result] = lake.run("UPSERT")
            made[way] = result
        assert ("read and locate" in made["driver"].phases) and "read" in made["spark"].phases, n
        assert {c: getattr(made["driver"], c) for c in counts} == {c: getattr(made["spark"], c) for c in counts}, n
        tables = {way: {k: {c: v[c] for c in [*DATA_COLS, "_hoodie_record_key", "_hoodie_partition_path"]}
                        for k, v in lake.table("MERGE_ON_READ").items()} for way, lake in lakes.items()}
        assert tables["driver"] == tables["spark"], n
    lakes["driver"].assert_matches()
