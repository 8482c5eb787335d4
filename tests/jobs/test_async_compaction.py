"""A continuous stream's MoR compaction runs beside its rounds when asked (hudi_cdc/jobs/stream/compaction.py,
`hoodie.streamer.hudi_cdc.compaction: async`):
the writer only schedules it, a thread of the same application executes it while the next rounds
write into the file groups it compacts, and the table stays exactly the replayed events, the key
lookup stays exact (no fallback to Hudi's merged read while the compaction is pending), and a
stopping stream leaves no compaction half done. A run that ends (`--once`) still compacts inline."""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from hudi_cdc.common.instants import local_timeline_names, parse_instant_file
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs import streamer
from hudi_cdc.jobs.stream import compaction, logkeys
from hudi_cdc.jobs.stream.main import run_all_tables
from tests.jobs.test_cdc_semantics import SNAPSHOT, Lake
from tests.jobs.test_logkeys import COLS, _keys, _random_round, _snapshot

pytestmark = pytest.mark.spark


def _instants(base):
    return [i for i in map(parse_instant_file, local_timeline_names(local_path(base))) if i is not None]


def _continuous(lake, rounds):
    out = []
    for t in lake.targets("UPSERT"):
        t.continuous, t.max_rounds, t.source_limit = True, rounds, 1  # one landed file a round
        out.append(t)
    return out


def _held_until_two_rounds_pass(monkeypatch, base):
    """The first compaction starts only once two more rounds have committed after it was scheduled:
    rounds certainly write into the file groups of a pending compaction (on a table this small it
    would otherwise be done before the next round's commit)."""
    execute, held = compaction.Compactor._execute, []

    def later(self, table, base_path, opts, pool, instants):
        if not held:
            held.append(instants[0])
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and len(
                    [i for i in _instants(base) if i.action == "deltacommit" and i.is_completed
                     and i.requested_time > instants[0]]) < 2:
                time.sleep(0.2)
        execute(self, table, base_path, opts, pool, instants)

    monkeypatch.setattr(compaction.Compactor, "_execute", later)
    return held


def test_compaction_runs_beside_the_rounds_and_the_table_stays_exact(tmp_path, spark, monkeypatch):
    # compaction after 3 delta commits, beside the rounds; table version 9: on 6 an update written while the
    # compaction was pending was lost once it completed (measured), so 6 compacts inline (`on_version_6`)
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",), hudi_options={compaction.MODE_PROP: "async"},
                table_version=9)
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    rng, lsn, keys, logs = random.Random(11), 1000, set(range(1, 31)), []
    for _ in range(8):
        events, lsn = _random_round(rng, lsn, keys)
        lake.land(events)
    held = _held_until_two_rounds_pass(monkeypatch, base)
    results = streamer.run_targets(spark, _continuous(lake, 8), log=logs.append)
    assert len(results) == 8 and all(r.commit for r in results)
    lake.assert_matches()

    instants = _instants(base)
    done = {i.requested_time: i for i in instants if i.is_completed}
    compactions = sorted(i.requested_time for i in instants if i.is_compaction and i.requested_time in done)
    assert compactions, logs
    assert not compaction.pending(base), "the stream waited for its compaction before it ended"
    assert not [m for m in logs if "failed" in m], logs
    first = compactions[0]
    assert held == [first]
    ended = done[first].completion_time
    if ended is not None:
        beside = [i for i in done.values() if i.action == "deltacommit" and first < i.requested_time < ended]
    else:  # table version 6 keeps no completion time: the completed instants' files say when each ended
        from hudi_cdc.config import uri_to_path

        hoodie = Path(uri_to_path(base)) / ".hoodie"
        end = (hoodie / f"{first}.commit").stat().st_mtime
        beside = [i for i in done.values() if i.action == "deltacommit" and first < i.requested_time
                  and (hoodie / f"{i.requested_time}.deltacommit").stat().st_mtime < end]
    assert len(beside) >= 2, f"no delta commit while compaction {first} was pending: {sorted(done)}"
    assert any(f"compacted {first}" in m for m in logs), logs
    # the rounds during the compaction kept the lookup without Hudi's merged read, and it is exact
    assert not [m for m in logs if "merged snapshot" in m or "no key file" in m], logs
    view = logkeys.stored_view(spark, base, COLS, ["__lsn"])
    assert view is not None and _keys(view.collect()) == _snapshot(spark, base)


def test_a_run_that_ends_compacts_inline(tmp_path, spark):
    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",), hudi_options={compaction.MODE_PROP: "async"},
                table_version=9)
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    rng, lsn, keys = random.Random(5), 1000, set(range(1, 31))
    for _ in range(4):
        events, lsn = _random_round(rng, lsn, keys)
        lake.land(events)
        lake.run("UPSERT")
    instants = _instants(base)
    planned = {i.requested_time for i in instants if i.is_compaction}
    assert planned & {i.requested_time for i in instants if i.is_completed}, "compacted in the round"
    lake.assert_matches()


def test_a_quiet_tables_logs_wait_at_most_compaction_max_seconds(tmp_path, spark, monkeypatch):
    """`compaction_max_seconds`: Hudi's NUM_OR_TIME trigger while rounds write; a round that finds no file
    compacts logs that waited longer, under `stream --all` too (lake/ro_view.py: `status` shows the
    read-optimized view catch up)."""
    from hudi_cdc.lake.status import table_status

    lake = Lake(tmp_path, spark, types=("MERGE_ON_READ",), table_options={"compaction_max_seconds": 3600})
    base = lake.pipeline.base_path("artists", "MERGE_ON_READ")
    lake.land(SNAPSHOT)
    lake.run("BULK_INSERT")
    events, _ = _random_round(random.Random(3), 1000, set(range(1, 31)))
    lake.land(events)
    lake.run("UPSERT")
    before = table_status(lake.pipeline, "artists", "MERGE_ON_READ")
    assert before.ro_lagging_commits == 1 and before.ro_freshness_seconds > before.freshness_seconds, before
    lake.run("UPSERT")  # no new file, the logs waited less than 3600 s: nothing to do
    assert not [i for i in _instants(base) if i.is_compaction]
    real = time.time
    with monkeypatch.context() as m:
        m.setattr(compaction.time, "time", lambda: real() + 3601)
        # under stream --all (what `run` starts): nothing landed, so no round but the one the overdue compaction
        # owes (loops.Quiet); that round finds no file and compacts, as a single table's stream does
        targets = [dataclasses.replace(t, continuous=True, all_tables=True, max_rounds=1)
                   for t in lake.targets("UPSERT")]
        [done] = run_all_tables(spark, targets, log=lambda m: None)
    assert done["rounds"] == 1 and done["skipped"], done
    assert [i for i in _instants(base) if i.is_compaction] and not compaction.pending(base)
    after = table_status(lake.pipeline, "artists", "MERGE_ON_READ")
    assert after.ro_lagging_commits == 0 and after.ro_freshness_seconds == after.freshness_seconds, after
    assert after.table_version == 6, "the procedure kept the table's version"
    lake.assert_matches()


def test_async_compaction_on_table_version_6_is_refused_at_load(tmp_path, spark):
    from hudi_cdc.errors import ConfigError

    with pytest.raises(ConfigError, match=r"tables.artists.hudi_options: .*async needs hudi.table_version 8 or 9"):
        Lake(tmp_path, spark, types=("MERGE_ON_READ",), hudi_options={compaction.MODE_PROP: "async"})


def test_which_targets_compact_beside_their_rounds():
    on = {"hoodie.compact.inline": "true", compaction.MODE_PROP: "async"}
    assert compaction.is_async(True, "MERGE_ON_READ", on)
    assert not compaction.is_async(True, "MERGE_ON_READ", {"hoodie.compact.inline": "true"}), "opt-in"
    assert not compaction.is_async(False, "MERGE_ON_READ", on), "--once compacts inline"
    assert not compaction.is_async(True, "COPY_ON_WRITE", on)
    assert not compaction.is_async(True, "MERGE_ON_READ", {**on, "hoodie.compact.inline": "false"})
    assert not compaction.is_async(True, "MERGE_ON_READ", {**on, compaction.MODE_PROP: "inline"})
    assert not compaction.is_async(True, "MERGE_ON_READ", {**on, "hoodie.write.table.version": "6"}), "6: inline"
    assert compaction.is_async(True, "MERGE_ON_READ", {**on, "hoodie.write.table.version": "9"})
    zk = {**on, "hoodie.write.lock.zookeeper.url": "zk1:2181,zk2:2181"}
    assert not compaction.is_async(True, "MERGE_ON_READ", zk), "options the procedure cannot carry: inline"
    opts = {"hoodie.compaction.target.io": "40", "hoodie.table.name": "t"}
    compaction.writer_options(opts)
    assert opts["hoodie.compact.inline"] == "false" and opts["hoodie.compact.schedule.inline"] == "true"
    sql = compaction.procedure_sql("s3://b/it's", opts)
    assert sql.startswith("CALL run_compaction(op => 'execute', path => 's3://b/it\\'s'")
    assert f"hoodie.write.lock.provider={compaction.IN_PROCESS_LOCK}" in sql and "target.io=40" in sql
    assert "hoodie.table.name" not in sql


def test_a_base_file_of_an_unfinished_write_is_no_lookup():
    s = SimpleNamespace(file_id="f1", base_file_name="f1-0_0-1-2_20260101000000000.parquet", log_file_names=[])
    pairs, why = logkeys.log_pairs([s], set(), set(), {"20260101000000000"})
    assert pairs is None and "unfinished write" in why
    # made by a completed instant, on the active timeline or archived since: read
    assert logkeys.log_pairs([s], set(), set(), {"20250101000000000"}) == (set(), "")


def test_rounds_get_freed_cores_before_compactions():
    import xml.etree.ElementTree as ET

    conf = compaction.rounds_first(["orders_mor", "a<b"])
    assert conf["spark.scheduler.mode"] == "FAIR"
    pools = {p.get("name"): p for p in ET.parse(conf["spark.scheduler.allocation.file"]).getroot()}
    assert set(pools) == {"default", "orders_mor", "a<b"}  # compaction pools are left unlisted: no share
    assert all(int(p.findtext("minShare")) >= 1000 for p in pools.values())
    assert compaction.pool_of("orders_mor") not in pools
