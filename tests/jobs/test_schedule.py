"""`stream --all`'s scheduler without a JVM (issue 38): the pick (jobs/stream/schedule.py, a pure function),
what a landing folder has pending without listing it on every look, and the dispatcher over a fake round:
a hot table does not starve trickling ones, a quiet table has no round, one table's rounds never overlap."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from hudi_cdc.jobs.stream.loops import AllTables, LoopSettings, Quiet
from hudi_cdc.jobs.stream.round import RoundResult
from hudi_cdc.jobs.stream.schedule import Landing, Waiting, next_ready, parallel_rounds, pick
from tests.jobs.test_stream_all import FakeSpark, _targets


def test_the_longest_waiting_table_goes_first_and_never_one_in_a_round_backing_off_or_quiet():
    now = 1000.0
    tables = [
        Waiting("hot", pending_since=990.0, last_finished=999.0),  # its round just ended: waits from 999
        Waiting("trickle", pending_since=950.0, last_finished=900.0),  # one file, landed 50 s ago
        Waiting("quiet", pending_since=None, last_finished=10.0),  # nothing landed: never due
        Waiting("busy", pending_since=100.0, running=True),  # in a round: never a second one
        Waiting("failing", pending_since=100.0, ready_at=1010.0),  # backing off
        Waiting("gone", pending_since=100.0, done=True),  # given up
        Waiting("new", pending_since=980.0),
    ]
    assert pick(tables, now, 10) == ["trickle", "new", "hot"]
    assert pick(tables, now, 2) == ["trickle", "new"]
    assert pick(tables, now, 0) == []
    assert next_ready(tables, now) == 1010.0
    # a hot table with a backlog older than everyone's still waits behind those waiting since its round ended
    backlog = [Waiting("hot", pending_since=1.0, last_finished=999.0), Waiting("trickle", pending_since=998.0)]
    assert pick(backlog, now, 1) == ["trickle"]
    # ties: the older pending file, then the name
    assert pick([Waiting("b", 5.0, 7.0), Waiting("a", 6.0, 7.0), Waiting("c", 6.0, 7.0)], now, 3) == ["b", "a", "c"]


def test_parallel_rounds_from_the_cores_unless_set():
    from hudi_cdc.jobs.stream.main import driver_cores

    assert parallel_rounds(3, 16) == 3
    assert [parallel_rounds(0, c) for c in (None, 1, 2, 4, 64)] == [2, 2, 2, 4, 8]

    class Spark:  # the master names the cores; locally the default parallelism is the shuffle partitions
        def __init__(self, master):
            self.sparkContext = type("SC", (), {"master": master, "defaultParallelism": 4})()

    assert [driver_cores(Spark(m)) for m in ("local[2]", "local", "yarn")] == [2, 1, 4]
    assert driver_cores(Spark("local[*]")) == os.cpu_count()


def test_a_landing_is_listed_again_only_when_its_folder_changed(tmp_path: Path):
    now = [time.time() + 10]  # later than the folders' times by more than the racy window
    calls: list[str] = []

    def walk(root):
        calls.append(root)
        from hudi_cdc.common import storage
        return storage.walk_files(root)

    root = tmp_path / "topic"
    cuts = tmp_path / "_hudi_cdc_cuts"
    cuts.mkdir()
    landing = Landing(str(root), clock=lambda: now[0], walk=walk, cuts=str(cuts))
    assert landing.pending_since(None) is None and calls == []  # no folder: nothing, and no listing
    part = root / "partition=0"
    part.mkdir(parents=True)
    f1 = part / "t+0+0.avro"
    f1.write_bytes(b"x")
    os.utime(f1, ns=(1_000_000_000_000, 1_000_000_000_000))  # mtime 1000 s (1,000,000 ms)
    old = time.time() - 60
    os.utime(part, (old, old))
    os.utime(root, (old, old))
    os.utime(cuts, (old, old))
    assert landing.pending_since(None) == 1000.0 and len(calls) == 1
    for _ in range(5):  # a quiet folder: looked at, never listed again
        assert landing.pending_since("999999") == 1000.0
        assert landing.pending_since("1000000") is None
    assert len(calls) == 1
    f2 = part / "t+0+1.avro"
    f2.write_bytes(b"y")
    os.utime(f2, ns=(2_000_000_000_000, 2_000_000_000_000))
    os.utime(part, (old + 1, old + 1))  # (a folder changed within RACY_SECONDS is never held: see below)
    assert landing.pending_since("1000000") == 2000.0 and len(calls) == 2  # the partition folder changed
    landing.hold()  # a round took nothing (an open transaction): nothing pending until a folder changes
    assert landing.pending_since("1000000") is None
    os.utime(cuts, (old + 2, old + 2))  # capture's next transaction cut: the held file may go now
    assert landing.pending_since("1000000") == 2000.0 and len(calls) == 2
    landing.hold()
    assert landing.pending_since("1000000") is None
    (part / "t+0+2.avro").write_bytes(b"z")
    assert landing.pending_since("1000000") == 2000.0 and len(calls) == 3
    now[0] = time.time()
    landing.hold()  # the folder changed just now: a file landing in the same clock tick could hide, no hold
    assert landing.pending_since("1000000") == 2000.0
    now[0] = time.time() + 10
    seen = landing.seen()  # a round starts: its files wait for a cut ...
    os.utime(cuts, (old + 3, old + 3))  # ... which capture writes while the round runs
    landing.hold(seen)  # the round ends having taken nothing: not held against the cut it did not see
    assert landing.pending_since("1000000") == 2000.0


def test_an_s3_landing_held_for_a_cut_is_looked_at_again():
    """On s3:// the cuts folder is not watched: a held table's files are pending again after HELD_S3_SECONDS
    (before: held until its topic landed another file, so a quiet table's last transaction waited for ever)."""
    from hudi_cdc.jobs.stream.schedule import HELD_S3_SECONDS

    now = [1000.0]
    files = [("s3://b/t/partition=0/t+0+0.avro", 900_000, 1)]
    landing = Landing("s3://b/t", clock=lambda: now[0], walk=lambda root: files)
    assert landing.pending_since(None) == 900.0
    landing.hold(landing.seen())
    assert landing.pending_since(None) is None
    now[0] += HELD_S3_SECONDS + 6  # past the hold (and the relisting interval)
    assert landing.pending_since(None) == 900.0


def _result(t, skipped=False):
    return RoundResult(table=t.target_table, base_path=t.target_base_path, operation="UPSERT", skipped=skipped,
                       commit=None if skipped else "2026", checkpoint="1")


class Pending:
    """A fake landing: a table is pending while `left[table]` > 0; each round takes one."""

    def __init__(self, left: dict[str, float]):
        self.left = left

    def __call__(self, t):
        name = t.target_table.rpartition(".")[2]
        left = self.left

        class One:
            def pending_since(self, checkpoint):
                return time.time() - 1 if left.get(name, 0) > 0 else None

            def seen(self):
                return ()

            def hold(self, seen=None):
                pass

        return One()


def test_the_dispatcher_serves_trickling_tables_beside_a_hot_one_and_never_rounds_a_quiet_one():
    names = ["hot", "quiet", *[f"t{i}" for i in range(6)]]
    targets = _targets(*names)
    left = {"hot": float("inf"), **{f"t{i}": 2 for i in range(6)}}  # the hot table always has files
    rounds: dict[str, int] = {}
    in_round: set[str] = set()
    overlap = []
    lock = threading.Lock()
    stop = threading.Event()

    def run_round(spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        with lock:
            overlap.append(name in in_round)
            in_round.add(name)
        time.sleep(0.01 if name.startswith("t") else 0.05)  # the hot table's rounds are longer
        with lock:
            in_round.discard(name)
            rounds[name] = rounds.get(name, 0) + 1
            left[name] = left.get(name, 0) - 1
            if all(left[f"t{i}"] <= 0 for i in range(6)):
                stop.set()
        return _result(t, skipped=name == "quiet")

    settings = LoopSettings(max_parallel=2)
    threading.Timer(20, stop.set).start()  # a ceiling: a starved table fails the asserts, never hangs
    results = AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, settings, run_round, stop.is_set,
                        lambda m: None, landing=Pending(left), checkpoint=lambda t: None).run()
    # every trickling table had both its rounds while the hot one kept a slot busy; the quiet one none (its
    # checkpoint read without a round; without `checkpoint` its first round reads it)
    assert all(rounds.get(f"t{i}") == 2 for i in range(6)), rounds
    assert "quiet" not in rounds and rounds["hot"] >= 1
    assert not any(overlap)
    assert {r["table"]: r["state"] for r in results}["db_cow.quiet"] == "stopped"


def test_a_quiet_table_whose_compaction_is_overdue_gets_one_round_and_no_more():
    """stream --all gives a table with nothing landed a round when its quiet work is due (the MoR compaction
    past compaction_max_seconds: the round finds no file and compacts), and none once it is done."""
    targets = _targets("quiet", "idle")
    owed = {"quiet": 1}
    looks: dict[str, int] = {}
    rounds: dict[str, int] = {}
    stop = threading.Event()

    def due(name):
        def check():
            looks[name] = looks.get(name, 0) + 1
            return owed.get(name, 0) > 0
        return check

    def run_round(spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        rounds[name] = rounds.get(name, 0) + 1
        owed[name] = 0  # the round compacted
        threading.Timer(2.5, stop.set).start()  # two more ticks of the dispatcher
        return _result(t, skipped=True)

    quiet = {"quiet_cow": Quiet(0.05, due("quiet")), "idle_cow": Quiet(0.05, due("idle"))}
    threading.Timer(20, stop.set).start()
    AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, LoopSettings(max_parallel=2), run_round, stop.is_set,
              lambda m: None, landing=Pending({}), checkpoint=lambda t: None, quiet=quiet).run()
    assert rounds == {"quiet": 1}, rounds
    assert looks["quiet"] >= 2 and looks["idle"] >= 2  # looked at again after its round: nothing owed
