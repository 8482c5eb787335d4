"""S3 end to end on the real local endpoint (s3proxy, tests/plugins/s3.py): landing and lake on
s3://, bootstrap -> stream --once through the CLI (spark-submit with hadoop-aws), read back with
hudi-rs; an endpoint that is down or a missing bucket is one line naming it, and nothing is written."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path

import pytest

from hudi_cdc.common import s3
from hudi_cdc.config import load_pipeline
from hudi_cdc.lake.reader import read_table, rows_by_key
from tests.cli import run_cli
from tests.plugins.s3 import assert_artists_equal_the_replay, download, run_sample_steps, sample_pipeline_on_s3

pytestmark = pytest.mark.s3

SETTINGS = """\
storage:
  s3_endpoint: {endpoint}
spark:
  master: local[2]
  driver_memory: 2g
  shuffle_partitions: 2
"""


def cli(*args, cwd, check=False, env=None):
    return run_cli(*args, cwd=cwd, env=env, check=check)


def _workspace(tmp: Path, bucket: str, endpoint: str) -> Path:
    (tmp / "hudi-cdc.yaml").write_text(sample_pipeline_on_s3(bucket, SETTINGS.format(endpoint=endpoint)))
    return tmp


def _objects(bucket: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects(f"s3://{bucket}")]


@pytest.fixture(scope="module")
def s3_run(s3_endpoint, tmp_path_factory):
    """sample -> bootstrap -> changes -> stream --once, all on S3; the seconds each step took."""
    bucket = f"e2e-{int(time.time())}"
    s3.client().create_bucket(Bucket=bucket)
    d = _workspace(tmp_path_factory.mktemp("s3run"), bucket, s3_endpoint)
    times = run_sample_steps(d)
    print(f"S3 run seconds: {times}")
    return d, bucket, times


def test_landing_is_in_the_sinks_layout(s3_run):
    _, bucket, _ = s3_run
    keys = _objects(bucket)
    landed = [k for k in keys if k.startswith("landing/topics/moma.public.artists/partition=0/")]
    assert landed and all(k.endswith(".avro") and "+0+" in k for k in landed)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_tables_on_s3_equal_the_replayed_events(s3_run, table_type, tmp_path):
    d, bucket, _ = s3_run
    p = load_pipeline(d / "hudi-cdc.yaml")
    base = p.base_path("artists", table_type)
    assert base.startswith(f"s3://{bucket}/lake/")
    assert_artists_equal_the_replay(base, download(p.source_root, tmp_path / "landing"))


def test_show_and_inspect_read_s3_tables(s3_run):
    d, _, _ = s3_run
    show = cli("show", "--table", "artists", "--type", "mor", "--key", "1", "-o", "json", cwd=d)
    assert show.returncode == 0, show.stderr
    assert '"artist_id": 1' in show.stdout
    for what in ("commits", "files", "schema", "timeline"):
        info = cli("inspect", what, "--table", "artists", "--type", "mor", "-o", "json", cwd=d)
        assert info.returncode == 0, f"inspect {what}: {info.stderr}"
    query = cli("query", "history", "--table", "artists", "--type", "mor", "--key", "1", "--engine", "native",
                "-o", "json", cwd=d)
    assert query.returncode == 0, query.stderr
    assert '"artist_id": 1' in query.stdout
    status = cli("status", "-o", "json", cwd=d)
    assert status.returncode == 0, status.stderr
    assert '"backlog_files": 0' in status.stdout.replace('"backlog_files":0', '"backlog_files": 0')


def test_spark_query_reads_s3_tables(s3_run):
    """`query --engine spark` (Hudi's Spark datasource over s3a, one spark-submit): the extended tier's, as
    HiveServer2 reads the same tables over s3a in the default tier (test_hive_sync_and_hiveserver2_read_s3_tables)."""
    d, _, _ = s3_run
    spark = cli("query", "history", "--table", "artists", "--type", "cow", "--key", "1", "--engine", "spark",
                "-o", "json", cwd=d)
    assert spark.returncode == 0, spark.stderr[-2000:]
    assert '"artist_id": 1' in spark.stdout


def test_second_stream_with_nothing_new_commits_nothing(s3_run):
    d, bucket, _ = s3_run
    instant = re.compile(r"/\.hoodie/(timeline/)?\d{14,}[^/]*$")  # layout 1 (table version 6) or 2
    before = sorted(k for k in _objects(bucket) if instant.search(k))
    assert before
    proc = cli("stream", "--table", "artists", "--type", "cow", "--once", "-o", "json", cwd=d, check=True)
    assert '"skipped": true' in proc.stdout
    assert sorted(k for k in _objects(bucket) if instant.search(k)) == before


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_is_one_line_naming_it(s3_endpoint, tmp_path):
    down = f"http://127.0.0.1:{_free_port()}"
    d = _workspace(tmp_path, "nobucket", down)
    proc = cli("bootstrap", cwd=d)
    assert proc.returncode == 5, proc.stderr
    line = proc.stderr.strip()
    assert line.count("\n") == 0 and down in line and "does not answer" in line
    assert not (d / ".hudi-cdc" / "logs").exists()  # no job started


def test_missing_bucket_is_one_line_and_nothing_is_written(s3_endpoint, s3_bucket, tmp_path):
    d = _workspace(tmp_path, "no-such-bucket-here", s3_endpoint)
    proc = cli("bootstrap", cwd=d)
    assert proc.returncode == 5, proc.stderr
    line = proc.stderr.strip()
    assert line.count("\n") == 0 and "no-such-bucket-here" in line and s3_endpoint in line
    # landing in a bucket that exists, lake in one that does not: refused before anything runs
    (d / "hudi-cdc.yaml").write_text(sample_pipeline_on_s3(s3_bucket, SETTINGS.format(endpoint=s3_endpoint))
                                     .replace(f"s3://{s3_bucket}/lake", "s3://no-such-lake-bucket/lake"))
    cli("sample", "moma", cwd=d, check=True)
    before = _objects(s3_bucket)
    proc = cli("bootstrap", cwd=d)
    assert proc.returncode == 5 and "no-such-lake-bucket" in proc.stderr.strip()
    assert proc.stderr.strip().count("\n") == 0
    assert _objects(s3_bucket) == before


def test_sample_into_s3_is_idempotent(s3_endpoint, s3_bucket, tmp_path):
    d = _workspace(tmp_path, s3_bucket, s3_endpoint)
    cli("sample", "moma", cwd=d, check=True)
    first = _objects(s3_bucket)
    cli("sample", "moma", cwd=d, check=True)
    assert _objects(s3_bucket) == first and first


@pytest.mark.hive
def test_hive_sync_and_hiveserver2_read_s3_tables(s3_run, hive_stack, tmp_path):
    """`hudi-cdc hive sync` over s3:// tables: HiveSyncTool (s3a on its classpath), the metastore
    (checks the s3:// table locations itself) and the thrift server (reads them) all reach the endpoint;
    what HiveServer2 returns equals what hudi-rs reads from S3."""
    from hudi_cdc.hive import HiveClient

    d, bucket, _ = s3_run
    sync = cli("sync", "--metastore", hive_stack.metastore_uri, "-o", "json", cwd=d)
    assert sync.returncode == 0, sync.stderr[-2000:]
    p = load_pipeline(d / "hudi-cdc.yaml")
    hive = HiveClient(hive_stack.host, hive_stack.thrift_port)
    for table_type, hive_table in (("COPY_ON_WRITE", "artists"), ("MERGE_ON_READ", "artists_rt")):
        name = f"{p.hive_db(table_type)}.{hive_table}"
        location = next(r for r in hive.query(f"DESCRIBE FORMATTED {name}") if r["col_name"] == "Location")
        assert location["data_type"].startswith(f"s3://{bucket}/lake/"), location
        want = rows_by_key(read_table(p.base_path("artists", table_type)), "artist_id")
        got = {r["artist_id"]: r["name"] for r in hive.query(f"SELECT artist_id, name FROM {name}")}
        assert len(got) == len(want) > 0
        assert {k: got.get(k) for k in want} == {k: r["name"] for k, r in want.items()}
