"""`stream --all` without a JVM (issue 25): the job's per-table loops (a failing table backs off alone, is
recorded for `status` and given up past its bound; the stop; the exit when every table is given up), the
rendered argv and the command's refusals. The real thing: tests/jobs/test_stream_all_e2e.py."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from hudi_cdc.jobs.stream.argv import parse_argv
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.loops import AllGivenUp, AllTables, LoopSettings
from hudi_cdc.jobs.stream.round import RoundResult
from tests.cli import run_cli


def _targets(*names: str, interval: int = 0):
    argv: list[str] = []
    for i, n in enumerate(names):
        argv += (["--next"] if i else []) + ["--props", f"/p/{n}.properties", "--table-type", "COPY_ON_WRITE",
                                             "--target-base-path", f"/lake/{n}_cow", "--target-table", f"db_cow.{n}",
                                             "--continuous", "--min-sync-interval-seconds", str(interval),
                                             "--all-tables", "--max-failures", "2"]
    return parse_argv(argv)


class Rounds:
    """A fake run_round: counts rounds per table; tables in `bad` raise the landing's error."""

    def __init__(self, bad=(), stop_after=None, stop=None):
        self.bad, self.stop_after, self.stop = set(bad), stop_after, stop
        self.count: dict[str, int] = {}
        self.pools: dict[str, set] = {}
        self.lock = threading.Lock()

    def __call__(self, spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        time.sleep(0.02)  # a round takes time: the other tables' loops start meanwhile
        with self.lock:
            self.count[name] = self.count.get(name, 0) + 1
            self.pools.setdefault(name, set()).add(spark.sparkContext.pool())
            good = sum(v for k, v in self.count.items() if k not in self.bad)
        if self.stop is not None and self.stop_after is not None and good >= self.stop_after:
            self.stop.set()
        if name in self.bad:
            raise JobInputError(f"landing file /landing/{name}/zz.avro: not an Avro file")
        return RoundResult(table=t.target_table, base_path=t.target_base_path, operation="UPSERT",
                           commit=f"2026{self.count[name]:010d}", records_written=2, checkpoint=str(self.count[name]))


class FakeSpark:
    """What the loops touch: the thread's scheduler pool."""

    def __init__(self):
        self.local = threading.local()
        self.sparkContext = self

    def setLocalProperty(self, key, value):  # noqa: N802 - pyspark's name
        assert key == "spark.scheduler.pool"
        self.local.pool = value

    def pool(self):
        return getattr(self.local, "pool", None)


def test_a_failing_table_backs_off_alone_is_recorded_and_the_others_go_on(tmp_path: Path):
    stop = threading.Event()
    rounds = Rounds(bad={"broken"}, stop_after=12, stop=stop)
    targets = _targets("artists", "broken", "artworks")
    said: list[str] = []
    settings = LoopSettings(backoff=0.05, backoff_max=0.1, max_failures=50, window=60, max_parallel=2,
                            status_dir=str(tmp_path))
    lock = threading.Lock()

    def log(m):
        with lock:
            said.append(m)

    results = AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, settings, rounds, stop.is_set, log).run()
    by = {r["table"]: r for r in results}
    assert by["db_cow.artists"]["commits"] >= 3 and by["db_cow.artworks"]["commits"] >= 3
    assert by["db_cow.broken"]["commits"] == 0 and by["db_cow.broken"]["failures"] >= 1
    assert all(r["state"] == "stopped" for r in results)
    assert "not an Avro file" in by["db_cow.broken"]["last_error"] and by["db_cow.broken"]["kind"] == "input"
    assert rounds.pools == {"artists": {"artists_cow"}, "broken": {"broken_cow"}, "artworks": {"artworks_cow"}}
    recorded = json.loads((tmp_path / "broken_cow.json").read_text())
    assert recorded["label"] == "stream-all" and "zz.avro" in recorded["message"] and recorded["state"] == "backing_off"
    assert not (tmp_path / "artists_cow.json").exists()
    failed = [m for m in said if m.startswith("db_cow.broken: round failed")]
    assert failed and "the other tables go on" in failed[0] and "retrying in 0s" in failed[0]


def test_a_table_that_recovers_is_cleared_from_status(tmp_path: Path):
    stop = threading.Event()
    targets = _targets("artists")
    rounds = Rounds(bad={"artists"})
    said: list[str] = []

    def run_round(spark, t, props, log):
        if rounds.count.get("artists", 0) == 2:  # the landing fixed after two failed rounds
            rounds.bad.clear()
        if rounds.count.get("artists", 0) >= 3:
            stop.set()
        return rounds(spark, t, props, log)

    settings = LoopSettings(backoff=0.01, backoff_max=0.02, max_failures=5, window=60, status_dir=str(tmp_path))
    (result,) = AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, settings, run_round, stop.is_set,
                          said.append).run()
    assert result["failures"] == 2 and result["last_error"] is None and result["commits"] >= 1
    assert not (tmp_path / "artists_cow.json").exists()
    assert any(m.startswith("db_cow.artists: recovered after 2 failed round(s), committed") for m in said), said


def test_a_table_past_its_bound_is_given_up_and_all_given_up_ends_the_job(tmp_path: Path):
    stop = threading.Event()
    targets = _targets("artists", "broken")
    settings = LoopSettings(backoff=0.01, backoff_max=0.02, max_failures=2, window=60, status_dir=str(tmp_path))
    rounds = Rounds(bad={"broken"}, stop_after=6, stop=stop)
    results = AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, settings, rounds, stop.is_set,
                        lambda m: None).run()
    by = {r["table"]: r for r in results}
    assert by["db_cow.broken"]["state"] == "given_up" and rounds.count["broken"] == 3  # 1 + max_failures retries
    assert by["db_cow.artists"]["state"] == "stopped" and by["db_cow.artists"]["commits"] >= 6
    assert json.loads((tmp_path / "broken_cow.json").read_text())["state"] == "given_up"

    # every table given up: the job ends with the last failure's kind (exit 3 for landed data)
    rounds = Rounds(bad={"artists", "broken"})
    with pytest.raises(AllGivenUp) as err:
        AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, settings, rounds, lambda: False,
                  lambda m: None).run()
    assert err.value.kind == "input" and "every table given up" in str(err.value)
    assert "not an Avro file" in str(err.value)


def test_the_stop_ends_every_loop_after_its_round_and_waits_are_cut_short():
    stop = threading.Event()
    targets = _targets("a", "b", "c", interval=3600)
    rounds = Rounds()
    threading.Timer(0.3, stop.set).start()
    results = AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, LoopSettings(max_parallel=1), rounds,
                        stop.is_set, lambda m: None).run()
    assert rounds.count == {"a": 1, "b": 1, "c": 1}  # one round each, then waiting out the interval: cut short
    assert [r["state"] for r in results] == ["stopped"] * 3


def test_render_and_refusals(tmp_path: Path):
    from hudi_cdc.config import load_pipeline
    from hudi_cdc.core.render import Job, all_tables_flags, streamer_flags
    from hudi_cdc.demo.workspace import write_sample_pipeline

    write_sample_pipeline(tmp_path, "", "", False)
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    flags = streamer_flags(p, Job("artists", "COPY_ON_WRITE", "UPSERT", True, all_tables=True), "file:///x")
    assert flags[flags.index("--all-tables"):][:len(all_tables_flags(p))] == all_tables_flags(p)
    assert "--max-parallel-rounds" in flags and str(p.stream.max_parallel_rounds) in flags
    assert "--all-tables" not in streamer_flags(p, Job("artists", "COPY_ON_WRITE", "UPSERT", True), "file:///x")
    parsed = parse_argv([*flags, "--status-dir", "/s"])[0]
    assert parsed.all_tables and parsed.max_failures == p.stream.max_restarts and parsed.status_dir == "/s"
    # `stream --all --once` (local): the rounds side by side in hudi-cdc's streamer; the 0.14 profile's real
    # HoodieDeltaStreamer takes no such flag
    once = Job("artists", "COPY_ON_WRITE", "UPSERT", False, all_tables=True)
    assert "--all-tables" in streamer_flags(p, once, "file:///x")
    p014 = p.model_copy(update={"hudi": p.hudi.model_copy(update={"version": "0.14.0"})})
    assert "--all-tables" not in streamer_flags(p014, once, "file:///x")

    both = run_cli("stream", "--all", "--table", "artists", cwd=tmp_path)
    assert both.returncode == 2 and "give --table/--type or --all" in both.stderr
    neither = run_cli("stream", cwd=tmp_path)
    assert neither.returncode == 2 and "--all for every table" in neither.stderr


def test_the_one_emr_step_of_stream_all():
    """`render --emr-steps --all`: ONE step, every table and type in one application of hudi-cdc's
    streamer, flag groups joined by --next, each with --all-tables and its table's lock flags (golden)."""
    import os

    from hudi_cdc.config import parse_pipeline
    from hudi_cdc.core import render
    from hudi_cdc.errors import ConfigError
    from hudi_cdc.runners.emr import steps_json
    from tests.plugins.aws_fixtures import pipeline_data
    from tests.runners.test_emr_engine import GOLDEN, hudi_cdc_pipeline

    p = hudi_cdc_pipeline(cluster_id="j-EXAMPLE")
    steps = steps_json(p, [], all_tables=True)
    text = json.dumps(steps, indent=2) + "\n"
    path = GOLDEN / "emr_step_stream_all.json"
    if os.environ.get("HUDI_CDC_UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text()
    (step,) = steps
    argv = step["HadoopJarStep"]["Args"]
    assert step["Name"] == "hudi-cdc:moma:all:upsert:continuous" and argv[0] == "spark-submit"
    groups = " ".join(argv[argv.index(next(a for a in argv if a.endswith("/streamer.py"))) + 1:]).split(" --next ")
    assert len(groups) == len(p.targets()) and all("--all-tables" in g and "--continuous" in g for g in groups)
    for (table, tt), g in zip(p.targets(), groups, strict=True):
        job = render.Job(table, tt, "UPSERT", True, all_tables=True)
        props = f"s3://hudi-cdc-test-lake/hudi-cdc/moma/properties/{render.props_filename(p, table, tt)}"
        assert g.split(" ") == render.streamer_flags(p, job, props) + render.lock_flags(p, table, tt, "current")
    parsed = parse_argv(" --next ".join(groups).split(" "))
    assert [t.target_base_path for t in parsed] == [p.base_path(t, tt) for t, tt in p.targets()]
    data = pipeline_data(cluster_id="j-EXAMPLE")
    data["hudi"] = {"engine": "hoodiestreamer"}
    with pytest.raises(ConfigError, match="set hudi.engine: hudi-cdc"):
        steps_json(parse_pipeline(data, "hudi-cdc.yaml", "/"), [], all_tables=True)


def test_run_couples_capture_and_stream_stops(tmp_path: Path, monkeypatch):
    """`run` without a JVM: capture failing past its bound stops the stream and `run` exits with
    capture's error; the stream ending stops capture; a capture failure that a restart cures is retried."""
    from hudi_cdc.capture import capture as cap
    from hudi_cdc.config.settings import StreamSettings
    from hudi_cdc.errors import SourceError
    from hudi_cdc.pipeline import run as run_mod
    from hudi_cdc.runners.supervise import Stopper

    class P:  # the pipeline as run_pipeline reads it
        stream = StreamSettings(max_restarts=1, restart_backoff_seconds=0.01, restart_backoff_max_seconds=0.02)
        source = type("S", (), {"database": object()})()

    class FakeRunner:
        stop_file = None

        def terminate(self):
            pass

    def fake_stream_all(pipeline, progress, stopper_hook):  # stands for the supervised application
        with Stopper(FakeRunner(), tmp_path / "stop", 30, progress) as stopper:
            stopper_hook(stopper)
            assert stopper.requested.wait(10)  # runs until asked to stop
            return [{"table": "t", "state": "stopped"}]

    calls = []

    def failing_capture(pipeline, stop, **kw):
        calls.append(1)
        raise SourceError("source database 127.0.0.1:5432/moma: connection refused")

    monkeypatch.setattr(run_mod, "plan_stream_all", lambda pipeline, once: [])
    monkeypatch.setattr(run_mod, "stream_all", fake_stream_all)
    monkeypatch.setattr(cap, "capture_continuous", failing_capture)
    said: list[str] = []
    with pytest.raises(SourceError, match="capture: gave up after 1 restart"):
        run_mod.run_pipeline(P(), progress=said.append)  # type: ignore[arg-type]
    assert len(calls) == 2 and any("capture failed" in m for m in said)

    def good_capture(pipeline, stop, **kw):
        stop.wait(0.2)
        if not stop.is_set():  # the stream ends on its own after a while: capture is stopped with it
            threading.Timer(0.1, stop.set).start()
        stop.wait(10)
        return type("R", (), {"to_dict": lambda self: {"events": 3}})()

    def short_stream_all(pipeline, progress, stopper_hook):
        with Stopper(FakeRunner(), tmp_path / "stop2", 30, progress) as stopper:
            stopper_hook(stopper)
            time.sleep(0.1)
            return [{"table": "t", "state": "stopped"}]

    monkeypatch.setattr(cap, "capture_continuous", good_capture)
    monkeypatch.setattr(run_mod, "stream_all", short_stream_all)
    result = run_mod.run_pipeline(P(), progress=said.append)  # type: ignore[arg-type]
    assert result.to_dict() == {"capture": {"events": 3}, "stream": [{"table": "t", "state": "stopped"}]}


def test_an_idle_table_says_so_once_until_it_writes_again():
    stop = threading.Event()
    targets = _targets("artists")
    said: list[str] = []
    n = [0]

    def run_round(spark, t, props, log):
        n[0] += 1
        if n[0] == 3:
            log(f"{t.target_table}: committed 2026")
        else:
            log(f"{t.target_table}: no new files under /landing after checkpoint 1")
        if n[0] >= 5:
            stop.set()
        return RoundResult(table=t.target_table, base_path=t.target_base_path, operation="UPSERT", skipped=True)

    AllTables(FakeSpark(), targets, {id(t): {} for t in targets}, LoopSettings(), run_round, stop.is_set,
              said.append).run()
    idle = [m for m in said if "no new files" in m]
    assert len(idle) == 2 and all(m.endswith("(said once until new files land)") for m in idle), said


def test_once_runs_the_tables_side_by_side_and_every_table_gets_its_round(monkeypatch):
    """`stream --all --once`: rounds of different tables at the same time (at most max_parallel_rounds),
    each in its table's pool; a failing table does not stop the others, its error is raised at the end."""
    from hudi_cdc.jobs.stream import main as job

    once = [t for t in _targets("artists", "broken", "artworks", "exhibitions")]
    for t in once:
        t.continuous = False
    running, peak = [0], [0]
    lock = threading.Lock()
    rounds = Rounds(bad={"broken"})

    def run_round(spark, t, props, log):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            time.sleep(0.1)
            return rounds(spark, t, props, log)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(job, "run_round", run_round)
    monkeypatch.setattr(job, "target_properties", lambda t: {})
    said: list[str] = []
    with pytest.raises(JobInputError, match="broken/zz.avro: not an Avro file"):
        job.run_targets(FakeSpark(), once, log=said.append)
    assert rounds.count == {"artists": 1, "broken": 1, "artworks": 1, "exhibitions": 1}
    assert peak[0] == 2  # max_parallel_rounds' default
    assert rounds.pools["artworks"] == {"artworks_cow"}
    ok = [t for t in once if "broken" not in t.target_table]
    rounds.count.clear()
    results = job.run_targets(FakeSpark(), ok, log=said.append)
    assert [r.table for r in results] == [t.target_table for t in ok]
