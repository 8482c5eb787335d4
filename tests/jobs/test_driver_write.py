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
