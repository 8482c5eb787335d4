"""The benchmark command (benchmarks/run.py): its generated stream, and a smoke run of the command.

The smoke run (e2e) starts three Spark JVMs, ~30 s on an idle 2-core machine; the stream tests are unit
tests (no JVM).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fastavro
import pytest

from benchmarks import stream
from hudi_cdc.sample import replay

ROOT = Path(__file__).resolve().parents[2]


def _events(landing: Path) -> list[dict]:
    out: list[dict] = []
    files = sorted((landing / stream.TOPIC / "partition=0").glob("*.avro"), key=lambda p: p.stat().st_mtime_ns)
    for p in files:
        with open(p, "rb") as fh:
            out.extend(fastavro.reader(fh))  # type: ignore[arg-type]
    return out


def test_stream_mix_replays_to_the_generators_state(tmp_path):
    """Snapshot + two 1% batches: the independent replay of the landed files equals the generator's live
    keys and partitions; every kind of event is there; redeliveries repeat a stored event exactly."""
    src = stream.Stream(2_000, seed=5)
    landing = stream.Landing(tmp_path)
    assert len(landing.land_many(src.snapshot(), 10)) == 10
    mixes = []
    for _ in range(2):
        events, mix = src.changes(200)
        landing.land(events)
        mixes.append(mix)
    assert mixes[0] == {"move": 20, "delete": 20, "insert": 30, "redeliver": 10, "update": 120}
    events = _events(tmp_path)
    state = replay(events, stream.KEY)
    assert {k: v[stream.PARTITION] for k, v in state.items()} == src.live
    assert len(state) == 2_000 + 2 * (30 - 20)
    deletes = [e for e in events if e["__deleted"] == "true"]
    assert len(deletes) == 40 and all(e[stream.PARTITION] is None for e in deletes)
    redelivered = [e for e in events[2_000:] if e["__op"] == "r"]
    assert len(redelivered) == 20 and all(e["__lsn"] == stream.SNAPSHOT_LSN for e in redelivered)
    mtimes = [p.stat().st_mtime_ns for p in (tmp_path / stream.TOPIC / "partition=0").glob("*.avro")]
    assert len(set(mtimes)) == len(mtimes) == 12


def test_landing_continues_offsets(tmp_path):
    """A second Landing on the same folder names its files after the offsets already landed."""
    first = stream.Landing(tmp_path)
    first.land([stream._row(1, "C01", 5, "c", __import__("random").Random(1))] * 3)
    second = stream.Landing(tmp_path)
    path = second.land([stream._row(2, "C02", 6, "c", __import__("random").Random(1))])
    assert path.name.endswith("+0000000003.avro")


@pytest.mark.e2e
def test_benchmark_smoke(tmp_path):
    """`python -m benchmarks.run --rows 2000 --runs 1 --scenarios bootstrap` writes the report, its
    PNG and results.json with real timings of all three processes."""
    out = tmp_path / "report"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run", "--rows", "2000", "--runs", "1",
                           "--scenarios", "bootstrap", "--out", str(out)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "[bench" in proc.stderr  # progress on stderr
    report = (out / "report.md").read_text()
    assert "bootstrap CoW / plain Parquet" in report and "![bootstrap.png](bootstrap.png)" in report
    png = (out / "bootstrap.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000
    results = json.loads((out / "results.json").read_text())
    for name in ("plain parquet", "bootstrap cow", "bootstrap mor"):
        # a measured process: a time and a JVM's memory were recorded (no bound on the time itself)
        assert results["bootstrap"][name]["median_s"] > 0 and results["bootstrap"][name]["peak_rss_mb"] > 100
    assert results["machine"]["cores"] >= 1


def test_snapshot_in_batches_is_the_snapshot(tmp_path):
    """The 10M-row path (snapshot_batches, land_snapshot, adopt) yields what the one-list snapshot does."""
    whole = stream.Stream(1_000, seed=5)
    rows = whole.snapshot()
    batched = stream.Stream(1_000, seed=5)
    assert [r for b in batched.snapshot_batches(7) for r in b] == rows
    assert batched.live == whole.live and batched.next_key == whole.next_key == 1_001
    adopted = stream.Stream(1_000)
    adopted.adopt()
    assert adopted.live == whole.live and adopted.next_key == 1_001
    other = stream.Landing(tmp_path, "bench.public.other")
    files = other.land_snapshot(stream.Stream(100, seed=1), 3)
    assert len(files) == 3 and all(f.parent == tmp_path / "bench.public.other" / "partition=0" for f in files)
    assert sum(len(list(fastavro.reader(open(f, "rb")))) for f in files) == 100


def test_sustained_freshness_mapping(tmp_path):
    """A file (or a transaction) is readable at the first commit whose checkpoint (newest source time)
    reaches it; quantiles are weighted by events."""
    from benchmarks.sustained import Monitor, weighted

    mon = Monitor(tmp_path)  # no table yet: no commits
    mon.stop()
    mon.commits = [{"seen": 100.0, "checkpoint_ms": None, "source_ts_ms": None},  # a compaction
                   {"seen": 110.0, "checkpoint_ms": 5_000, "source_ts_ms": 4_000},
                   {"seen": 130.0, "checkpoint_ms": 9_000, "source_ts_ms": 8_000}]
    assert mon.covered_at(5_000) == 110.0 and mon.covered_at(5_001) == 130.0 and mon.covered_at(9_001) is None
    assert mon.covered_by_source_ts(3_000) == 110.0 and mon.covered_by_source_ts(8_001) is None
    assert weighted([(1.0, 90), (50.0, 10)], 0.95) == 50.0
    assert weighted([(1.0, 96), (50.0, 4)], 0.95) == 1.0


def test_sustained_step_over_many_tables(tmp_path):
    """--tables N: the offered rate split evenly over the tables, each tick one file of each table landed
    under its own topic, and the step's figures over every table's events (per table: its commits and
    p95); --from-pristine is refused with more than one table."""
    import time

    from benchmarks import procs, sustained

    assert sustained.shares(300, 3) == [100, 100, 100] and sustained.shares(1001, 3) == [334, 334, 333]
    with pytest.raises(SystemExit):
        sustained.main(["--tables", "3", "--from-pristine", str(tmp_path), "--work", str(tmp_path / "w")])
    feeds = []
    for i in range(2):
        name = f"customers_t{i:02d}"
        feed = sustained.Feed(name, stream.Stream(50, seed=i), stream.Landing(tmp_path, f"bench.public.{name}"),
                              tmp_path / "lake" / name, tmp_path / "staging" / name)
        feed.src.adopt()
        feed.mon = sustained.Monitor(feed.table)  # no table: no commits; one covering every file, 5 s on
        feed.mon.stop()
        feed.mon.commits = [{"seen": time.time() + 5, "checkpoint_ms": 2**62, "source_ts_ms": None}]
        feeds.append(feed)
    files = [f.generate(r, 1, 0.1, seed=1) for f, r in zip(feeds, sustained.shares(40, 2), strict=True)]
    assert [len(fs) for fs in files] == [10, 10]
    proc, fh = procs.start([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "p.log", procs.env())
    try:
        res = sustained.step(feeds, proc, files, 40, 0.1, 10, 30.0)
    finally:
        procs.stop(proc)
        fh.close()
    assert (res["events"], res["files"], res["drained"], res["commits"]) == (40, 20, True, 2)
    assert set(res["per_table"]) == {"customers_t00", "customers_t01"}
    assert all(t["commits"] == 1 and 3 < t["p95_s"] < 6 for t in res["per_table"].values())
    for f in feeds:
        assert len(list(f.landing.dir.glob(f"bench.public.{f.name}+0+*.avro"))) == 10


def test_stop_a_process_and_end_a_rate_ladder(tmp_path, capsys):
    """procs.stop ends a running process with SIGTERM (one already ended is left as it is); a rate
    ladder's summary is its highest sustained rate, and its results are saved and printed as one JSON."""
    import signal

    from benchmarks import procs, report

    proc, fh = procs.start([sys.executable, "-c", "import time; time.sleep(120)"], tmp_path / "p.log", procs.env())
    try:
        assert procs.cpu_seconds(proc.pid) >= 0
        assert procs.stop(proc) == -signal.SIGTERM
        assert procs.stop(proc) == -signal.SIGTERM
    finally:
        fh.close()
    results: dict = {"steps": [{"offered_rate": 8, "sustained": True}, {"offered_rate": 16, "sustained": False}]}
    report.sustained_summary(results)
    assert results["highest_sustained_rate"] == 8 and results["per_core"] == round(8 / (os.cpu_count() or 1))
    assert report.finish(results, str(tmp_path / "r.json")) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "r.json").read_text()) == results
    report.sustained_summary(none := {"steps": [{"offered_rate": 8, "sustained": False}]})
    assert none["highest_sustained_rate"] is None and none["per_core"] is None


def test_peak_memory_counts_shared_pages_once(tmp_path):
    """A process tree whose child shares its parent's pages (a fork, as the JVM's spawned helpers and
    pyspark's daemon workers do): the summed RSS counts those pages twice, the summed PSS once."""
    from benchmarks import procs

    script = ("import os, time\n"
              "buf = bytearray(os.urandom(1)) * (300 * 2**20)\n"  # 300 MB, touched
              "pid = os.fork()\n"
              "time.sleep(3)\n"
              "if pid: os.waitpid(pid, 0)\n")
    proc = subprocess.Popen([sys.executable, "-c", script])
    rss = procs.PeakRss(proc.pid)
    proc.wait(30)
    peak_rss = rss.stop()
    assert peak_rss > 550, peak_rss  # parent and child each show the 300 MB
    assert 250 < rss.peak_pss_mb < 450, rss.peak_pss_mb  # shared once
    assert len(rss.breakdown) == 2 and all(v > 250 for v in rss.breakdown.values()), rss.breakdown


@pytest.mark.unit
def test_warm_rounds_reads_the_phases_of_committed_rounds():
    from benchmarks.warm_rounds import _phases

    lines = ["  bench_mor.t00: committed 20261129231038619, checkpoint 1795993832864 (read 0.9 s, locate 3.5 s, "
             "write 1.6 s, log keys 1.2 s)",
             "  bench_mor.t01: committed 20261129231047645, checkpoint 1795993841493 (read 1.1 s, locate 4.5 s, "
             "write 2.0 s, log keys 1.6 s)",
             "  bench_mor.t02: committed 20261129231047645, checkpoint 1795993841493 (read 3.0 s, tombstones 0.2 s, "
             "locate 4.0 s, write 2.4 s, log keys 1.0 s)"]
    assert _phases(lines) == {"read": 1.1, "locate": 4.0, "write": 2.0, "log keys": 1.2, "tombstones": 0.2}


@pytest.mark.unit
def test_driver_commit_model_keeps_the_newest_event_per_key():
    """The table the driver-commit benchmark expects its readers to return: per key the newest __lsn wins,
    a redelivered snapshot event (same LSN) changes nothing, a newer delete removes the row, an older one
    does not."""
    from benchmarks.driver_commit import apply_events

    def ev(key, lsn, name, deleted=False, op="u"):
        return {"customer_id": key, "country": "C01", "name": name, "__lsn": lsn, "__op": op,
                "__deleted": "true" if deleted else "false"}

    model: dict = {}
    apply_events(model, [ev(1, 1000, "a", op="r"), ev(2, 1000, "b", op="r"), ev(3, 1000, "c", op="r")])
    apply_events(model, [ev(1, 1002, "a2"), ev(1, 1001, "a1"), ev(2, 1000, "b-again", op="r"),
                         ev(3, 1003, None, deleted=True), ev(4, 1004, "d")])
    apply_events(model, [ev(3, 1001, "c-late")])  # older than its delete
    assert {k: v[1] for k, v in model.items()} == {1: "a2", 2: "b", 3: None, 4: "d"}
