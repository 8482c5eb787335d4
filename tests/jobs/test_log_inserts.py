"""New keys of a MoR round go into the log of a file group their partition already has
(hudi_cdc/jobs/stream/log_inserts.py), not into a new file group per partition and round: the file
groups do not multiply, the table equals the replayed events through hudi-rs and Hudi's snapshot read,
the lookup finds keys only logs hold, a compaction folds them in, and a round that goes through Hudi's
index (which reads base files only) compacts them first."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

import pytest

from hudi_cdc.common import s3
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream import log_inserts, logkeys
from hudi_cdc.jobs.stream.located import LOCATIONS_PROP
from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake, ev
from tests.jobs.test_logkeys import COLS, _keys, _snapshot

pytestmark = pytest.mark.spark

NATS = ["American", "French", "German"]


def _file_groups(base: str) -> Counter:
    return Counter(s.partition_path for s in s3.hudi_table_builder(base).build().get_file_slices())


def _no_duplicate_keys(spark, base: str) -> None:
    rows = spark.read.format("hudi").load(base).select("artist_id").collect()
    counts = Counter(r["artist_id"] for r in rows)
    assert not [k for k, n in counts.items() if n > 1], "a key stored twice"


def _run(lake, logs):
    return streamer.run_targets(lake.spark, lake.targets("UPSERT"), log=logs.append)


def test_inserts_fill_existing_file_groups_round_after_round(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    groups = _file_groups(base)
    rng, lsn, next_key, logs = random.Random(11), 1000, 31, []
    live = set(range(1, 31))
    for n in range(6):  # compaction after every 3 delta commits: two of them
        events = []
        for _ in range(4):  # new keys in every partition
            lsn += 1
            events.append(ev(next_key, lsn, nat=rng.choice(NATS), op="c"))
            live.add(next_key)
            next_key += 1
        for k in rng.sample(sorted(live), 6):  # updates, moves and deletes, of logged keys too
            lsn += 1
            if rng.random() < 0.25:
                events.append(ev(k, lsn, deleted=True))
                live.discard(k)
            else:
                events.append(ev(k, lsn, nat=rng.choice(NATS), name=f"v{lsn}"))
        if n == 3:
            lsn += 1
            events.append(ev(next_key - 1, lsn, name="updated in the round it was inserted"))
            gone = sorted(set(range(1, next_key)) - live)[0]
            events.append(ev(gone, lsn + 1, nat="French", name="back", op="c"))  # deleted key inserted again
            live.add(gone)
            lsn += 1
        lake.land(events)
        logs.clear()
        _run(lake, logs)
        lake.assert_matches()  # hudi-rs
        _no_duplicate_keys(spark, base)
        view = logkeys.stored_view(spark, base, COLS, ["__lsn"])
        assert view is not None and _keys(view.collect()) == _snapshot(spark, base), f"round {n}"
        assert not [m for m in logs if "merged snapshot" in m or "no key file" in m], logs
        assert _file_groups(base) == groups, f"round {n}: inserts opened file groups"
    assert len([c for c in lake.commits("MERGE_ON_READ") if c.endswith(".commit")]) >= 3  # compactions ran


def test_a_round_through_hudis_index_compacts_logged_inserts_first(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",))
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    lake.land([ev(40, 200, op="c"), ev(41, 201, nat="French", op="c")])
    _run(lake, [])
    assert log_inserts.logs_hold_located_inserts(base)
    # the next round through Hudi's global simple index, which reads base files only
    props = lake.props_dir / render.props_filename(lake.pipeline, "artists", "MERGE_ON_READ")
    props.write_text(props.read_text() + f"\n{LOCATIONS_PROP}=index\n")
    lake.land([ev(40, 300, name="updated", nat="German"), ev(41, 301, name="updated too"), ev(42, 302, op="c")])
    logs: list[str] = []
    _run(lake, logs)
    assert any("compacting before this round goes through Hudi's index" in m for m in logs), logs
    assert not log_inserts.logs_hold_located_inserts(base)
    lake.assert_matches()
    _no_duplicate_keys(spark, base)


def test_opt_out_keeps_hudis_placement(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",), hudi_options={log_inserts.PROP: "new-file-group"})
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    before = sum(_file_groups(base).values())
    lake.land([ev(50, 200, op="c"), ev(51, 201, nat="French", op="c")])
    _run(lake, [])
    assert sum(_file_groups(base).values()) == before + 2
    assert not log_inserts.logs_hold_located_inserts(base)
    lake.assert_matches()


@pytest.mark.unit
def test_enabled_only_for_merge_on_read():
    assert log_inserts.enabled({}, "MERGE_ON_READ")
    assert not log_inserts.enabled({}, "COPY_ON_WRITE")
    assert not log_inserts.enabled({log_inserts.PROP: "new-file-group"}, "MERGE_ON_READ")
    # Hudi's record-level index places inserts itself and would not learn keys placed here
    assert not log_inserts.enabled({"hoodie.metadata.global.record.level.index.enable": "true"}, "MERGE_ON_READ")


@pytest.mark.unit
def test_the_smallest_file_group_under_the_limit_of_a_completed_write(monkeypatch):
    def fs(fid, pp, instant, size, logs=()):
        return SimpleNamespace(file_id=fid, partition_path=pp, base_file_name=f"{fid}_0-1-2_{instant}.parquet",
                               base_file_byte_size=size, log_file_sizes=list(logs))

    slices = [fs("a", "p=1", "20260101000000001", 500), fs("b", "p=1", "20260101000000001", 300, [1000]),
              fs("c", "p=1", "20260101000000001", 400), fs("d", "p=2", "20260101000000009", 10),
              fs("e", "p=3", "20260101000000001", 5000)]
    table = SimpleNamespace(get_file_slices=lambda: slices)
    monkeypatch.setattr(log_inserts.s3, "hudi_table_builder", lambda p: SimpleNamespace(build=lambda: table))
    done = [SimpleNamespace(requested_time="20260101000000001", state="COMPLETED"),
            SimpleNamespace(requested_time="20260101000000009", state="INFLIGHT")]
    monkeypatch.setattr(log_inserts, "table_instants", lambda p: done)
    monkeypatch.setattr(log_inserts.keyloc, "table_config", lambda p: {})
    got = log_inserts.targets("/t", {log_inserts.MAX_FILE_SIZE: "1000"})
    # b: 300 + 0.35 * 1000 = 650 > c's 400; d: base of an unfinished write; e: over the limit
    assert got == {"p=1": ("20260101000000001", "c_0-1-2_20260101000000001.parquet")}


@pytest.mark.unit
def test_compaction_sql_compacts_every_file_group():
    sql = log_inserts.compaction_sql("file:///l/it's")
    assert "op => 'scheduleAndExecute'" in sql and "it\\'s" in sql and log_inserts.FULL_COMPACTION in sql
