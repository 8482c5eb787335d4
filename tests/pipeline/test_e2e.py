"""The README's main job through the real CLI: spark-submit, Hudi 1.2.0 bundle, hudi-rs checks.

One module-scoped run of `hudi-cdc demo` (sample -> bootstrap -> changes -> stream --once); the
tests then compare every table with the state replayed from the landed events, and drive the CLI's
error paths against that workspace."""

import json
import os
import sys

import pytest

from hudi_cdc import sample
from hudi_cdc.config import load_pipeline, uri_to_path
from hudi_cdc.lake.reader import read_table, rows_by_key
from tests.cli import run_cli
from tests.shared import timeline_files

pytestmark = pytest.mark.e2e

KEYS = {"artists": "artist_id", "artworks": "artwork_id"}


def cli(*args, cwd, env=None, check=False):
    return run_cli(*args, cwd=cwd, env=env, check=check)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    proc = cli("demo", str(d), cwd=d, check=True)
    return d, proc


def test_demo_prints_the_seed_story(demo):
    d, proc = demo
    out = proc.stdout
    assert "Picador (La Pique)" in out and "1960" in out and "2009-04-19" in out
    assert "(no row: artists 299 is deleted)" in out


@pytest.mark.parametrize("table", ["artists", "artworks"])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tables_equal_the_replayed_events(demo, table, table_type):
    d, _ = demo
    p = load_pipeline(d / "hudi-cdc.yaml")
    want = sample.expected_state(uri_to_path(p.source_root), table)
    got = rows_by_key(read_table(p.base_path(table, table_type)), KEYS[table])
    assert set(got) == set(want)
    cols = [c for c in next(iter(want.values())) if c != "__source_ts_ms"] + ["__source_ts_ms"]
    bad = [k for k in want if any(got[k][c] != want[k][c] for c in cols)]
    assert not bad, f"{len(bad)} rows differ, e.g. {bad[:3]}"


def test_bootstrap_refuses_existing_tables(demo):
    d, _ = demo
    proc = cli("bootstrap", "--table", "artists", cwd=d)
    assert proc.returncode == 6
    assert proc.stderr.strip().count("\n") == 0
    assert "table artists (COPY_ON_WRITE) already exists" in proc.stderr and "--force" in proc.stderr


def test_stream_once_with_nothing_new_commits_nothing(demo):
    d, _ = demo
    timeline = d / "lake" / "artists_cow"
    before = timeline_files(timeline)
    proc = cli("stream", "--table", "artists", "--type", "cow", "--once", "-o", "json", cwd=d, check=True)
    assert '"skipped": true' in proc.stdout
    assert timeline_files(timeline) == before


def test_corrupt_file_fails_by_name_and_leaves_table(demo):
    d, _ = demo
    topic = d / "landing" / "topics" / "moma.public.artworks" / "partition=0"
    good = sorted(topic.glob("*.avro"))[-1]
    bad = topic / "moma.public.artworks+0+0000009999.avro"
    bad.write_bytes(good.read_bytes()[:-25])
    try:
        timelines = [d / "lake" / f"artworks_{s}" for s in ("cow", "mor")]
        before = [timeline_files(t) for t in timelines]
        # every table's round runs (issue 36): artists' go through, artworks' both fail by name
        proc = cli("stream", "--all", "--once", "-o", "json", cwd=d)
        assert proc.returncode == 3, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(lines) == 1 and "corrupt or truncated Avro file" in lines[0] and bad.name in lines[0]
        assert lines[0].startswith("error: stream-all: 2 of 4 table job(s) failed")
        assert "artworks (COPY_ON_WRITE): " in lines[0] and "artworks (MERGE_ON_READ): " in lines[0]
        assert "the 2 other(s) went through" in lines[0] and "log:" in lines[0]
        shown = json.loads(proc.stdout)  # the tables that went through, as usual
        assert sorted(r["table"] for r in shown) == ["moma_cow.artists", "moma_mor.artists"]
        assert [timeline_files(t) for t in timelines] == before
    finally:
        bad.unlink()


def test_cli_input_errors_are_one_line(demo, tmp_path):
    d, _ = demo
    unknown = cli("stream", "--table", "painters", "--once", cwd=d)
    assert unknown.returncode == 2 and "unknown table 'painters'" in unknown.stderr
    head = "pipeline: x\nsource: {root: nowhere}\nlake: {root: lake}\n"
    (tmp_path / "hudi-cdc.yaml").write_text(head + "tables: {a: {topic: t}}\n")
    invalid = cli("bootstrap", cwd=tmp_path)
    assert invalid.returncode == 2 and "tables.a.record_key: field required" in invalid.stderr
    assert "hudi-cdc.yaml" in invalid.stderr
    (tmp_path / "hudi-cdc.yaml").write_text(head + "tables: {a: {topic: t, record_key: k}}\n")
    missing = cli("bootstrap", cwd=tmp_path)
    assert missing.returncode == 3 and "table a: landing directory" in missing.stderr
    assert "nowhere/t/partition=0 does not exist" in missing.stderr
    for proc in (unknown, invalid, missing):
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_missing_java_is_reported(demo, tmp_path):
    d, _ = demo
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    bindir = tmp_path / "bin"  # a PATH with python but no java
    bindir.mkdir()
    os.symlink(sys.executable, bindir / "python")
    env["PATH"] = str(bindir)
    env["HUDI_CDC_JAVA_DIRS"] = ""  # and none in the usual install folders
    proc = cli("bootstrap", "--force", "--table", "artists", cwd=d, env=env)
    assert proc.returncode == 5 and "Spark needs Java 17+; found: none" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert (d / "lake" / "artists_cow" / ".hoodie").exists()  # nothing was removed
