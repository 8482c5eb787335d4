"""`hudi-cdc status`: freshness, backlog and compaction state from the timeline and landing area."""

from __future__ import annotations

import json
import os
import shutil
import time

import fastavro
import pytest

from hudi_cdc.cli import main
from hudi_cdc.lake.status import (
    Bounds,
    TableStatus,
    breaches,
    failures_dir,
    furthest_behind_first,
    instant_epoch,
    pipeline_status,
    record_failure,
)


def test_instant_epoch_reads_millisecond_and_second_instants():
    assert instant_epoch("20240102030405678") == pytest.approx(1704164645.678)
    assert instant_epoch("20240102030405") == 1704164645.0


def test_breaches_name_the_table_and_the_bound():
    st = TableStatus("artists", "MERGE_ON_READ", "/lake/artists_mor", True, freshness_seconds=120.0, backlog_files=3)
    assert breaches(st, Bounds(max_freshness_seconds=60, max_backlog_files=2)) == [
        "artists (MERGE_ON_READ): freshness 120s > 60s", "artists (MERGE_ON_READ): backlog 3 file(s) > 2"]
    assert breaches(st, Bounds(max_freshness_seconds=600, max_backlog_files=3)) == []


def test_status_names_the_tables_furthest_behind_first():
    """Issue 38: the oldest unapplied landed file first, then a failed round, then the stalest event applied;
    tables caught up and never fed last, in the pipeline's order."""
    def st(name, behind=0.0, fresh=None, failed=False):
        return TableStatus(name, "COPY_ON_WRITE", f"/lake/{name}", True, behind_seconds=behind,
                           freshness_seconds=fresh, last_failure={"message": "x"} if failed else None)

    rows = [st("quiet_a"), st("stale", fresh=900.0), st("hot", behind=3.0, fresh=4.0), st("quiet_b"),
            st("trickle", behind=40.0, fresh=45.0), st("failing", fresh=10.0, failed=True), st("fresh", fresh=2.0)]
    assert [r.table for r in furthest_behind_first(rows)] == [
        "trickle", "hot", "failing", "stale", "fresh", "quiet_a", "quiet_b"]


def test_rejected_rows_sum_every_commit_that_recorded_them():
    """The rows written with a value their lake type cannot hold (the streamer's per-commit count, summary.py)."""
    from hudi_cdc.common.checkpoints import REJECTED_ROWS_KEY
    from hudi_cdc.jobs.stream.summary import source_position
    from hudi_cdc.lake.status import rejected_rows

    assert source_position({"n": 5, "rejected": 0}) == {}
    assert source_position({"rejected": 2}) == {REJECTED_ROWS_KEY: "2"}
    metas = [{"extraMetadata": {REJECTED_ROWS_KEY: "2"}}, {"extra_metadata": {REJECTED_ROWS_KEY: "3"}}, None,
             {"extraMetadata": {"streamer.checkpoint.key.v2": "1"}}]
    assert rejected_rows(metas) == 5 and rejected_rows([]) == 0


@pytest.fixture
def lake(sample_lake):
    """The session's sample lake (tests/plugins/query_fixtures.py), shared with tests/query."""
    return sample_lake


def _landed_max(lake, field):
    values = []
    for root, _, files in os.walk(lake.pipeline.topic_dir("artists").replace("file://", "")):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                values.extend(r[field] for r in fastavro.reader(fh))
    return max(values)


@pytest.mark.spark
def test_status_reports_commits_checkpoint_and_source_position(lake):
    rows = {r.table_type: r for r in pipeline_status(lake.pipeline, "artists")}
    assert set(rows) == {"COPY_ON_WRITE", "MERGE_ON_READ"}
    last_round = {r.base_path: r for r in lake.rounds[-1]["results"]}
    for st in rows.values():
        assert st.exists and st.commits >= 6 and st.inflight == []
        assert st.checkpoint == last_round[st.base_path].checkpoint
        assert st.source_ts_ms == _landed_max(lake, "__source_ts_ms")
        assert st.source_ordering == str(_landed_max(lake, "__lsn"))
        assert st.backlog_files == 0 and st.backlog_bytes == 0
        assert st.files > 0 and st.small_files == st.files  # sample files are tiny
    assert rows["COPY_ON_WRITE"].pending_compactions is None
    mor = rows["MERGE_ON_READ"]
    assert mor.pending_compactions == 0
    assert mor.deltacommits_since_compaction is not None and mor.deltacommits_since_compaction < 3


@pytest.mark.spark
def test_status_backlog_bounds_and_failures_through_the_cli(lake, capsys):
    topic_dir = lake.pipeline.topic_dir("artists").replace("file://", "")
    landed = sorted(os.path.join(r, f) for r, _, fs in os.walk(topic_dir) for f in fs)
    extra = os.path.join(os.path.dirname(landed[-1]), "moma.public.artists+0+9999999999.avro")
    shutil.copyfile(landed[-1], extra)
    os.utime(extra, (time.time() + 5, time.time() + 5))
    try:
        code = main(["--config", lake.config, "status", "--table", "artists", "--type", "cow", "-o", "json",
                     "--max-backlog-files", "0"])
        out = json.loads(capsys.readouterr().out)
        assert code == 1
        assert out[0]["backlog_files"] == 1 and out[0]["backlog_bytes"] == os.path.getsize(extra)
        assert out[0]["breaches"] == ["artists (COPY_ON_WRITE): backlog 1 file(s) > 0"]
        assert main(["--config", lake.config, "status", "--table", "artists", "--max-backlog-files", "1"]) == 0
        capsys.readouterr()
        record_failure(lake.pipeline, "artists", "MERGE_ON_READ", "stream-artists", "Hudi write failed: disk full")
        assert main(["--config", lake.config, "status", "--table", "artists", "--type", "mor", "-o", "json"]) == 1
        out = json.loads(capsys.readouterr().out)
        assert out[0]["last_failure"]["message"] == "Hudi write failed: disk full"
    finally:
        os.remove(extra)
        shutil.rmtree(failures_dir(lake.pipeline), ignore_errors=True)  # the shared lake as it was


@pytest.mark.spark
def test_report_figures_equal_status_on_the_pipeline_tables(lake, tmp_path):
    """`report` over the pipeline's tables (the streamer wrote them): the page's figures are status's."""
    from hudi_cdc.report import pipeline_report
    from tests.report.test_report import _cells

    page, tables = pipeline_report(lake.pipeline, tmp_path, "artists")
    cells = _cells(page.read_text())
    for st in pipeline_status(lake.pipeline, "artists"):
        label = f"artists_{'cow' if st.table_type == 'COPY_ON_WRITE' else 'mor'}"
        summary = cells[(label, None)]
        assert summary["commits"] == st.commits and summary["files"] == st.files
        assert summary["source_ts_ms"] == st.source_ts_ms is not None
        assert summary["pending_compactions"] == (st.pending_compactions or 0)
        report = next(r for r in tables if r.label == label)
        writes = [p for p in report.commits if not p.compaction]
        assert writes[-1].source_ts_ms == st.source_ts_ms and writes[-1].freshness_seconds > 0
