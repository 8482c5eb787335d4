"""`hudi-cdc inspect` on tables the pipeline itself writes: the MoMA artists sample landed, bootstrapped
(BULK_INSERT) and streamed (--once) through the hudi-cdc CLI (Hudi 1.2.0; the jobs on the shared SparkSession,
tests/plugins/inprocess_jobs.py), then read by
`inspect` (hudi-rs) and compared with Hudi's own JVM reading (show_commits / stats_wa procedures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hudi_cdc import sample
from hudi_cdc.inspect import commit_rows, compaction_rows, open_table, read_timeline, write_amplification
from tests.cli import run_cli, run_main
from tests.plugins.inprocess_jobs import jobs_on
from tests.plugins.inspect_fixtures import jvm_procedure

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def hudi_cdc(cwd: Path, *args: str) -> str:
    proc = run_cli(*args, cwd=cwd)
    assert proc.returncode == 0, f"hudi-cdc {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def pipeline_dir(tmp_path_factory, spark) -> Path:
    """The sample pipeline trimmed to the artists table (1 GB driver): sample, bootstrap, changes, stream."""
    d = tmp_path_factory.mktemp("pipeline")
    hudi_cdc(d, "init", str(d))
    cfg = d / "hudi-cdc.yaml"
    text = cfg.read_text().replace("driver_memory: 2g", "driver_memory: 1g")
    cfg.write_text(text[:text.index("  artworks:")])
    hudi_cdc(d, "sample", "moma")
    with jobs_on(spark) as ran:
        run_main("bootstrap", cwd=d)
        hudi_cdc(d, "sample", "moma", "--stage", "changes")
        run_main("stream", "--table", "artists", "--once", cwd=d)
    assert ran == ["session", "session"], ran
    return d


@pytest.mark.parametrize("ttype", ["cow", "mor"])
def test_inspect_commits_of_a_pipeline_table_agree_with_hudi(pipeline_dir, spark, ttype):
    out = json.loads(hudi_cdc(pipeline_dir, "inspect", "commits", "--table", "artists", "--type", ttype,
                              "--output", "json"))
    path = str(pipeline_dir / "lake" / f"artists_{ttype}")
    assert out == json.loads(json.dumps(commit_rows(open_table(path))))
    assert out[0]["operation"] == "BULK_INSERT" and out[0]["records_inserted"] == 15089
    # the bootstrap's commit and the stream round's (delta) commit; table version 6 (hudi.table_version's
    # default) keeps no completion time on disk (layout 1: <requested>.<action>)
    assert "hoodie.table.version=6" in (Path(path) / ".hoodie" / "hoodie.properties").read_text()
    assert len(out) == 2 and all(r["completion_time"] is None for r in out)

    jvm = list(reversed(jvm_procedure(spark, "show_commits", path)))
    assert [(r["requested_time"], r["action"], r["bytes_written"], r["files_added"],
             r["files_updated"], r["partitions_written"], r["records_written"], r["records_updated"],
             r["write_errors"]) for r in out] == [
        (j["commit_time"], j["action"], j["total_bytes_written"], j["total_files_added"],
         j["total_files_updated"], j["total_partitions_written"], j["total_records_written"],
         j["total_update_records_written"], j["total_errors"]) for j in jvm]

    wa = write_amplification(open_table(path))
    assert [(r["requested_time"], r["records_upserted"], r["records_written"], r["write_amplification"])
            for r in wa] == [(r["commit_time"], r["total_upserted"], r["total_written"],
                              r["write_amplification_factor"]) for r in jvm_procedure(spark, "stats_wa", path)]


def test_stream_round_carries_the_seed_changes(pipeline_dir):
    """Artist 299: five updates (one moves it from American to German) then a delete, in one stream round."""
    rows = commit_rows(open_table(str(pipeline_dir / "lake" / "artists_cow")))
    deletes = sum(r["__op"] == "d" for f in sample.change_files() if f.table == "artists" for r in f.records)
    assert [r["records_deleted"] for r in rows] == [0, deletes] and deletes == 1
    mor = open_table(str(pipeline_dir / "lake" / "artists_mor"))
    assert all(i.state == "COMPLETED" for i in read_timeline(mor) if not i.is_compaction)
    # one delta commit, compaction only after 5 (compaction_delta_commits' default): none yet
    assert compaction_rows(mor) == []
