"""A real Spark standalone cluster (tests/plugins/spark_cluster.py: a master and one worker of 1 core
and 1 GiB from the pyspark wheel) runs `hudi-cdc bootstrap` and `stream --once` through the CLI with
spark.master spark://..., landing and lake on the local S3 endpoint (s3proxy). The executors write
the tables' files over s3a: the jars reach them through spark.jars, the s3a settings through
spark.hadoop.*, the keys through the worker's own environment (never through the application). The
tables are read back with hudi-rs (no JVM) and equal the replay of the landed events."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from hudi_cdc import sample, storage
from hudi_cdc.config import load_pipeline
from hudi_cdc.reader import read_table, rows_by_key
from tests.cli import run_cli

pytestmark = [pytest.mark.cluster, pytest.mark.s3, pytest.mark.e2e]
ROOT = Path(__file__).resolve().parents[1]

PIPELINE = """\
pipeline: moma
source:
  root: s3://{bucket}/landing/topics
lake:
  root: s3://{bucket}/lake
storage:
  s3_endpoint: {endpoint}
spark:
  master: {master}
  driver_memory: 1g
  executor_memory: 1g
  shuffle_partitions: 2
  conf:
    spark.cores.max: "1"
tables:
  artists:
    topic: moma.public.artists
    record_key: artist_id
    ordering_field: __lsn
    partition_field: nationality
    table_types: [COPY_ON_WRITE, MERGE_ON_READ]
    deletes: hard
"""


def _cli(base: Path, *args) -> subprocess.CompletedProcess:
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert key in os.environ  # the driver's own S3 calls (listing, checkpoint) find them here
    return run_cli(*args, cwd=base, timeout=1500)


def test_bootstrap_and_stream_on_a_standalone_cluster(spark_cluster, s3_endpoint, s3_bucket, tmp_path):
    (tmp_path / "hudi-cdc.yaml").write_text(PIPELINE.format(bucket=s3_bucket, endpoint=s3_endpoint,
                                                            master=spark_cluster.master_url))
    times = {}
    for step, args in (("sample", ("sample", "moma", "--stage", "snapshot")),
                       ("bootstrap", ("bootstrap",)),
                       ("changes", ("sample", "moma", "--stage", "changes")),
                       ("stream", ("stream", "--table", "artists", "--once"))):
        t0 = time.monotonic()
        proc = _cli(tmp_path, *args)
        times[step] = round(time.monotonic() - t0, 1)
        assert proc.returncode == 0, f"{step} failed ({proc.returncode}): {proc.stderr[-3000:]}"
    print(f"standalone cluster on S3, seconds: {times}")

    logs = sorted((tmp_path / ".hudi-cdc" / "logs").glob("*.log"))
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    assert f'"--master", "{spark_cluster.master_url}"' in text  # the argv the log records
    executors = list(spark_cluster.work_dir.glob("app-*/*/stderr"))
    assert executors, "no executor ran on the worker"
    assert "hudi-cdc-local-secret" not in text  # no key in the application's argv or output

    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    landing = tmp_path / "landing"
    for uri, _, _ in storage.walk_files(p.source_root):
        path = landing / uri[len(p.source_root) + 1:]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(storage.read_bytes(uri) or b"")
    want = sample.expected_state(landing, "artists")
    cols = [c for c in next(iter(want.values())) if c != "__source_ts_ms"]
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        got = rows_by_key(read_table(p.base_path("artists", table_type)), "artist_id")
        assert set(got) == set(want), table_type
        bad = [k for k in want if any(got[k][c] != want[k][c] for c in cols)]
        assert not bad, f"{table_type}: {len(bad)} rows differ, e.g. {bad[:3]}"
