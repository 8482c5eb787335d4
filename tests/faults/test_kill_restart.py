"""The fault suite (issue 11): a continuous `hudi-cdc stream` over CoW and MoR, new change files
landing throughout (updates, partition moves, key-only deletes, inserts, re-inserts, stale events,
redeliveries of single events and of whole files), killed with SIGKILL at chosen points, restarted.
After the last cycle the tables equal the replay of every event, no key twice, no dangling instant,
the checkpoint is the newest file.

Kill points per cycle (round-robin from a seeded shuffle): `startup` (a random moment in the first
seconds: JVM start, listing, reading), `write` (a write instant requested/inflight), `commit` (just
after a write completed: tombstones, clean, archival), `compaction` (MoR inline compaction planned or
running), `job` (only the spark-submit JVM dies: the supervisor restarts it in the same command).
HUDI_CDC_FAULT_CYCLES=N (default 2 for CI); HUDI_CDC_FAULT_SEED; figures in fault-report.json.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time

import pytest

from .harness import TYPES, FaultLake, gone, job_pids, kill

pytestmark = [pytest.mark.e2e, pytest.mark.faults]

CYCLES = int(os.environ.get("HUDI_CDC_FAULT_CYCLES", "2"))
SEED = int(os.environ.get("HUDI_CDC_FAULT_SEED", "11"))
POINTS = ("write", "compaction", "commit", "startup", "job")


def _new(lake: FaultLake, before: dict, match) -> list[str]:
    return [f"{tt[:3]}:{n}" for tt in TYPES for n in lake.timeline(tt) if n not in before[tt] and match(n)]


def _wait_point(lake: FaultLake, proc, point: str, rng: random.Random, timeout: float = 240) -> str:
    """Block until the kill point is reached (or the timeout: then a plain timed kill); what was hit."""
    before = {tt: set(lake.timeline(tt)) for tt in TYPES}
    if point in ("startup",):
        time.sleep(rng.uniform(1, 25))
        return "startup"
    matchers = {
        "write": lambda n: n.endswith(("commit.requested", ".inflight")) and "compaction" not in n,
        "job": lambda n: n.endswith(("commit.requested", ".inflight")) and "compaction" not in n,
        "compaction": lambda n: "compaction" in n and "_" not in n,
        "commit": lambda n: "_" in n and n.endswith((".commit", ".deltacommit")),
    }
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        hit = _new(lake, before, matchers[point])
        if hit:
            if point in ("write", "job"):
                time.sleep(rng.uniform(0, 2.0))  # somewhere in the write
            return f"{point} ({hit[0]})"
        time.sleep(0.02)
    return f"{point}: not reached in {timeout:.0f}s, killed anyway"


@pytest.mark.timeout(900 + 300 * CYCLES)
def test_sigkill_anywhere_loses_nothing(tmp_path):
    rng = random.Random(SEED)
    lake = FaultLake(tmp_path, seed=SEED)
    lake.snapshot(40)
    lake.change_file()
    t0 = time.time()
    assert lake.cli("bootstrap").returncode == 0
    report: dict = {"cycles": CYCLES, "seed": SEED, "kills": [], "bootstrap_s": round(time.time() - t0, 1)}
    points = [POINTS[i % len(POINTS)] for i in range(CYCLES)]
    rng.shuffle(points)
    landing = lake.keep_landing()
    try:
        for cycle, point in enumerate(points):
            started = time.time()
            proc = lake.start_stream(f"cycle{cycle}")
            hit = _wait_point(lake, proc, point, rng)
            if point == "job":  # the JVM dies, the command restarts it, then the whole command dies too
                for pid in job_pids(proc.pid):
                    kill(pid)
                out = tmp_path / f"cycle{cycle}.out"
                deadline = time.time() + 120
                while "restart 1" not in out.read_text() and time.time() < deadline:
                    time.sleep(0.5)
                assert "killed by SIGKILL" in out.read_text(), out.read_text()[-2000:]
                hit += " -> restarted"
                time.sleep(rng.uniform(5, 30))
            assert proc.poll() is None, (tmp_path / f"cycle{cycle}.out").read_text()[-3000:]
            jvms = job_pids(proc.pid)
            kill(proc.pid)  # the whole command, as a machine or container dies
            proc.wait()
            assert all(gone(p, 30) for p in jvms), "the job outlived its killed command"
            left = {tt[:3]: lake.dangling(tt) for tt in TYPES}
            report["kills"].append({"cycle": cycle, "point": hit, "after_s": round(time.time() - started, 1),
                                    "left_dangling": left})
    finally:
        landing.set()
    # the last writer: starts on whatever the kills left, catches up on every file, stops on SIGTERM
    t1 = time.time()
    proc = lake.start_stream("final")
    lake.change_file()
    lake.wait_caught_up(proc, 600)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(300) == 0, (tmp_path / "final.out").read_text()[-3000:]
    report["final_catch_up_s"] = round(time.time() - t1, 1)
    report["files"], report["events"] = len(lake.files), len(lake.events)
    report["total_s"] = round(time.time() - t0, 1)
    dangling = {tt: lake.dangling(tt) for tt in TYPES}
    report["dangling_after"] = dangling
    report["timeline_tail"] = {tt[:3]: lake.timeline(tt)[-12:] for tt in TYPES}
    (tmp_path / "fault-report.json").write_text(json.dumps(report, indent=1))
    print("fault report:", json.dumps(report))
    assert dangling == {tt: [] for tt in TYPES}, dangling
    assert lake.caught_up()
    lake.assert_exact()
