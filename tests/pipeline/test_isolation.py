"""One table's failure is its own (issue 36) without a JVM: the streamer job gives every target its round and
reports each one's result or error; the local runner turns that into TablesFailed (the failed ones recorded
for `status`, the others' results kept); bootstrap keeps the tables that bootstrapped and restores only the
failed ones' set-aside copies; the CLI shows the others' results and ONE error line naming every failed
table/type, with the first failed one's exit code; a later bootstrap without --force does the missing ones;
the 0.14 engine goes on past a failed job. The real job (Spark, a corrupt landed file beside a good one):
tests/jobs/test_cdc_semantics.py::test_a_corrupt_table_fails_alone; the CLI: tests/pipeline/test_e2e.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_cdc import pipeline as pipe
from hudi_cdc.config import load_pipeline, uri_to_path
from hudi_cdc.core.render import Job
from hudi_cdc.demo.workspace import write_sample_pipeline
from hudi_cdc.errors import DataError, ExitCode, JobError, TablesFailed
from hudi_cdc.jobs.stream import main as job
from hudi_cdc.jobs.stream.argv import parse_argv
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.round import RoundResult
from hudi_cdc.lake.status import failures_dir
from hudi_cdc.spark import launch

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"


@pytest.fixture
def p(tmp_path: Path):
    write_sample_pipeline(tmp_path, "", "", False)
    return load_pipeline(tmp_path / "hudi-cdc.yaml")


# ------------------------------------------------------------------ the job: every target, every outcome
def _argv(*names: str, all_tables: bool = False) -> list[str]:
    argv: list[str] = []
    for i, n in enumerate(names):
        argv += (["--next"] if i else []) + ["--props", f"/p/{n}.properties", "--table-type", COW,
                                             "--target-base-path", f"/lake/{n}_cow", "--target-table", f"db_cow.{n}"]
        argv += ["--all-tables"] if all_tables else []
    return argv


class Session:
    """What main() touches of the Spark session."""

    sparkContext = property(lambda self: self)  # noqa: N815 - pyspark's name

    def setLogLevel(self, level):  # noqa: N802
        pass

    def setLocalProperty(self, key, value):  # noqa: N802
        pass

    def stop(self):
        pass


def _job_lines(monkeypatch, capsys, argv, fail: dict[str, Exception]) -> tuple[int, list[str], dict]:
    ran: list[str] = []

    def run_round(spark, t, props, log):
        name = t.target_table.rpartition(".")[2]
        ran.append(name)
        if name in fail:
            raise fail[name]
        return RoundResult(table=t.target_table, base_path=t.target_base_path, operation="BULK_INSERT",
                           commit="20260101000000000", records_written=2)

    monkeypatch.setattr(job, "build_session", lambda **kw: Session())
    monkeypatch.setattr(job, "run_round", run_round)
    monkeypatch.setattr(job, "target_properties", lambda t: {})
    code = job.main(argv)
    out = capsys.readouterr().out
    errors = [json.loads(line[len(job.ERROR_MARK):]) for line in out.splitlines() if line.startswith(job.ERROR_MARK)]
    return code, sorted(ran), errors[0] if errors else {}


@pytest.mark.parametrize("all_tables", [False, True], ids=["bootstrap", "stream-all-once"])
def test_the_job_runs_every_target_and_reports_each_one(monkeypatch, capsys, all_tables):
    bad = JobInputError("corrupt or truncated Avro file /landing/broken/x.avro")
    code, ran, error = _job_lines(monkeypatch, capsys, _argv("artists", "broken", "artworks", all_tables=all_tables),
                                  {"broken": bad})
    assert ran == ["artists", "artworks", "broken"]  # the ones after the failed one ran too
    assert code == ExitCode.DATA
    assert error["kind"] == "input" and error["message"] == str(bad)  # what a runner of one target reads
    rows = error["targets"]
    assert [r["table"] for r in rows] == ["db_cow.artists", "db_cow.broken", "db_cow.artworks"]
    assert rows[1]["error"] == {"message": str(bad), "kind": "input"} and rows[1]["code"] == ExitCode.DATA
    assert [r["result"]["commit"] for r in (rows[0], rows[2])] == ["20260101000000000"] * 2
    assert "result" not in rows[1] and "error" not in rows[0]


def test_the_first_failure_gives_the_exit_code_and_a_bug_keeps_its_traceback(monkeypatch, capsys):
    fail = {"artists": RuntimeError("boom in a round"), "artworks": JobInputError("bad file")}
    code, ran, error = _job_lines(monkeypatch, capsys, _argv("artists", "artworks"), fail)
    assert ran == ["artists", "artworks"] and code == ExitCode.JOB and error["kind"] == "job"
    assert [r["code"] for r in error["targets"]] == [ExitCode.JOB, ExitCode.DATA]
    code, _, error = _job_lines(monkeypatch, capsys, _argv("artists", "artworks"), {})
    assert code == ExitCode.OK and error == {}


def test_in_process_run_targets_raises_the_first_error_once_every_target_ran(monkeypatch):
    targets = parse_argv(_argv("artists", "broken", "artworks"))
    ran: list[str] = []

    def run_round(spark, t, props, log):
        ran.append(t.target_table)
        if "broken" in t.target_table:
            raise JobInputError("broken: bad file")
        return RoundResult(table=t.target_table, base_path=t.target_base_path, operation="BULK_INSERT")

    monkeypatch.setattr(job, "run_round", run_round)
    monkeypatch.setattr(job, "target_properties", lambda t: {})
    said: list[str] = []
    with pytest.raises(JobInputError, match="broken: bad file"):
        job.run_targets(Session(), targets, log=said.append)
    assert ran == ["db_cow.artists", "db_cow.broken", "db_cow.artworks"]
    assert said == ["db_cow.broken (COPY_ON_WRITE): round failed: broken: bad file"]


# ------------------------------------------------------------------ the local runner
class Launcher:
    def __init__(self, outcome: launch.Outcome):
        self.outcome, self.child = outcome, None

    def run(self, argv, **kw):
        return self.outcome


def _local_runner(monkeypatch, p, outcome: launch.Outcome):
    from hudi_cdc.runners.local import runner as local

    monkeypatch.setattr(local, "find_java", lambda *a: "/usr/bin/java")
    monkeypatch.setattr(local.jarcache, "ensure_jars", lambda *a: [])
    monkeypatch.setattr(local.plan, "argv", lambda *a: ["spark-submit"])
    monkeypatch.setattr(local, "spark_submit", lambda: "spark-submit")
    monkeypatch.setattr(local, "spark_home", lambda: "/spark")
    r = local.LocalRunner(p, progress=lambda m: None)
    r.launcher = Launcher(outcome)  # type: ignore[assignment]
    return r


def _target(table, tt, error=None):
    row = {"table": f"moma.{table}", "table_type": tt, "base_path": f"/lake/{table}"}
    if error:
        return {**row, "error": error, "code": 3}
    return {**row, "result": {"table": f"moma.{table}", "operation": "BULK_INSERT", "commit": "1", "files": []}}


def test_the_local_runner_keeps_the_others_results_and_records_only_the_failed(monkeypatch, p):
    jobs = [Job("artists", COW, "BULK_INSERT"), Job("artists", MOR, "BULK_INSERT"), Job("artworks", COW, "BULK_INSERT")]
    bad = {"message": "corrupt or truncated Avro file x.avro", "kind": "input"}
    targets = [_target("artists", COW), _target("artists", MOR, bad), _target("artworks", COW)]
    r = _local_runner(monkeypatch, p, launch.Outcome(code=3, error={**bad, "targets": targets}))
    with pytest.raises(TablesFailed) as err:
        r.run(jobs, "bootstrap")
    exc = err.value
    assert exc.exit_code == ExitCode.DATA and exc.names == {("artists", MOR)}
    assert isinstance(exc.failed[0][2], DataError)
    assert [row["commit"] for row in exc.results] == ["1", "1"]
    line = str(exc)
    assert "\n" not in line and line.startswith("bootstrap: 1 of 3 table job(s) failed")
    assert "artists (MERGE_ON_READ): corrupt or truncated Avro file x.avro" in line and "log: " in line
    assert sorted(f.name for f in failures_dir(p).iterdir()) == ["artists_mor.json"]


def test_one_job_keeps_its_own_error_and_a_job_without_targets_fails_them_all(monkeypatch, p):
    bad = {"message": "corrupt or truncated Avro file x.avro", "kind": "input"}
    alone = {**bad, "targets": [_target("artists", COW, bad)]}
    one = _local_runner(monkeypatch, p, launch.Outcome(code=3, error=alone))
    with pytest.raises(DataError, match="x.avro .table left unchanged"):
        one.run([Job("artists", COW, "BULK_INSERT")], "bootstrap")
    died = _local_runner(monkeypatch, p, launch.Outcome(code=-9))  # the JVM killed: no target reported
    with pytest.raises(JobError, match="killed by SIGKILL"):
        died.run([Job("artists", COW, "BULK_INSERT"), Job("artists", MOR, "BULK_INSERT")], "bootstrap")


# ------------------------------------------------------------------ bootstrap: keep the good, restore the failed
class Runner:
    """Writes every job's table; the jobs in `failing` fail (their folder is left half-written)."""

    def __init__(self, p, failing):
        self.p, self.failing, self.jobs = p, failing, []

    def preflight(self):
        pass

    def run(self, jobs, label):
        self.jobs = [(j.table, j.table_type) for j in jobs]
        for j in jobs:
            base = uri_to_path(self.p.base_path(j.table, j.table_type))
            assert not base.exists()  # set aside before the job runs
            base.mkdir(parents=True)
            (base / "state").write_text("new")
        failed = [(j.table, j.table_type, DataError(f"{j.table}: corrupt file")) for j in jobs
                  if (j.table, j.table_type) in self.failing]
        results = [{"table": j.table, "commit": "1"} for j in jobs if (j.table, j.table_type) not in self.failing]
        if failed:
            raise TablesFailed(label, failed, results, len(jobs))
        return results


def _land_all(p):
    for table in p.tables:
        d = uri_to_path(p.topic_dir(table))
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{p.table(table).topic}+0+0000000000.avro").write_bytes(b"Obj\x01")


def test_force_bootstrap_keeps_what_bootstrapped_and_restores_only_the_failed(monkeypatch, p):
    _land_all(p)
    pairs = p.targets()
    for t, tt in pairs:  # every table exists: --force rebuilds them
        base = uri_to_path(p.base_path(t, tt))
        base.mkdir(parents=True)
        (base / "state").write_text("old")
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, t, tt, target="local": True)
    runner = Runner(p, {("artworks", MOR)})
    with pytest.raises(TablesFailed) as err:
        pipe.bootstrap(p, force=True, runner=runner, progress=lambda m: None)  # type: ignore[arg-type]
    assert runner.jobs == pairs and err.value.exit_code == ExitCode.DATA
    state = {(t, tt): (uri_to_path(p.base_path(t, tt)) / "state").read_text() for t, tt in pairs}
    assert state == {pair: "old" if pair == ("artworks", MOR) else "new" for pair in pairs}
    assert not list(uri_to_path(p.lake_root).glob(".*replaced-*"))  # no copy left aside
    assert len(err.value.results) == len(pairs) - 1


def test_a_later_bootstrap_does_only_the_missing_tables(monkeypatch, p):
    _land_all(p)
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, t, tt, target="local": (t, tt) != ("artworks", MOR))
    runner = Runner(p, set())
    said: list[str] = []
    rows = pipe.bootstrap(p, runner=runner, progress=said.append)  # type: ignore[arg-type]
    assert runner.jobs == [("artworks", MOR)] and rows == [{"table": "artworks", "commit": "1"}]
    assert sum("exists already: skipped" in m for m in said) == 3


def test_the_cli_shows_the_others_then_one_line_naming_every_failed(monkeypatch, p, capsys):
    from hudi_cdc.cli import main

    failed = [("artists", MOR, DataError("x.avro: corrupt")), ("artworks", COW, JobError("bootstrap failed: boom"))]
    done = [{"table": "moma_cow.artists", "operation": "BULK_INSERT", "commit": "20260101", "files": []}]

    def bootstrap(*a, **kw):
        raise TablesFailed("bootstrap", failed, done, 4, "log: /x.log")

    monkeypatch.setattr(pipe, "bootstrap", bootstrap)
    code = main(["--config", str(Path(p.source_file)), "bootstrap"])
    out, err = capsys.readouterr()
    assert code == ExitCode.DATA and "moma_cow.artists" in out and "20260101" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: bootstrap: 2 of 4 table job(s) failed")
    assert "artists (MERGE_ON_READ): x.avro: corrupt; artworks (COPY_ON_WRITE): bootstrap failed: boom" in lines[0]
    assert "the 2 other(s) went through (log: /x.log)" in lines[0]


# ------------------------------------------------------------------ the 0.14 engine: one spark-submit per job
def test_the_014_engine_goes_on_past_a_failed_job(monkeypatch, tmp_path):
    from hudi_cdc.runners.deltastreamer import submit
    from tests.runners.test_deltastreamer_unit import pipeline

    p014 = pipeline(tmp_path, table_types=[COW, MOR])
    monkeypatch.setattr(submit.rt_mod, "load", lambda: None)
    monkeypatch.setattr(submit, "_environment", lambda pipeline, rt: {})
    monkeypatch.setattr(submit, "refuse_truncates", lambda *a: None)
    ran: list[str] = []

    def one(self, j):
        ran.append(j.table_type)
        if j.table_type == COW:
            raise JobError(f"bootstrap {j.name} failed: boom")
        return {"table": j.table, "type": j.table_type}

    monkeypatch.setattr(submit._JobRun, "one", one)
    jobs = [Job("artists", COW, "BULK_INSERT"), Job("artists", MOR, "BULK_INSERT")]
    with pytest.raises(TablesFailed) as err:
        submit.run_jobs(p014, jobs, "bootstrap", lambda m: None)
    assert ran == [COW, MOR] and err.value.names == {("artists", COW)} and err.value.exit_code == ExitCode.JOB
    assert err.value.results == [{"table": "artists", "type": MOR}]
    ran.clear()
    with pytest.raises(JobError):  # continuous jobs: the first failure ends the command, as before
        submit.run_jobs(p014, [Job("artists", COW, "UPSERT", continuous=True)] + jobs[1:], "stream", lambda m: None)
    assert ran == [COW]
