"""A table empty at the source (issue 38) without a JVM: bootstrap records it as bootstrapped empty instead
of refusing or writing nothing silently; `stream`, `stream --all` and `run` accept it (its rounds wait,
its first round with files creates the table by UPSERT); a table never bootstrapped whose landing holds
data is still refused; hudi.version 0.14.0 refuses a waiting table in one line; `status` shows it waiting.
The real thing: tests/capture/test_types_pgbench.py (pgbench_history is empty after `pgbench -i`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_cdc import pipeline as pipe
from hudi_cdc.config import load_pipeline, uri_to_path
from hudi_cdc.demo.workspace import write_sample_pipeline
from hudi_cdc.errors import DataError, TableStateError
from hudi_cdc.jobs.stream.argv import parse_argv
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.files import list_source_files
from hudi_cdc.jobs.stream.loops import IDLE_MARK
from hudi_cdc.jobs.stream.round import run_round
from hudi_cdc.lake.empty import is_empty_bootstrapped, mark_empty
from hudi_cdc.lake.status import Bounds, TableStatus, breaches, table_status

COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"


@pytest.fixture
def p(tmp_path: Path):
    write_sample_pipeline(tmp_path, "", "", False)
    return load_pipeline(tmp_path / "hudi-cdc.yaml")


def _land(p, table: str, *, files: int = 1) -> Path:
    d = uri_to_path(p.topic_dir(table))
    d.mkdir(parents=True, exist_ok=True)
    for i in range(files):
        (d / f"{p.table(table).topic}+0+{i:010d}.avro").write_bytes(b"Obj\x01")
    return d


class NoRunner:
    """A bootstrap with nothing to write starts no job."""

    def __getattr__(self, name):
        raise AssertionError(f"the runner was used ({name})")


def test_bootstrap_records_a_table_with_nothing_landed_and_runs_the_others(p):
    _land(p, "artists")
    _land(p, "artworks", files=0)  # capture made the folder, the source table had no row
    jobs, empty = pipe.bootstrap_plan(p)
    assert [(j.table, j.table_type, j.op) for j in jobs] == [("artists", COW, "BULK_INSERT"),
                                                             ("artists", MOR, "BULK_INSERT")]
    assert empty == [("artworks", COW), ("artworks", MOR)]
    uri_to_path(p.topic_dir("artworks")).rmdir()  # no folder at all (capture to S3 lands none)
    assert pipe.bootstrap_plan(p)[1] == empty
    said: list[str] = []
    assert pipe.bootstrap(p, "artworks", dry_run=True, progress=said.append, runner=NoRunner()) == []  # type: ignore[arg-type]
    assert len(said) == 2 and "would be recorded as bootstrapped empty" in said[0], said
    assert not is_empty_bootstrapped(p, "artworks", COW)
    said.clear()
    rows = pipe.bootstrap(p, "artworks", progress=said.append, runner=NoRunner())  # type: ignore[arg-type]
    assert [r["table"] for r in rows] == ["moma_cow.artworks", "moma_mor.artworks"]
    assert all(r["empty"] and r["skipped"] and r["commit"] is None for r in rows)
    assert all(is_empty_bootstrapped(p, "artworks", tt) for tt in (COW, MOR))
    assert not is_empty_bootstrapped(p, "artists", COW)
    assert len(said) == 2 and "bootstrapped empty" in said[0], said


def test_nothing_landed_for_any_table_is_still_refused(p):
    with pytest.raises(DataError, match="table artists: landing directory .* does not exist"):
        pipe.bootstrap_plan(p)
    with pytest.raises(DataError, match="landing directory"):
        pipe.bootstrap(p, "artworks", runner=NoRunner())  # type: ignore[arg-type]
    assert not is_empty_bootstrapped(p, "artworks", COW)


def test_an_empty_table_that_exists_keeps_its_refusal_and_force_rebuilds_it(p, monkeypatch):
    _land(p, "artists")
    _land(p, "artworks", files=0)
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, name, tt, target="local": name == "artworks")
    with pytest.raises(TableStateError, match="artworks .* already exists"):
        pipe.bootstrap_plan(p, "artworks")
    said: list[str] = []  # the whole pipeline: the existing table is skipped with a note, the others go on
    jobs, empty = pipe.bootstrap_plan(p, progress=said.append)
    assert empty == [] and [(j.table, j.table_type) for j in jobs] == [("artists", COW), ("artists", MOR)]
    assert [m.split(":")[0] for m in said] == ["artworks (COPY_ON_WRITE) exists already",
                                               "artworks (MERGE_ON_READ) exists already"]
    assert "--table artworks --force" in said[0]
    jobs, empty = pipe.bootstrap_plan(p, force=True)
    assert empty == [] and {j.table for j in jobs} == {"artists", "artworks"}


def test_stream_accepts_a_table_bootstrapped_empty_and_refuses_one_never_bootstrapped(p):
    _land(p, "artists")
    with pytest.raises(TableStateError, match=r"artists \(COPY_ON_WRITE\) does not exist .* bootstrap` first"):
        pipe.plan_stream(p, "artists", once=True)  # landed, never bootstrapped: the guidance stays
    with pytest.raises(DataError, match="table artworks: landing directory"):
        pipe.plan_stream(p, "artworks", once=True)  # nothing landed, never bootstrapped
    _land(p, "artworks", files=0)
    with pytest.raises(TableStateError, match="bootstrap` first"):
        pipe.plan_stream(p, "artworks", once=True)
    mark_empty(p, "artworks", COW)
    jobs = pipe.plan_stream(p, "artworks", once=True, table_type=COW)
    assert [(j.table, j.table_type, j.op, j.continuous) for j in jobs] == [("artworks", COW, "UPSERT", False)]
    with pytest.raises(TableStateError, match=r"artworks \(MERGE_ON_READ\) does not exist"):
        pipe.plan_stream(p, "artworks", once=True)  # its MoR table was not bootstrapped
    mark_empty(p, "artworks", MOR)
    uri_to_path(p.topic_dir("artworks")).rmdir()  # still no folder: the stream waits for one
    assert len(pipe.plan_stream(p, "artworks", once=False)) == 2
    _land(p, "artworks")  # rows landed since: its first round creates the table from them
    assert len(pipe.plan_stream(p, "artworks", once=True)) == 2


def test_stream_all_and_run_plan_every_table_with_the_empty_one(p, monkeypatch):
    _land(p, "artists")
    _land(p, "artworks", files=0)
    with pytest.raises(TableStateError, match="artists .* nor does any other table .* bootstrap` first"):
        pipe.plan_stream_all(p, once=False)  # nothing bootstrapped at all: refused before Spark starts
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, name, tt, target="local": name == "artists")
    for tt in (COW, MOR):
        mark_empty(p, "artworks", tt)
    jobs = pipe.plan_stream_all(p, once=True)
    assert [(j.table, j.table_type) for j in jobs] == [(t, tt) for t in ("artists", "artworks") for tt in (COW, MOR)]
    assert all(j.all_tables and j.op == "UPSERT" for j in jobs)


def test_stream_all_and_run_take_up_a_table_whose_bootstrap_failed(p, monkeypatch):
    """One table's failed bootstrap does not stop `run` / `stream --all` from starting: that table is streamed, its
    first round creating it from the landing (a line says so), as is a table never bootstrapped beside bootstrapped
    ones; `stream --table` keeps the refusal, as does hudi.version 0.14.0 (the real round after a failed
    bootstrap: jobs/test_cdc_semantics)."""
    from hudi_cdc.lake.status import BOOTSTRAP_LABEL, record_failure

    _land(p, "artists")
    _land(p, "artworks")
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, name, tt, target="local": name == "artists")
    record_failure(p, "artworks", COW, "stream-artworks", "an earlier stream's failure")
    said: list[str] = []  # never bootstrapped (added to the pipeline while the others ran): taken up as well
    assert len(pipe.plan_stream_all(p, once=False, progress=said.append)) == 4
    assert said == [f"artworks ({tt}): not bootstrapped; its stream creates it from the landed files by upsert, the "
                    "other tables go on" for tt in (COW, MOR)]
    uri_to_path(p.topic_dir("artworks")).joinpath(f"{p.table('artworks').topic}+0+0000000000.avro").unlink()
    uri_to_path(p.topic_dir("artworks")).rmdir()  # not captured yet either: its rounds wait for the folder
    assert len(pipe.plan_stream_all(p, once=False)) == 4
    _land(p, "artworks")
    for tt in (COW, MOR):
        record_failure(p, "artworks", tt, BOOTSTRAP_LABEL, "Hudi write to artworks failed: HoodieKeyException: ...\nat")
    said: list[str] = []
    jobs = pipe.plan_stream_all(p, once=False, progress=said.append)
    assert [(j.table, j.table_type, j.op) for j in jobs] == [(t, tt, "UPSERT") for t in ("artists", "artworks")
                                                             for tt in (COW, MOR)]
    assert said == [f"artworks ({tt}): its bootstrap failed (Hudi write to artworks failed: HoodieKeyException: ...); "
                    "its stream creates it from the landed files by upsert, the other tables go on"
                    for tt in (COW, MOR)]
    with pytest.raises(TableStateError, match="bootstrap` first"):
        pipe.plan_stream(p, "artworks", once=False)
    p014 = p.model_copy(update={"hudi": p.hudi.model_copy(update={"version": "0.14.0"})})
    with pytest.raises(TableStateError, match="bootstrap` first"):
        pipe.plan_stream_all(p014, once=False)


def test_hudi_014_refuses_a_waiting_table_in_one_line(p):
    _land(p, "artists")
    mark_empty(p, "artworks", COW)
    p014 = p.model_copy(update={"hudi": p.hudi.model_copy(update={"version": "0.14.0"})})
    with pytest.raises(TableStateError, match=r"artworks \(COPY_ON_WRITE\) was bootstrapped empty .* 0\.14\.0 "
                                              r"streams existing tables only: `hudi-cdc bootstrap --table artworks`"):
        pipe.plan_stream(p014, "artworks", once=True, table_type=COW)


def test_the_round_of_a_table_bootstrapped_empty_waits_for_its_landing(tmp_path):
    """The streamer: no landing folder yet is no file for a table that does not exist (an UPSERT round
    waits, says it as an idle round); for a bootstrap it stays an error, as for an existing table."""
    missing = tmp_path / "landing" / "t" / "partition=0"
    assert list_source_files(f"file://{missing}", None, 1 << 20, missing_ok=True) == ([], None)
    with pytest.raises(JobInputError, match="does not exist"):
        list_source_files(f"file://{missing}", None, 1 << 20)
    props = tmp_path / "t.properties"
    props.write_text(f"hoodie.streamer.source.dfs.root=file://{missing}\n"
                     "hoodie.datasource.write.recordkey.field=id\n")
    argv = ["--props", str(props), "--table-type", MOR, "--target-base-path", f"file://{tmp_path}/lake/t_mor",
            "--target-table", "db_mor.t"]
    said: list[str] = []
    t = parse_argv([*argv, "--op", "UPSERT"])[0]
    result = run_round(None, t, {"hoodie.streamer.source.dfs.root": f"file://{missing}"}, said.append)
    assert result.skipped and result.commit is None and IDLE_MARK in said[0], said
    assert not (tmp_path / "lake").exists()
    bulk = parse_argv([*argv, "--op", "BULK_INSERT"])[0]
    with pytest.raises(JobInputError, match="landing directory .* does not exist"):
        run_round(None, bulk, {"hoodie.streamer.source.dfs.root": f"file://{missing}"}, said.append)


def test_status_shows_a_waiting_table_and_an_empty_one_is_not_stale(p):
    mark_empty(p, "artworks", COW)
    st = table_status(p, "artworks", COW)
    assert st.waiting and not st.exists and st.backlog_files == 0
    assert st.text_row()["last_commit"].startswith("- (bootstrapped empty")
    assert breaches(st, Bounds(max_freshness_seconds=60)) == []
    assert not table_status(p, "artworks", MOR).waiting
    _land(p, "artworks", files=2)
    st = table_status(p, "artworks", COW)
    assert st.waiting and st.backlog_files == 2
    assert breaches(st, Bounds(max_freshness_seconds=60)) == ["artworks (COPY_ON_WRITE): no source event time "
                                                              "applied yet"]
    never = TableStatus("artworks", MOR, "/lake/artworks_mor", False)
    assert breaches(never, Bounds(max_freshness_seconds=60)) == ["artworks (MERGE_ON_READ): no source event time "
                                                                 "applied yet"]


def test_stream_refuses_a_table_at_another_version_in_one_line(p, monkeypatch):
    """hudi.table_version (default 6) against hoodie.table.version on disk: never a silent upgrade or
    downgrade (the writers run with hoodie.write.auto.upgrade=false); the line names both and the fix."""
    _land(p, "artists")
    monkeypatch.setattr(pipe, "table_exists", lambda pipeline, name, tt, target="local": True)
    meta = uri_to_path(p.base_path("artists", COW)) / ".hoodie"
    meta.mkdir(parents=True)
    (meta / "hoodie.properties").write_text("hoodie.table.name=artists\nhoodie.table.version=9\n")
    with pytest.raises(TableStateError) as err:
        pipe.plan_stream(p, "artists", once=True)
    line = str(err.value)
    assert "\n" not in line and "is Hudi table version 9" in line and "says hudi.table_version 6" in line
    assert "`hudi-cdc table downgrade --table artists`" in line
    p9 = p.model_copy(update={"hudi": p.hudi.model_copy(update={"table_version": 9})})
    assert len(pipe.plan_stream(p9, "artists", once=True)) == 2  # the MoR table has none on disk yet
    (meta / "hoodie.properties").write_text("hoodie.table.name=artists\nhoodie.table.version=6\n")
    with pytest.raises(TableStateError, match=r"is Hudi table version 6, .* set hudi.table_version: 6 to keep"):
        pipe.plan_stream(p9, "artists", once=True)


def test_verify_reads_a_table_bootstrapped_empty_as_a_lake_with_no_rows(p):
    """`verify` (every source) takes a table bootstrapped empty and not created yet as an empty lake table (0
    rows, compared with the database's), not as a table never bootstrapped; the lake's rows once it exists."""
    from hudi_cdc.sources.comparison import _lake_table, require_lake_table

    with pytest.raises(TableStateError, match=r"artworks \(COPY_ON_WRITE\) does not exist .* bootstrap` first"):
        require_lake_table(p, "artworks", COW)
    mark_empty(p, "artworks", COW)
    assert require_lake_table(p, "artworks", COW) == p.base_path("artworks", COW)
    assert _lake_table(p, "artworks", COW) is None
    with pytest.raises(TableStateError, match=r"artworks \(MERGE_ON_READ\) does not exist"):
        require_lake_table(p, "artworks", MOR)
    timeline = uri_to_path(p.base_path("artworks", COW)) / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "20261201000000000_20261201000001000.commit").write_text("{}")  # its first round committed
    with pytest.raises(TableStateError, match="cannot read Hudi table"):  # read now, not taken as empty
        _lake_table(p, "artworks", COW)
