"""Rounds aligned on capture's cuts under `stream --all` (hudi_cdc/jobs/stream/aligned.py): the generations'
rule on a real cuts folder, and the dispatcher ending a hot table's and a slow table's rounds on one cut."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from hudi_cdc.jobs.stream import cuts
from hudi_cdc.jobs.stream.aligned import Generations
from hudi_cdc.jobs.stream.loops import AllTables, LoopSettings
from tests.jobs.test_schedule import FakeSpark, Pending, _result, _targets


def _cut(folder: Path, n: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / cuts.cut_name(n)).write_text(json.dumps({"cut": n, "lsn": 100 + n, "topics": {}}))
    os.utime(folder, ns=(time.time_ns(), time.time_ns() + n))  # a new modification time for each cut


def test_a_generation_ends_when_every_table_is_through_its_ceiling(tmp_path: Path):
    folder = tmp_path / "landing" / cuts.CUTS_DIR
    _cut(folder, 1)
    _cut(folder, 2)
    g = Generations({"a": str(folder), "b": str(folder), "k": None})  # k: a landing without cuts
    assert g.ceiling("a") == 2 and g.ceiling("k") is None and g.eligible("a") and g.eligible("k")
    g.finished("a", 2, taken=True)
    assert not g.eligible("a") and g.eligible("b")
    assert not g.next_generation(lambda k: False, running=0)  # b has files and no round yet
    g.finished("b", 1, taken=True)  # cut short by the source limit: another round in this generation
    assert g.eligible("b")
    _cut(folder, 3)
    assert not g.next_generation(lambda k: k == "a", running=0) and g.ceiling("b") == 2
    g.finished("b", 2, taken=True)
    assert not g.next_generation(lambda k: False, running=1)  # a round still runs
    assert g.next_generation(lambda k: False, running=0)
    assert g.ceiling("a") == g.ceiling("b") == 3 and g.eligible("a") and g.eligible("b")
    g.finished("a", None, taken=False)  # its files all came after the ceiling: nothing to take
    g.finished("b", None, taken=False, failed=True)  # a failed round does not hold the others back
    assert not g.eligible("a") and not g.eligible("b")
    assert not g.next_generation(lambda k: False, running=0)  # no newer cut: nothing to move to
    assert not g.eligible("a")


def test_the_dispatcher_ends_every_table_on_the_same_cut(tmp_path: Path):
    """A hot table (short rounds, always files) and a slow one under 2 parallel rounds while cuts keep
    coming: each generation's rounds end on its ceiling, the hot table never runs ahead of the slow one."""
    folder = tmp_path / "landing" / cuts.CUTS_DIR
    _cut(folder, 1)
    targets = _targets("hot", "slow")
    left = {"hot": float("inf"), "slow": float("inf")}
    ended: dict[str, list[int]] = {"hot": [], "slow": []}
    stop = threading.Event()
    n = [1]

    def run_round(spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        time.sleep(0.01 if name == "hot" else 0.1)
        n[0] += 1
        _cut(folder, n[0])  # capture cuts while the rounds run
        ended[name].append(t.cut_ceiling)
        if len(ended["slow"]) >= 4:
            stop.set()
        result = _result(t)
        result.files, result.cut = ["f"], t.cut_ceiling
        return result

    threading.Timer(20, stop.set).start()
    generations = Generations({"hot_cow": str(folder), "slow_cow": str(folder)})
    AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, LoopSettings(max_parallel=2), run_round,
              stop.is_set, lambda m: None, landing=Pending(left), checkpoint=lambda t: None,
              generations=generations).run()
    k = min(len(ended["hot"]), len(ended["slow"]))
    assert k >= 3 and ended["hot"][:k] == ended["slow"][:k], ended  # one round each per generation, same cut
    assert len(set(ended["slow"])) == len(ended["slow"])  # every generation a newer cut


def test_files_landed_after_the_generations_ceiling_are_taken_in_the_next_one(tmp_path: Path):
    """A small table's files land with cut 2 while a big table's round of generation 1 (ceiling: cut 1) runs;
    the small table's round in that generation takes nothing (its files end on cut 2, past the ceiling). It
    must not be held as if it waited for a cut capture has not written: cut 2 is there, and it is the next
    generation's ceiling (held, the table waited until its folder changed again: for ever on a quiet table)."""
    folder = tmp_path / "landing" / cuts.CUTS_DIR
    _cut(folder, 1)
    targets = _targets("big", "small")
    landed = {"small": False}
    held: list[str] = []
    ends: dict[str, list] = {"big": [], "small": []}
    stop = threading.Event()

    class Landing:
        def __init__(self, name):
            self.name, self.held = name, False

        def pending_since(self, checkpoint):
            if self.held:  # what schedule.Landing does: nothing pending until a folder changes (none does)
                return None
            return time.time() - 1 if self.name == "big" and not ends["big"] or landed.get(self.name) else None

        def seen(self):
            return ()

        def hold(self, seen=None):
            self.held = True
            held.append(self.name)

    def run_round(spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        result = _result(t)
        if name == "big":
            landed["small"] = True  # capture lands the small table's transaction, then its cut
            _cut(folder, 2)
            time.sleep(0.3)  # the small table's round of this generation runs meanwhile
            result.files, result.cut = ["f"], t.cut_ceiling
        elif t.cut_ceiling >= 2:
            landed["small"] = False
            result.files, result.cut = ["f"], 2
            stop.set()
        else:
            result.skipped, result.commit = True, None  # its files wait: past this generation's ceiling
        ends[name].append(t.cut_ceiling)
        return result

    threading.Timer(10, stop.set).start()
    landings = {t.target_table: Landing(t.target_table.rpartition(".")[2]) for t in targets}
    AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, LoopSettings(max_parallel=2), run_round,
              stop.is_set, lambda m: None, landing=lambda t: landings[t.target_table], checkpoint=lambda t: None,
              generations=Generations({"big_cow": str(folder), "small_cow": str(folder)})).run()
    assert ends["small"] == [1, 2] and not held, (ends, held)
